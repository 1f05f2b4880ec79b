# SPDX-License-Identifier: MIT
"""Choosing the fast-tier (DRAM) set under a budget.

Policies:
  cost             exact 0/1 knapsack on peak_bytes maximising modelled
                   benefit (Pareto-frontier dynamic programme); with an
                   objects timeline, the lifetime-aware variant packs sites
                   that are never live at the same time into the same bytes
                   (exact branch and bound over the timeline's constraints).
  write-intensity  rank by stores per byte (the classic RW split)
  misses           rank by LLC misses per byte
  size             smallest peak_bytes first
Greedy policies walk their ranking and take every site that still fits.

After the cost policy's knapsack, the split fill (split_fill) may give a
site that did not fit a DRAM head: the first h bytes of each of its objects
in DRAM, the rest in the slow tier (placement.json `dram_bytes`); then
more_heads gives further sites heads where DRAM is still free.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Sequence

import numpy as np
import pandas as pd

from tierwise.cost import SLICE_GRID

if TYPE_CHECKING:
    from tierwise.formats.tiers import TierModel
    from tierwise.reader import Profile

POLICIES = ["cost", "write-intensity", "misses", "size"]
FRONTIER_LIMIT = 500_000
KNAPSACK_WORK_LIMIT = 3_000_000  # frontier entries, summed over the items (~5 s)
BNB_NODE_LIMIT = 2_000_000
BNB_WORK_LIMIT = 2 * 10**9  # node limit x live-matrix cells
DOMINANCE_MAX_COLUMNS = 4000
DOMINANCE_MAX_WORK = 2 * 10**8
LIFETIME_EXACT_MAX = 64  # candidates the lifetime-aware search proves optimal
PAGE = 4096  # the runtime splits an object at a page boundary
SPLIT_MIN_HEAD = 64 << 10  # smaller heads are not worth a split object (budgets >= 1 MiB)
SPLIT_HEAD_SHARE = 16  # under a smaller budget, the least head is budget / 16 (min_head)
SPLIT_MAX_HEADS = 256  # the runtime keeps at most 256 split objects live at once
MORE_HEADS_WORK_LIMIT = 2 * 10**8  # more_heads: eligible sites x instants, all rounds
SPLIT_CANDIDATES = 8  # sites (by benefit per byte) the search tries as the split one
SPLIT_NODE_LIMIT = 20_000  # search nodes per candidate
SPLIT_WORK_LIMIT = 2 * 10**8  # search nodes x live-matrix cells, all candidates
PLAN_INSTANTS = 32  # instants of the plan written to placement.json (planned_live)


@dataclass
class Selection:
    policy: str
    budget: int
    fast: set  # site indices placed in the fast tier
    used_bytes: int  # the most fast-tier bytes live at one instant, head included
    notes: list = field(default_factory=list)
    partial: dict = field(default_factory=dict)  # site index -> DRAM head bytes
    # site index -> its DRAM bytes at each instant where the plan's DRAM use
    # can peak (planned_timeline); empty without a timeline
    timeline: dict = field(default_factory=dict)

    def fractions(self, costs: pd.DataFrame) -> dict:
        """Site -> fraction of its accesses served by the fast tier (what
        cost.placement_seconds takes): 1 for the fast sites, for a split one
        its head's share of its misses (cost.head_share of head / peak
        bytes: that fraction itself where misses were not counted by
        slice)."""
        from tierwise.cost import head_share

        f = {s: 1.0 for s in self.fast}
        for s, h in self.partial.items():
            curve = costs.at[s, "miss_curve"] if "miss_curve" in costs else None
            f[s] = float(head_share(curve, h / max(int(costs.at[s, "bytes"]), 1)))
        return f


def parse_budget(text: str, total_bytes: int) -> int:
    """'--dram-budget' value (sizes.parse_share): SIZE, 0, or N% of the
    peak (live) footprint `total_bytes`."""
    from tierwise.sizes import parse_share

    v = parse_share(text, "--dram-budget")
    return int(total_bytes * v / 100) if isinstance(v, float) else v


def sum_of_peaks(profile: Profile) -> int:
    """The sum of the placeable sites' peak_bytes: the footprint if no two
    sites' peaks are ever apart (an upper bound of peak_footprint)."""
    return int(profile.placeable["peak_bytes"].fillna(0).sum())


