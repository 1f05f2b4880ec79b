# SPDX-License-Identifier: MIT
"""From a profile to a placement: cost the sites, select the fast set under
the budget, and build the placement (formats.placement.make: format
`tierwise-placement` v1, advisor/FORMATS.md) and the table `tierwise
advise` prints."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, List, Optional

import pandas as pd

from tierwise import cost
from tierwise.formats import placement as placement_format
from tierwise.select import (
    Selection,
    parse_budget,
    peak_footprint,
    select,
    split_supported,
    unused_budget,
)
from tierwise.sizes import format_size  # noqa: F401 (advice.format_size)
from tierwise.symbolize import fit_location, short_location

if TYPE_CHECKING:
    from tierwise.formats.tiers import TierModel
    from tierwise.reader import Profile


def site_table(profile: Profile, costs: pd.DataFrame, tier_of: dict) -> pd.DataFrame:
    s = profile.sites
    c = cost.counts_of(s)
    acc = c["loads"] + c["stores"]
    miss = c["llc_load_misses"] + c["llc_store_misses"]
    t = pd.DataFrame(
        {
            "site": s["site"].astype("int64"),
            "location": s["location"].where(s["location"] != "", s["stack"].str.split(";").str[0]),
            "bytes": costs["bytes"],
            "misses_per_kib": miss / (costs["bytes"].clip(lower=1) / 1024),
            "write_share": (c["stores"] / acc.where(acc > 0)).fillna(0),
            # of the LLC misses, those continuing a sweep (empty: not counted)
            "sequential_share": c[cost.STREAM] / miss.where(miss > 0),
            # memory-level parallelism the misses are charged with
            "mlp": costs["mlp"],
            "tier": [tier_of.get(i, "") for i in s.index],
            "benefit_s": costs["benefit"],
            "regime": costs["regime"],
        },
        index=s.index,
    )
    t.index.name = None
    # What matters first: the modelled benefit of DRAM where accesses were
    # counted, else (an allocation census) the bytes.
    measured = s[["loads", "stores", "llc_load_misses"]].notna().any().any()
    keys = (["benefit_s"] if measured else []) + ["bytes", "site"]
    return t[costs["placeable"]].sort_values(
        keys, ascending=[False] * (len(keys) - 1) + [True], kind="mergesort"
    )


def advise(
    profile: Profile,
    model: TierModel,
    budget_spec: str,
    policy: str = "cost",
    lifetime: bool = True,
    partial: bool = True,
) -> tuple[dict, pd.DataFrame, Selection, pd.DataFrame]:
    """Returns (placement dict, table DataFrame, Selection, costs). With
    `partial` (cost policy, a slow tier the runtime splits: pmem, kmem,
    numa:N) sites that do not fit whole may get a DRAM head: the entry has
    the slow tier, `dram_bytes` and the head's share of the benefit; the
    table's tier column reads e.g. dram+numa:1."""
    measured = profile.sites[["loads", "stores", "llc_load_misses"]].notna().any().any()
    if policy in ("cost", "write-intensity", "misses") and not measured:
        raise ValueError(
            f"{profile.paths[0]}: the profile has no access counts (backend "
            f"{profile.meta[0].get('backend', '?')}); --policy {policy} needs them: profile with "
            "--backend sim or pmu, or use --policy size"
        )
    costs = cost.site_costs(profile.sites, model)
    total = peak_footprint(profile)
    budget = parse_budget(budget_spec, total)
    split = partial and split_supported(model)
    sel = select(profile, costs, budget, policy, lifetime=lifetime, partial=split)
    if policy == "cost":
        sel.notes += unused_budget(profile, costs, sel, partial, split_supported(model))
    tier_of = {
        i: (model.fast.name if i in sel.fast else model.slow.name)
        for i in costs.index[costs["placeable"]]
    }
    shown = dict(tier_of)
    for i in sel.partial:
        shown[i] = f"{model.fast.name}+{model.slow.name}"
    table = site_table(profile, costs, shown)
    fractions = sel.fractions(costs)
    ranks = dram_ranks(costs, sel)
    sites = []
    for i in table.index:
        entry = {
            "stack": profile.sites.at[i, "stack"],
            "location": profile.sites.at[i, "location"],
            "tier": tier_of[i],
        }
        if i in sel.partial:
            entry["dram_bytes"] = int(sel.partial[i])
        entry["bytes"] = int(costs.at[i, "bytes"])
        entry["benefit"] = round(float(costs.at[i, "benefit"]) * fractions.get(i, 1.0), 9)
        size = object_size(profile, i) if i in sel.partial else None
        if size:
            entry["dram_fraction"] = min(1.0, int(sel.partial[i]) / size)
        if i in ranks:
            entry["rank"], entry["planned_bytes"] = ranks[i]
            if i in sel.timeline:  # DRAM shared over time (FORMATS.md)
                entry["planned_live"] = [min(x, ranks[i][1]) for x in sel.timeline[i]]
        sites.append(entry)
    placement = placement_format.make(
        sites,
        default_tier=cost.system_tier(model).name,
        depth=profile.depth,
        budget_bytes=budget,
        budget=budget_spec,
        footprint_bytes=total,
        policy=policy,
        tier_model=model.name,
        profiles=[str(p) for p in profile.paths],
        # path: where `tierwise rewrite` finds each module to symbolize
        # stacks with (FORMATS.md); the first profile's path of a module.
        modules=[
            {"module": m, "path": p if isinstance(p, str) else "", "build_id": b}
            for m, p, b in profile.modules.drop_duplicates("module")[
                ["module", "path", "build_id"]
            ].itertuples(index=False)
        ],
        tiers=model.to_json(),
        modelled_seconds={
            "placement": cost.placement_seconds(profile.sites, costs, model, fractions),
            "all_fast": cost.placement_seconds(
                profile.sites, costs, model, set(costs.index[costs["placeable"]])
            ),
            "all_slow": cost.placement_seconds(profile.sites, costs, model, set()),
        },
        notes=sel.notes + profile.notes,
    )
    return placement, table, sel, costs


