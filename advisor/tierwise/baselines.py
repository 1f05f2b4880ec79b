# SPDX-License-Identifier: MIT
"""Placements the advisor is compared against, as fast-tier fractions per
site (cost.placement_seconds takes them):
  first-fit     DRAM until full, in allocation order: each object gets the
                DRAM bytes still free under the budget and spills the rest
                to the slow tier; freed objects give their DRAM back (what
                kernel first-touch with the DRAM node preferred does, at
                byte rather than page granularity);
  static-ratio  memkind memtier style: a fixed fraction of every site's
                bytes in DRAM, equal to budget / footprint;
  oracle        every subset of sites that fits the budget (lifetime-aware),
                the best by modelled time; only for few sites. With
                `partial`, also every subset plus one eligible site split
                with its largest DRAM head (select.split_fill's rule), the
                brute force the cost policy's split fill is checked against;
                then further heads where DRAM stays free, added as the cost
                policy adds them (select.more_heads).
A site's accesses are assumed spread uniformly over its bytes, so a site
with a fraction f of its bytes in DRAM gets f of its accesses served there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from tierwise.reader import Profile

from tierwise.select import PAGE, live_matrix, min_head, more_heads, split_eligible

ORACLE_MAX_SITES = 20


def first_fit(profile: Profile, costs: pd.DataFrame, budget: int) -> tuple[dict, int]:
    """(site -> fraction of its bytes first-fit puts in DRAM, the most DRAM
    bytes live at one instant). Each profile's timeline is replayed on its
    own; bytes of a site beyond its tracked objects are allocated first
    (small objects, early)."""
    cand = costs[costs["placeable"]]
    dram = pd.Series(0.0, index=cand.index)
    total = pd.Series(0.0, index=cand.index)
    objs = profile.objects[profile.objects["site"].isin(cand.index)]
    runs = list(objs.groupby("profile")) or [(0, objs)]
    peak = 0
    for _, o in runs:
        tracked_peak = (
            live_matrix(o.assign(profile=0), cand.index, cand["bytes"] * 0).max(axis=1)
            if not o.empty
            else np.zeros(len(cand))
        )
        events = []
        for site, b, tp in zip(cand.index, cand["bytes"], tracked_peak):
            if b > tp:  # untracked residual: one early object
                events.append((-1, 1, int(b - tp), site, -1))
        for k, r in enumerate(o.itertuples(index=False)):
            events.append((int(r.alloc_time), 1, int(r.size), int(r.site), k))
            if not pd.isna(r.free_time):
                events.append((int(r.free_time), 0, int(r.size), int(r.site), k))
        used, where = 0, {}
        for t, is_alloc, size, site, k in sorted(events, key=lambda e: (e[0], e[1])):
            if is_alloc:
                in_dram = max(0, min(size, budget - used))
                where[(site, k)] = in_dram
                used += in_dram
                peak = max(peak, used)
                total[site] += size
                dram[site] += in_dram
            else:
                used -= where.pop((site, k), 0)
    return (dram / total.where(total > 0)).fillna(0).to_dict(), peak


def static_ratio(costs: pd.DataFrame, fraction: float) -> dict:
    return {i: float(fraction) for i in costs.index[costs["placeable"]]}


def oracle(
    profile: Profile, costs: pd.DataFrame, budget: int, partial: bool = False
) -> tuple[dict | None, Any]:
    """Best subset by modelled time among all that fit the budget at every
    instant of the timeline (modelled time is baseline + sum of t_slow minus
    the benefits of the DRAM sites, so the largest total benefit wins); with
    `partial`, also each subset beside one split site (select.split_eligible)
    with the largest DRAM head that fits, worth benefit x head / bytes, the
    best of them then given more heads as select.more_heads adds them.
    Returns (site -> fast fraction, live DRAM bytes used) or (None, why)."""
    cand = costs[costs["placeable"] & (costs["benefit"] > 0)]
    n = len(cand)
    if n > ORACLE_MAX_SITES:
        return None, f"oracle skipped: {n} sites with a benefit (limit {ORACLE_MAX_SITES})"
    live = live_matrix(profile.objects, cand.index, cand["bytes"]) if n else np.zeros((0, 1))
    masks = (np.arange(1 << n)[:, None] >> np.arange(n)[None, :]) & 1
    usage = masks @ live
    fits = np.all(usage <= budget, axis=1)
    benefit, size = cand["benefit"].to_numpy(), cand["bytes"].to_numpy()
    value = np.where(fits, masks @ benefit, -np.inf)
    best, split, head = int(np.argmax(value)), None, 0
    top = value[best]
    eligible = np.flatnonzero(split_eligible(profile, cand).to_numpy()) if partial else []
    for p in eligible:
        slack = budget - usage  # the head must fit where p's object outgrows it
        h = np.where(live[p] > slack, slack, np.inf).min(axis=1)
        h = np.minimum(h, (int(size[p]) - 1) // PAGE * PAGE) // PAGE * PAGE
        h = np.where((h >= min_head(budget)) & (masks[:, p] == 0), h, 0)
        v = value + benefit[p] * h / size[p]
        k = int(np.argmax(v))
        if v[k] > top:
            best, split, head, top = k, p, int(h[k]), v[k]
    rows = [i for i in range(n) if best >> i & 1]
    frac = {cand.index[i]: 1.0 for i in rows}
    use = masks[best] @ live if n else np.zeros(1)
    heads = {split: head} if split is not None else {}
    if len(eligible):
        heads, _ = more_heads(live, benefit, size, budget, rows, heads, eligible)
    for r, h in heads.items():
        frac[cand.index[r]] = h / size[r]
        use = use + np.minimum(h, live[r])
    return frac, int(use.max())