def peak_footprint(profile: Profile) -> int:
    """Peak live footprint: the largest total of placeable bytes live at one
    instant, over every run's objects timeline (DESIGN: a budget of "N% of
    peak footprint"). Bytes a site has beyond its tracked objects count as
    live throughout (as in the lifetime-aware packing), so without a
    timeline this is the sum of the sites' peak_bytes, an upper bound.
    The same figure as the largest column total of live_matrix(), by one
    sweep over the allocation and free events (profiles of Python or MPI
    programs have ~10^4 sites and objects)."""
    placeable = profile.placeable
    peak = placeable["peak_bytes"].fillna(0).astype("float64")
    o = profile.objects
    if not o.empty:
        o = o[o["site"].isin(placeable.index)]
    if o.empty or peak.sum() == 0:
        return sum_of_peaks(profile)
    tracked_max = pd.Series(0.0, index=placeable.index)
    best = 0.0
    for _, g in o.groupby("profile"):
        size = g["size"].to_numpy(dtype="float64")
        site = g["site"].to_numpy(dtype="int64")
        freed = g["free_time"].notna().to_numpy()
        ft = g["free_time"].astype("Float64").to_numpy(dtype="float64", na_value=np.nan)
        ev = pd.DataFrame(
            {
                "t": np.concatenate([g["alloc_time"].to_numpy(dtype="float64"), ft[freed]]),
                "d": np.concatenate([size, -size[freed]]),
                "site": np.concatenate([site, site[freed]]),
                "alloc": np.arange(len(size) + int(freed.sum())) < len(size),
            }
        )
        # live bytes after every event at an instant, at allocation instants
        tot = ev.groupby("t").agg(d=("d", "sum"), alloc=("alloc", "any"))
        best = max(best, float(tot["d"].cumsum()[tot["alloc"]].max()))
        per = ev.groupby(["site", "t"]).agg(d=("d", "sum"), alloc=("alloc", "any"))
        per["live"] = per.groupby(level="site")["d"].cumsum()
        m = per[per["alloc"]].groupby(level="site")["live"].max()
        tracked_max = np.maximum(tracked_max, m.reindex(tracked_max.index, fill_value=0.0))
    return int(best + np.maximum(peak - tracked_max, 0).sum())


def knapsack(
    weights: Sequence[int] | np.ndarray, values: Sequence[float] | np.ndarray, capacity: int
) -> tuple[float, set, bool]:
    """Exact 0/1 knapsack. Returns (best value, set of chosen indices, exact).
    Items with value <= 0 are never taken; zero-weight items always are.
    Dynamic programme over the Pareto frontier of (weight, value) pairs; if
    the frontier would exceed FRONTIER_LIMIT, or the frontier entries
    processed KNAPSACK_WORK_LIMIT (thousands of items), it falls back to
    density order and returns exact=False."""
    w = [int(x) for x in weights]
    v = [float(x) for x in values]
    take0 = {i for i in range(len(w)) if v[i] > 0 and w[i] == 0}
    items = [i for i in range(len(w)) if v[i] > 0 and 0 < w[i] <= capacity]
    if sum(w[i] for i in items) <= capacity:
        chosen = take0 | set(items)
        return sum(v[i] for i in chosen), chosen, True
    # The Pareto frontier as arrays (numpy: 12,000-site MPI profiles): weight
    # and value increasing; each entry names a node of the choice tree
    # (parent node, item added) from which the chosen set is read back.
    fw, fv = np.zeros(1, dtype="int64"), np.zeros(1)
    fnode = np.zeros(1, dtype="int64")
    parents, added = [np.array([-1])], [np.array([-1])]
    nodes, work = 1, 0
    for i in items:
        work += len(fw)
        if work > KNAPSACK_WORK_LIMIT:
            return _density_fill(w, v, capacity, take0)
        ok = fw + w[i] <= capacity
        k = int(ok.sum())
        parents.append(fnode[ok])
        added.append(np.full(k, i))
        mw = np.concatenate([fw, fw[ok] + w[i]])
        mv = np.concatenate([fv, fv[ok] + v[i]])
        mn = np.concatenate([fnode, np.arange(nodes, nodes + k)])
        nodes += k
        order = np.lexsort((-mv, mw))  # stable: the older entry first on ties
        mw, mv, mn = mw[order], mv[order], mn[order]
        best = np.maximum.accumulate(np.concatenate([[-1.0], mv[:-1]]))
        keep = mv > best
        fw, fv, fnode = mw[keep], mv[keep], mn[keep]
        if len(fw) > FRONTIER_LIMIT:
            return _density_fill(w, v, capacity, take0)
    parent, item = np.concatenate(parents), np.concatenate(added)
    chosen, node = set(take0), int(fnode[-1])
    while node > 0:
        chosen.add(int(item[node]))
        node = int(parent[node])
    return float(fv[-1]) + sum(v[i] for i in take0), chosen, True