def llc_warning(profile: Profile) -> str | None:
    """A warning when the profile's peak live footprint fits in the LLC its
    sim backend simulated: then (almost) every access hits the cache, no
    placement changes the modelled time, and every policy reads 1.000x.
    None when it does not fit, or the LLC was not simulated."""
    llc = 0
    for meta in profile.meta:
        params = meta.get("backend_params") or {}
        cache = params.get("cache") if meta.get("backend") == "sim" else None
        if isinstance(cache, dict) and cache.get("llc_size"):
            llc = max(llc, int(cache["llc_size"]))
    peak = peak_footprint(profile)
    if not llc or peak >= llc:
        return None
    return (
        f"the peak live footprint ({format_size(peak)}) is below the simulated LLC "
        f"({format_size(llc)}): the data fits in the cache, so placements barely differ "
        f"(ratios near 1.000x); profile a larger input, or pass --llc-size below "
        f"{format_size(peak)}"
    )


def dram_ranks(costs: pd.DataFrame, sel: Selection) -> dict:
    """Site -> (rank, planned DRAM bytes) for the sites with DRAM bytes:
    rank 1 has the most modelled benefit per byte (a head's share of its
    site's benefit per head byte is the site's own: accesses uniform over
    the bytes); planned bytes are the site's peak bytes, or its head. The
    runtime reserves DRAM under a limit in this order (runtime/README.md)."""
    planned = {i: int(costs.at[i, "bytes"]) for i in sel.fast}
    planned.update({i: int(h) for i, h in sel.partial.items()})
    density = {i: float(costs.at[i, "benefit"]) / max(int(costs.at[i, "bytes"]), 1) for i in planned}
    order = sorted(planned, key=lambda i: (-density[i], planned[i], i))
    return {i: (r + 1, planned[i]) for r, i in enumerate(order)}


def object_size(profile: Profile, site: Any) -> int | None:
    """The size of every object of a site when they all have one (so that a
    head stated as a fraction of the object equals dram_bytes here), else
    None."""
    o = profile.objects
    sizes = o.loc[o["site"] == site, "size"].dropna().unique() if not o.empty else []
    if len(sizes) == 1:
        return int(sizes[0])
    allocs, peak = profile.sites.at[site, "allocs"], profile.sites.at[site, "peak_bytes"]
    if len(sizes) == 0 and allocs is not pd.NA and allocs == 1 and peak is not pd.NA:
        return int(peak) or None
    return None


def format_partial(table: pd.DataFrame, sel: Selection, model: TierModel) -> list:
    """A line under the table for each split site: its DRAM head."""
    lines = []
    for i, h in sel.partial.items():
        b = int(table.at[i, "bytes"])
        lines.append(
            f"site {table.at[i, 'site']} ({short_location(table.at[i, 'location'])}) is split: the first "
            f"{format_size(h)} of each object in {model.fast.name} ({h / max(b, 1):.0%} of "
            f"{format_size(b)}), the rest in {model.slow.name}"
        )
    return lines


def location_column(locations: Iterable[Any], cap: int = 56) -> tuple[int, list[str]]:
    """(width, cells) of a table's location column: short_location() of
    each, the column as wide as the longest (at most `cap`, or the longest
    cell that cannot be cut to it), a longer one cut in its function name
    only (fit_location), never in the file:line, `(via ...)` or ` <- ...`
    parts that tell sites apart."""
    locations = [str(x) for x in locations]
    width = min(max([8] + [len(short_location(x)) for x in locations]), cap)
    width = max([width] + [len(fit_location(x, width)) for x in locations])
    return width, [fit_location(x, width) for x in locations]


def format_table(table: pd.DataFrame, limit: int = 30) -> str:
    rows = table.head(limit)
    return format_rows(
        lambda w: f"{'site':>4}  {'location':<{w}} {'size':>10} {'miss/KiB':>9} {'writes':>6}  "
        f"{'tier':<9} {'benefit':>10}",
        rows,
        list(rows["location"]),
        lambda r: f"{format_size(r['bytes']):>10} {r['misses_per_kib']:>9.1f} "
        f"{r['write_share']:>6.0%}  {r['tier']:<9} {r['benefit_s'] * 1e3:>8.3f}ms",
        f"... {len(table) - limit} more sites in the placement file" if len(table) > limit else "",
        ids=rows["site"],
    )


def format_rows(
    head: Callable[[int], str],
    rows: pd.DataFrame,
    locations: List[str],
    cells: Callable[[pd.Series], str],
    more: str = "",
    ids: Optional[Iterable[Any]] = None,
) -> str:
    """A site table: `head(width)`, then per row its id (`ids`, default the
    row index), its location (location_column()) and `cells(row)`, then
    `more` (the line saying how many rows were left out) if not empty."""
    w, locs = location_column(locations)
    lines = [head(w)]
    for i, loc, (_, r) in zip(rows.index if ids is None else ids, locs, rows.iterrows()):
        lines.append(f"{i:>4}  {loc:<{w}} {cells(r)}")
    if more:
        lines.append(more)
    return "\n".join(lines)