def _density_fill(w, v, capacity, take0):
    order = sorted((i for i in range(len(w)) if v[i] > 0 and w[i] > 0), key=lambda i: -v[i] / w[i])
    chosen, used = set(take0), 0
    for i in order:
        if used + w[i] <= capacity:
            chosen.add(i)
            used += w[i]
    return sum(v[i] for i in chosen), chosen, False


def _peak_instants(o: pd.DataFrame) -> np.ndarray:
    """Allocation instants not followed by another allocation before the
    next free: at any other instant the next one has at least the same live
    bytes for every site, so only these can bind."""
    at = np.unique(o["alloc_time"].to_numpy(dtype="int64"))
    ft = np.sort(o["free_time"].dropna().to_numpy(dtype="int64"))
    nxt = np.append(at[1:], np.iinfo(np.int64).max)
    frees_between = np.searchsorted(ft, nxt, side="right") - np.searchsorted(ft, at, side="right")
    keep = frees_between > 0
    keep[-1] = True
    return at[keep]


def _prune_dominated(m: np.ndarray) -> np.ndarray:
    """Drop repeated columns, and columns that another column bounds
    elementwise (skipped when that search would cost more than
    DOMINANCE_MAX_WORK cell comparisons: pruning only speeds the search)."""
    first: dict = {}
    for j in range(m.shape[1]):
        first.setdefault(m[:, j].tobytes(), j)
    m = m[:, np.array(sorted(first.values()), dtype=np.intp)]
    if m.shape[1] > DOMINANCE_MAX_COLUMNS or m.size * m.shape[1] > DOMINANCE_MAX_WORK:
        return m
    order = np.argsort(-m.sum(axis=0), kind="stable")
    kept = np.empty_like(m)
    k = 0
    for j in order:
        c = m[:, j : j + 1]
        if k == 0 or not np.any(np.all(kept[:, :k] >= c, axis=0)):
            kept[:, k] = m[:, j]
            k += 1
    return kept[:, :k]


def live_matrix(objects: pd.DataFrame, sites: pd.Index, peak: pd.Series) -> np.ndarray:
    """Live bytes of each site (rows, in `sites` order) at the instants of
    every profile's timeline where some subset's live bytes can peak
    (columns). Bytes a site has beyond its tracked objects (objects below
    objects_min_bytes) count as live all the time. Dominated columns are
    dropped: only instants that could bind."""
    cols = []
    row_of = {s: r for r, s in enumerate(sites)}
    for _, o in objects.groupby("profile"):
        o = o[o["site"].isin(sites)]
        if o.empty:
            continue
        points = _peak_instants(o)
        block = np.zeros((len(sites), len(points)))
        for s, so in o.groupby("site"):  # one pass, not one filter per site
            r = row_of[s]
            size = so["size"].to_numpy(dtype="float64")
            at = so["alloc_time"].to_numpy(dtype="int64")
            ft = so["free_time"].astype("Float64").fillna(np.inf).to_numpy(dtype="float64")
            ia, iff = np.argsort(at), np.argsort(ft)
            alloc_cum = np.concatenate([[0], np.cumsum(size[ia])])
            free_cum = np.concatenate([[0], np.cumsum(size[iff])])
            block[r] = (
                alloc_cum[np.searchsorted(at[ia], points, side="right")]
                - free_cum[np.searchsorted(ft[iff], points, side="right")]
            )
        cols.append(block)
    if not cols:
        return peak.loc[sites].to_numpy(dtype="float64")[:, None]
    m = np.hstack(cols)
    residual = np.maximum(peak.loc[sites].to_numpy(dtype="float64") - m.max(axis=1), 0)
    return _prune_dominated(m + residual[:, None])


def _greedy_lifetime(live: np.ndarray, v: np.ndarray, items, capacity: int):
    """Items in order of value per peak live byte, each taken if it still
    fits at every instant: (value, chosen)."""
    peak = live.max(axis=1).clip(min=1)
    usage, chosen = np.zeros(live.shape[1]), set()
    for i in sorted(items, key=lambda i: (-v[i] / peak[i], i)):
        if np.all(usage + live[i] <= capacity):
            usage += live[i]
            chosen.add(int(i))
    return float(v[sorted(chosen)].sum()) if chosen else 0.0, chosen


def lifetime_knapsack(
    live: np.ndarray, values: Sequence[float] | np.ndarray, capacity: int
) -> tuple[float, set, bool]:
    """Maximise total value subject to: at every column (instant) of `live`,
    the live bytes of the chosen rows fit `capacity`. Exact depth-first
    branch and bound for up to LIFETIME_EXACT_MAX candidates; above that
    (programs with thousands of small sites: Python, MPI) the better of a
    greedy packing by value density and the plain knapsack on peak bytes
    (feasible at every instant), not proven optimal. Returns (value,
    chosen row set, exact)."""
    v = np.asarray(values, dtype="float64")
    fits = np.all(live <= capacity, axis=1) & (v > 0)
    items = sorted(np.flatnonzero(fits), key=lambda i: -v[i])
    if len(items) > LIFETIME_EXACT_MAX:
        g_value, g_rows = _greedy_lifetime(live, v, items, capacity)
        k_value, k_rows, _ = knapsack(live.max(axis=1)[items], v[items], capacity)
        k_rows = {int(items[j]) for j in k_rows}
        if k_value > g_value:
            return k_value, k_rows, False
        return g_value, g_rows, False
    best: list = [0.0, set()]
    nodes = [0]
    node_limit = min(BNB_NODE_LIMIT, max(10_000, BNB_WORK_LIMIT // max(live.size, 1)))
    exact = [True]

    def dfs(k, usage, value, chosen):
        nodes[0] += 1
        if value > best[0]:
            best[0], best[1] = value, set(chosen)
        if k == len(items) or nodes[0] > node_limit:
            exact[0] = exact[0] and k == len(items)
            return
        rest = [i for i in items[k:] if np.all(usage + live[i] <= capacity)]
        if value + v[rest].sum() <= best[0]:
            return
        i = items[k]
        if np.all(usage + live[i] <= capacity):
            chosen.append(i)
            dfs(k + 1, usage + live[i], value + v[i], chosen)
            chosen.pop()
        dfs(k + 1, usage, value, chosen)

    dfs(0, np.zeros(live.shape[1]), 0.0, [])
    return best[0], best[1], exact[0]


def merge_instants(m: np.ndarray, most: int) -> np.ndarray:
    """At most `most` columns, each the elementwise max of the columns of
    `m` it stands for (so every column of `m` is bounded by one of them:
    whatever fits the merged ones at every instant fits `m`). Greedily
    merges the pair whose merge raises the larger column total least, the
    error that makes a runtime admit fewer sites than the plan. Memory and
    work stay O(rows x columns) per merge: more than 4 x `most` columns are
    first merged in runs of neighbours, and each pair's cost is kept and
    updated only for the column a merge changed."""
    c = np.asarray(m, dtype="float64")
    if c.shape[1] > 4 * most:
        k = -(-c.shape[1] // (4 * most))
        c = np.stack([c[:, j : j + k].max(axis=1) for j in range(0, c.shape[1], k)], axis=1)
    c = c.copy()
    n = c.shape[1]
    tot = c.sum(axis=0)
    cost = np.full((n, n), np.inf)

    def pair_costs(a: int) -> np.ndarray:
        return np.maximum(c[:, [a]], c).sum(axis=0) - np.maximum(tot[a], tot)

    for j in range(n):
        cost[j] = pair_costs(j)
    np.fill_diagonal(cost, np.inf)
    alive = np.ones(n, dtype=bool)
    for _ in range(n - most):
        a, b = (int(x) for x in np.unravel_index(np.argmin(cost), cost.shape))
        c[:, a] = np.maximum(c[:, a], c[:, b])
        tot[a] = c[:, a].sum()
        alive[b] = False
        cost[b, :] = cost[:, b] = np.inf
        row = np.where(alive, pair_costs(a), np.inf)
        row[a] = np.inf
        cost[a, :] = cost[:, a] = row
    return c[:, alive]


def planned_timeline(
    live: np.ndarray,
    rows: Iterable[int],
    heads: dict,
    most: int = PLAN_INSTANTS,
) -> dict:
    """Row -> planned DRAM bytes at each instant where the plan's DRAM use
    can peak: the chosen rows of `live` (whole sites) and each split row's
    head (`heads`: row -> h; min(h, its live bytes)), dominated instants
    dropped, at most `most` of them (merge_instants: never below the plan).
    Empty when one instant is all there is (every site at its peak at once:
    the sum of the planned bytes says the same)."""
    rows = sorted(int(r) for r in rows)
    parts = [live[rows]] if rows else []
    for r, h in sorted(heads.items()):
        parts.append(np.minimum(h, live[r])[None, :])
        rows.append(int(r))
    if not rows or live.shape[1] < 2:
        return {}
    m = _prune_dominated(np.vstack(parts))
    if m.shape[1] > most:
        m = merge_instants(m, most)
    if m.shape[1] < 2:
        return {}
    return {r: [int(x) for x in np.rint(m[k])] for k, r in enumerate(rows)}


def split_supported(model: TierModel) -> bool:
    """The runtime realises a DRAM head (placement.json `dram_bytes`) for
    objects whose tier has a split tail: pmem, kmem and numa:N (the node
    backend; the cxl, numa-remote and auto models name a numa:N slow tier).
    Elsewhere (hbw, a model whose fast tier is not dram) the object would go
    whole to its tier, so the split fill is off."""
    slow = model.slow.name
    return model.fast.name == "dram" and (
        slow in ("pmem", "kmem") or re.fullmatch(r"numa:\d+", slow) is not None
    )


def min_head(capacity: int) -> int:
    """The least DRAM head worth a split object under a budget of
    `capacity` bytes: SPLIT_MIN_HEAD (64 KiB) from a 1 MiB budget up, else
    budget / SPLIT_HEAD_SHARE, a multiple of PAGE and at least one page (a
    small budget: a small hot array still gets a head)."""
    return max(PAGE, min(SPLIT_MIN_HEAD, int(capacity) // SPLIT_HEAD_SHARE // PAGE * PAGE))


def one_at_a_time(profile: Profile, sites: pd.Index) -> pd.Series:
    """Sites whose objects are never live at the same time, so that at any
    instant the site's DRAM bytes under a head h are min(h, its live bytes).
    With a timeline: every allocation of the site is a tracked object (an
    untracked one, under objects_min_bytes, could be live beside them) and
    in each run no object is allocated before the previous ones are freed.
    Without one: a single allocation."""
    allocs = profile.sites.loc[sites, "allocs"]
    o = profile.objects
    if o.empty:
        return (allocs == 1).fillna(False).astype(bool)
    o = o[o["site"].isin(sites)].sort_values(["profile", "site", "alloc_time"], kind="mergesort")
    keys = [o["profile"], o["site"]]
    free = o["free_time"].astype("Float64").fillna(np.inf).astype("float64")
    prev_free = free.groupby(keys).cummax().groupby(keys).shift()
    overlapping = set(o.loc[(o["alloc_time"].astype("float64") < prev_free), "site"])
    tracked = o.groupby("site").size().reindex(sites, fill_value=0)
    same = (tracked == allocs).fillna(False).astype(bool)
    return same & ~sites.isin(list(overlapping))


def split_eligible(profile: Profile, cand: pd.DataFrame) -> pd.Series:
    """Sites of `cand` (rows of cost.site_costs) that may get a DRAM head:
    a benefit, more than a page (a head is a page multiple below the
    object's size), objects one at a time. No least size otherwise: the
    head's least size is relative to the budget (min_head). Not a site the
    profile places whole (a pool's block, Profile.whole)."""
    ok = (cand["benefit"] > 0) & (cand["bytes"] > PAGE) & one_at_a_time(profile, cand.index)
    if profile.whole:
        stacks = profile.sites["stack"].reindex(cand.index)
        ok &= ~stacks.isin(profile.whole).to_numpy()
    return ok


def _head(live_s: np.ndarray, slack: np.ndarray, cap: int, least: int = SPLIT_MIN_HEAD) -> int:
    """The largest head h (a multiple of PAGE, at most cap) with
    min(h, live_s) <= slack at every instant; 0 below `least` (min_head).
    Never grows as slack shrinks (what the search's bound relies on)."""
    bind = live_s > slack
    h = min(cap, int(slack[bind].min())) if bind.any() else cap
    h = h // PAGE * PAGE
    return h if h >= least else 0


def _head_value(v: np.ndarray, size: np.ndarray, curves: Sequence | None) -> Any:
    """(s, h) -> the value of a head of h bytes of row s: v[s] times the
    share of its misses in the first h / size[s] of its objects
    (cost.head_share; curves[s] None or no curves: h / size[s])."""
    from tierwise.cost import head_share

    def value(s: int, h: int) -> float:
        curve = curves[s] if curves is not None else None
        return float(v[s] * head_share(curve, h / max(size[s], 1)))

    return value


def split_fill(
    live: np.ndarray,
    values: Sequence[float],
    sizes: Sequence[int],
    capacity: int,
    rows: Iterable[int],
    eligible: Iterable[int],
    curves: Sequence | None = None,
) -> tuple[Any, ...]:
    """The first split site beside a whole-site selection (more_heads adds
    others where DRAM stays free). A head of h bytes of site s is worth
    values[s] * head_share(curves[s], h / sizes[s]) (cost.head_share: the
    share of its misses in the first h / sizes[s] of its objects; h /
    sizes[s] without a curve, accesses uniform over the bytes): never less
    for a larger head. It must fit where s is live: at every instant (column
    of `live`, whose row s holds the one live object's bytes, see
    one_at_a_time), whole-site bytes + min(h, live[s]) <= capacity; h is a
    multiple of PAGE, at least min_head(capacity) and less than sizes[s]
    (the largest object).

    Three steps, each keeping the best so far (so the result is never below
    the whole-site value of `rows`):
      1. fill: every eligible site not in `rows`, with its largest head
         beside `rows` unchanged;
      2. local improvement, for the SPLIT_CANDIDATES such sites of highest
         value per byte: drop sites of `rows` with a lower value per byte
         that are live together with s, lowest first, each drop kept only
         if the total value grows;
      3. exact search, with at most LIFETIME_EXACT_MAX candidate rows: for
         each of the SPLIT_CANDIDATES eligible sites of highest value per
         byte (in `rows` or not), branch and bound over every whole set of
         the other rows, the value being whole-site value + that head.
    Guarantee: the value is at least that of `rows` plus the best fill. If
    step 3 ran to the end (exact=True) and `rows` is a best whole set (the
    knapsack was exact), it is the maximum over every whole set feasible at
    every instant, with no split site or with one of those SPLIT_CANDIDATES
    sites split with its largest head: with at most that many eligible
    sites, what a brute force over all subsets and split sites finds.
    Returns (value, whole rows, split row or None, head, exact).
    """
    v = np.asarray(values, dtype="float64")
    size = np.asarray(sizes, dtype="float64")
    dens = v / np.maximum(size, 1)
    hv = _head_value(v, size, curves)
    cap = {int(s): (int(size[s]) - 1) // PAGE * PAGE for s in eligible}
    least = min_head(capacity)
    empty = np.zeros(live.shape[1])
    usage_of = lambda rs: live[sorted(rs)].sum(axis=0) if rs else empty
    head = lambda s, usage: _head(live[s], capacity - usage, cap[s], least)
    rows = {int(r) for r in rows}
    best = [float(v[sorted(rows)].sum()) if rows else 0.0, set(rows), None, 0]

    def offer(value, rs, s, h):
        if value > best[0]:
            best[:] = [value, set(rs), s if h else None, h]

    by_density = sorted((int(s) for s in eligible), key=lambda s: (-dens[s], s))
    base, base_v = usage_of(rows), best[0]
    unchosen = [s for s in by_density if s not in rows]
    for s in unchosen:
        h = head(s, base)
        offer(base_v + hv(s, h), rows, s, h)
        if s not in unchosen[:SPLIT_CANDIDATES]:
            continue
        keep, usage, kept_v, value = set(rows), base, base_v, base_v + hv(s, h)
        together = lambda d: np.any((live[d] > 0) & (live[s] > 0))
        for d in sorted(
            (d for d in rows if dens[d] < dens[s] and together(d)), key=lambda d: (dens[d], d)
        ):
            u = usage - live[d]
            trial = kept_v - v[d] + hv(s, head(s, u))
            if trial > value:
                keep.discard(d)
                usage, kept_v, value = u, kept_v - v[d], trial
        offer(value, keep, s, head(s, usage))

    fits = np.flatnonzero((v > 0) & np.all(live <= capacity, axis=1))
    if len(fits) > LIFETIME_EXACT_MAX:
        return best[0], best[1], best[2], best[3], False
    top = by_density[:SPLIT_CANDIDATES]
    node_limit = min(SPLIT_NODE_LIMIT, max(1000, SPLIT_WORK_LIMIT // max(live.size * len(top), 1)))
    exact = True
    for s in top:
        items = sorted((int(i) for i in fits if i != s), key=lambda i: (-v[i], i))
        nodes = [0]

        def dfs(k, usage, value, chosen):
            nodes[0] += 1
            h = head(s, usage)
            offer(value + hv(s, h), chosen, s, h)
            if k == len(items):
                return True
            if nodes[0] > node_limit:
                return False
            rest = np.asarray(items[k:])
            rest = rest[np.all(usage + live[rest] <= capacity, axis=1)]
            if value + v[rest].sum() + hv(s, h) <= best[0]:
                return True  # a head never grows as whole sites are added
            i = items[k]
            done = True
            if np.all(usage + live[i] <= capacity):
                chosen.append(i)
                done = dfs(k + 1, usage + live[i], value + v[i], chosen)
                chosen.pop()
            return dfs(k + 1, usage, value, chosen) and done

        exact = dfs(0, empty, 0.0, []) and exact
    return best[0], best[1], best[2], best[3], exact


def more_heads(
    live: np.ndarray,
    values: Sequence[float],
    sizes: Sequence[int],
    capacity: int,
    rows: Iterable[int],
    heads: dict,
    eligible: Iterable[int],
    curves: Sequence | None = None,
) -> tuple[dict, bool]:
    """Further heads beside the whole rows and the heads of split_fill:
    in rounds, every eligible site that is neither whole nor split gets its
    largest head in the DRAM still free at every instant (min_head at
    least, as split_fill), and the one worth most (split_fill's value of a
    head) is added; until no head fits, SPLIT_MAX_HEADS heads are
    planned (each site's objects are one at a time, so as many split
    objects are live at most: the runtime's limit), or the work
    (sites x instants, summed over rounds) passes MORE_HEADS_WORK_LIMIT.
    Only adds: the value never drops below split_fill's. Greedy, not
    proven best over plans of several heads; with one instant (no timeline)
    a second head rarely finds room, since the first takes the free bytes
    unless its object is smaller. Returns (row -> head, work limit hit)."""
    v = np.asarray(values, dtype="float64")
    size = np.asarray(sizes, dtype="float64")
    heads = {int(r): int(h) for r, h in heads.items()}
    taken = {int(r) for r in rows} | set(heads)
    cand = np.array(sorted(int(s) for s in eligible if int(s) not in taken), dtype=np.intp)
    if not len(cand) or len(heads) >= SPLIT_MAX_HEADS:
        return heads, False
    rs = sorted(taken - set(heads))
    usage = live[rs].sum(axis=0) if rs else np.zeros(live.shape[1])
    for r, h in heads.items():
        usage = usage + np.minimum(h, live[r])
    cap = (size[cand].astype("int64") - 1) // PAGE * PAGE
    # each candidate's miss curve at SLICE_GRID (uniform: the grid itself)
    curve = np.array(
        [
            SLICE_GRID if curves is None or curves[s] is None else np.asarray(curves[s])
            for s in cand
        ],
        dtype="float64",
    ).reshape(len(cand), len(SLICE_GRID))
    least = min_head(capacity)
    work = 0
    while len(cand) and len(heads) < SPLIT_MAX_HEADS:
        work += live.shape[1] * len(cand)
        if work > MORE_HEADS_WORK_LIMIT:
            return heads, True
        slack = capacity - usage
        lv = live[cand]
        h = np.where(lv > slack, slack, np.inf).min(axis=1)
        h = np.minimum(h, cap)
        h = np.where(np.isfinite(h), h, cap).astype("int64") // PAGE * PAGE
        x = np.clip(h / np.maximum(size[cand], 1), 0.0, 1.0) * (len(SLICE_GRID) - 1)
        k = np.minimum(x.astype("int64"), len(SLICE_GRID) - 2)
        r = np.arange(len(cand))
        share = curve[r, k] + (curve[r, k + 1] - curve[r, k]) * (x - k)
        gain = np.where(h >= least, v[cand] * share, 0.0)
        k = int(np.argmax(gain))
        if gain[k] <= 0:
            break
        s = int(cand[k])
        heads[s] = int(h[k])
        usage = usage + np.minimum(h[k], live[s])
        keep = np.arange(len(cand)) != k
        cand, cap, curve = cand[keep], cap[keep], curve[keep]
    return heads, False


UNUSED_SHARE = 0.1  # unused_budget: said when more than this share of the budget is left
UNUSED_SITES = 3  # ... naming at most this many sites


def unused_budget(
    profile: Profile, costs: pd.DataFrame, sel: Selection, heads: bool, model_splits: bool
) -> list:
    """When the chosen sites leave more than UNUSED_SHARE of the budget
    unused: one line for each of the (at most UNUSED_SITES) slow sites of
    most benefit, saying why it did not get that DRAM and what would place
    it (issue 36: 4.5 KiB of a 12.8 MiB budget used, and nothing said).
    `heads`: DRAM heads asked for (not --whole-sites); `model_splits`: the
    tier model's slow tier can hold the tail of a split object."""
    from tierwise.symbolize import short_location
    from tierwise.sizes import format_size

    left = sel.budget - sel.used_bytes
    if sel.budget <= 0 or left <= max(UNUSED_SHARE * sel.budget, PAGE):
        return []
    cand = costs[costs["placeable"] & (costs["benefit"] > 0)]
    cand = cand[~cand.index.isin(list(sel.fast)) & ~cand.index.isin(list(sel.partial))]
    if cand.empty:
        return [f"{format_size(left)} of the {format_size(sel.budget)} budget unused: every "
                "site with a modelled benefit is in DRAM already"]
    cand = cand.sort_values("benefit", ascending=False).head(UNUSED_SITES)
    eligible = split_eligible(profile, cand)
    together = ~one_at_a_time(profile, cand.index)
    lines = []
    for s in cand.index:
        size = int(cand.at[s, "bytes"])
        whole = (f"too large to go whole ({format_size(size)})" if size > sel.budget
                 else f"its {format_size(size)} do not fit beside the chosen sites at their peak")
        if not heads:
            head = "no DRAM head asked for (--whole-sites)"
        elif not model_splits:
            head = "no DRAM head: this tier model's slow tier cannot hold a split object's tail"
        elif bool(eligible.get(s, False)):
            head = "a DRAM head did not pay (its misses are not in its first bytes)"
        elif bool(together.get(s, False)):
            head = ("no DRAM head: its objects are live at the same time (a head is per "
                    "object, one object at a time)")
        else:
            head = "no DRAM head: it is placed whole (a pool block) or smaller than a page"
        lines.append(
            f"{format_size(left)} of the {format_size(sel.budget)} budget unused; site {s} "
            f"({short_location(profile.sites.at[s, 'location'] or profile.sites.at[s, 'stack'])}"
            f", modelled benefit {cand.at[s, 'benefit'] * 1e3:.3g} ms) did not get it: {whole}; "
            f"{head}; a --dram-budget of {format_size(sel.used_bytes + size)} would place it whole"
        )
    return lines


def scores(sites: pd.DataFrame, policy: str) -> pd.Series:
    """Rank key of a greedy policy: larger first (size: smaller first)."""
    b = sites["peak_bytes"].astype("float64").fillna(0).clip(lower=1)
    num = lambda c: sites[c].astype("float64").fillna(0)
    if policy == "write-intensity":
        return num("stores") / b
    if policy == "misses":
        return (num("llc_load_misses") + num("llc_store_misses")) / b
    if policy == "size":
        return -b
    raise ValueError(f"--policy {policy}: not one of {', '.join(POLICIES)}")


def select(
    profile: Profile,
    costs: pd.DataFrame,
    budget: int,
    policy: str = "cost",
    lifetime: bool = True,
    partial: bool = True,
) -> Selection:
    """Choose the fast-tier sites of `profile` (costs from cost.site_costs).
    Cost policy with `partial`: then the split fill may give sites that do
    not fit whole a DRAM head (Selection.partial)."""
    cand = costs[costs["placeable"]]
    notes = []
    if policy == "cost":
        benefit = cand["benefit"].to_numpy(dtype="float64")
        use_timeline = lifetime and not profile.objects.empty
        if use_timeline:
            live = live_matrix(profile.objects, cand.index, cand["bytes"])
            value, rows, exact = lifetime_knapsack(live, benefit, budget)
            notes.append("lifetime-aware: sites never live together share DRAM bytes")
        else:
            live = cand["bytes"].to_numpy(dtype="float64")[:, None]
            value, rows, exact = knapsack(cand["bytes"].to_numpy(), benefit, budget)
        if not exact:
            notes.append("search limit reached: best placement found, optimality not proven")
        heads: dict = {}
        if partial:
            eligible = np.flatnonzero(split_eligible(profile, cand).to_numpy())
            if len(eligible):
                size = cand["bytes"].to_numpy()
                curves = list(cand["miss_curve"]) if "miss_curve" in cand else None
                _, rows, split, head, split_exact = split_fill(
                    live, benefit, size, budget, rows, eligible, curves
                )
                if not split_exact:
                    notes.append(
                        "split fill: search limit reached, the DRAM head found is not proven best"
                    )
                first = {split: head} if split is not None else {}
                heads, limited = more_heads(
                    live, benefit, size, budget, rows, first, eligible, curves
                )
                if len(heads) > 1:
                    notes.append(
                        f"split fill: {len(heads)} heads; the first from the split search, "
                        f"{len(heads) - 1} more added greedily where DRAM stayed free at "
                        "every instant (a plan of several heads is not proven best)"
                    )
                if limited:
                    notes.append("split fill: work limit reached while adding heads")
        usage = live[sorted(rows)].sum(axis=0) if rows else np.zeros(live.shape[1])
        for r, h in heads.items():
            usage = usage + np.minimum(h, live[r])
        fast = {cand.index[i] for i in rows}
        part = {cand.index[r]: int(h) for r, h in sorted(heads.items())}
        timeline = planned_timeline(live, rows, heads) if use_timeline else {}
        timeline = {cand.index[r]: v for r, v in timeline.items()}
        return Selection(policy, budget, fast, int(usage.max()), notes, part, timeline)
    key = scores(profile.sites.loc[cand.index], policy).to_numpy(dtype="float64")
    size, site = cand["bytes"].to_numpy(), cand.index.to_numpy()
    fast, used = set(), 0
    for j in np.lexsort((site, size, -key)):  # key descending, then smaller, then site
        if used + size[j] <= budget:
            fast.add(site[j].item())
            used += int(size[j])
    return Selection(policy, budget, fast, used, notes)
