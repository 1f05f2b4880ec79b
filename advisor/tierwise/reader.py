# SPDX-License-Identifier: MIT
"""Reading and merging profiles for the advisor: `read_profiles()` reads
`tierwise-profile` v1 directories (formats.profile, advisor/FORMATS.md)
and merges several (ranks, runs) by site stack.

Merging rule: counts (allocs, bytes_allocated, loads, stores, misses,
writebacks) are summed; `peak_bytes` is the maximum over the runs, because a
placement applies to each process separately and the DRAM budget is a
per-process quantity. Each profile's objects timeline is kept apart (column
`profile`) so lifetime-aware packing checks every run's timeline on its own.
"""

import os
from pathlib import Path
from typing import Iterable, List

import numpy as np
import pandas as pd

# The profile directory's schema and reader live in formats.profile; the
# names below are what the advisor's modules use from here.
from tierwise.formats.profile import (  # noqa: F401
    COUNT_COLUMNS,
    OPTIONAL_COLUMNS,
    PSEUDO_SITES,
    SITE_COLUMNS,
    Profile,
    read_profile,
)
from tierwise.messages import listed


def simulated_llc(meta: dict) -> int | None:
    """The LLC size a sim profile simulated (meta.json backend_params:
    llc_size, or cache.llc_size), None for other backends."""
    if meta.get("backend") != "sim":
        return None
    params = meta.get("backend_params") or {}
    cache = params.get("cache") if isinstance(params.get("cache"), dict) else params
    size = cache.get("llc_size") if isinstance(cache, dict) else None
    return int(size) if size else None


def _same_llc(profiles: List[Profile]) -> None:
    """Refuse to add miss counts simulated with different LLC sizes: a
    profile's misses depend on the cache it simulated."""
    from tierwise.sizes import format_size

    seen: dict = {}
    for p in profiles:
        for path, meta in zip(p.paths, p.meta):
            size = simulated_llc(meta)
            if size:
                seen.setdefault(size, str(path))
    if len(seen) > 1:
        which = listed((f"{path} {format_size(size)}" for size, path in seen.items()), sep=", ")
        raise ValueError(
            f"the profiles simulated different LLC sizes ({which}): their miss counts "
            "cannot be added; profile them again with the same --llc-size"
        )


def program(meta: dict) -> str:
    """The program a profile ran: its command's first word, without the
    directory ('' if the meta data does not say)."""
    cmd = meta.get("command")
    return os.path.basename(str(cmd[0])) if isinstance(cmd, list) and cmd else ""


def _job(path: Path) -> Path:
    """The profile directory of the job a profile belongs to: DIR for DIR
    and for each DIR/children/<command>.<pid> (the processes `tierwise
    profile` followed)."""
    path = Path(path)
    return path.parent.parent if path.parent.name == "children" else path


def _same_program(profiles: List[Profile]) -> None:
    """Refuse to merge the profiles of different programs (issue 36: they
    were merged without a word, their tables showing pairs of like rows),
    unless all are processes of one profiled job (one placement serves the
    job: stacks name their modules) or advise --mixed-programs asks."""
    if len({_job(q) for p in profiles for q in p.paths}) == 1:
        return
    seen: dict = {}
    for p in profiles:
        for path, meta in zip(p.paths, p.meta):
            seen.setdefault(program(meta), str(path))
    seen.pop("", None)
    if len(seen) > 1:
        which = listed((f"{path} ({prog})" for prog, path in seen.items()), sep=", ")
        raise ValueError(
            f"the profiles are of different programs: {which}; advise each program on its "
            "own, or pass --mixed-programs for one placement that serves them all"
        )


def merge(profiles: List[Profile], mixed_programs: bool = False) -> Profile:
    """Merge profiles by site `stack`: counts summed, peak_bytes max,
    location the first non-empty one; objects keep their own profile index."""
    if len(profiles) == 1:
        return profiles[0]
    depths = {p.depth for p in profiles}
    if len(depths) > 1:
        raise ValueError(
            f"profiles recorded different stack depths {sorted(depths)}; "
            "profile again with the same --depth"
        )
    _same_llc(profiles)
    if not mixed_programs:
        _same_program(profiles)
    frames = []
    for i, p in enumerate(profiles):
        s = p.sites.reset_index(drop=True).copy()
        s["_order"] = i * 10**9 + np.arange(len(s))
        frames.append(s)
    allsites = pd.concat(frames, ignore_index=True)
    # the first non-empty location and pool stack: "first" skips NA
    # (whole-column operations: a lambda per site took 50 s for 22,000)
    for c in ("location", "pool_stack"):
        allsites[c] = allsites[c].replace("", np.nan)
    agg: dict = {c: "sum" for c in COUNT_COLUMNS}
    agg["peak_bytes"] = "max"
    agg["location"] = "first"
    agg["pool_stack"] = "first"
    agg["_order"] = "min"
    by_stack = allsites.groupby("stack", sort=False)
    merged = by_stack.agg(agg).reset_index()
    for c in ("location", "pool_stack"):
        merged[c] = merged[c].fillna("").astype(str)
    # sum/max of all-empty (not measured) columns must stay empty
    measured = allsites[COUNT_COLUMNS].notna().groupby(allsites["stack"], sort=False).any()
    for c in COUNT_COLUMNS:
        merged[c] = merged[c].astype("Int64").where(merged["stack"].map(measured[c]), pd.NA)
    # sequential misses and the interval counts describe a share of the
    # misses: unknown for a site where a profile counted its misses but not
    # them (pmu)
    for c in COUNT_COLUMNS:
        if c not in OPTIONAL_COLUMNS:
            continue
        partial = (allsites["llc_load_misses"].notna() & allsites[c].isna()).groupby(
            allsites["stack"], sort=False
        ).any()
        merged[c] = merged[c].where(~merged["stack"].map(partial), pd.NA)
    merged = merged.sort_values("_order").drop(columns="_order").reset_index(drop=True)
    merged.insert(0, "site", np.arange(len(merged), dtype="int64"))
    merged["site"] = merged["site"].astype("Int64")
    merged = merged[list(SITE_COLUMNS)].set_index("site", drop=False)
    new_id = dict(zip(merged["stack"], merged["site"]))
    objs = []
    for i, p in enumerate(profiles):
        o = p.objects.copy()
        o["site"] = o["site"].map(p.sites["stack"]).map(new_id).astype("Int64")
        o["profile"] = i
        objs.append(o)
    modules = pd.concat([p.modules for p in profiles]).drop_duplicates().reset_index(drop=True)
    ids = modules.groupby("module")["build_id"].nunique()
    notes = [n for p in profiles for n in p.notes]
    notes += [f"module {m} has different build-ids across the profiles" for m in ids[ids > 1].index]
    return Profile(
        [q for p in profiles for q in p.paths],
        [m for p in profiles for m in p.meta],
        merged,
        pd.concat(objs, ignore_index=True),
        modules,
        depth=depths.pop(),
        notes=notes,
    )


def fold_handouts(profile: Profile) -> tuple[Profile, list]:
    """The profile as `tierwise run` can place it: the access counts of each
    site of pool hand-outs (sites.csv `pool_stack`, --alloc-fn) added to the
    site of the pool's heap block they lay in, which the runtime places
    whole (it sees malloc, not the pool), and the hand-out sites left out
    with their objects; that block site's miss slices become unknown (they
    described its free list) and it is placed whole (Profile.whole: where
    in the block the hand-outs' accesses fell is not known). Returns (profile, [(hand-out location or
    stack, block location or stack), ...]); the profile unchanged where no
    site is a hand-out of a block site in it. The profile directory keeps
    the hand-out sites, for `tierwise rewrite`, which can place them one by
    one."""
    sites = profile.sites
    if "pool_stack" not in sites.columns:
        return profile, []
    index = {st: i for i, st in zip(sites.index, sites["stack"])}
    hand = [(i, index[ps]) for i, ps in zip(sites.index, sites["pool_stack"])
            if ps and ps in index and index[ps] != i]
    if not hand:
        return profile, []
    sites = sites.copy()
    folded = []
    counts = [c for c in COUNT_COLUMNS if c not in ("allocs", "bytes_allocated", "peak_bytes")
              and not c.startswith("llc_miss_slice")]
    for i, host in hand:
        for c in counts:
            if pd.notna(sites.at[i, c]):
                base = sites.at[host, c]
                sites.at[host, c] = (0 if pd.isna(base) else base) + sites.at[i, c]
        for c in (c for c in COUNT_COLUMNS if c.startswith("llc_miss_slice")):
            sites.at[host, c] = pd.NA
        folded.append((sites.at[i, "location"] or sites.at[i, "stack"],
                       sites.at[host, "location"] or sites.at[host, "stack"]))
    drop = [i for i, _ in hand]
    sites = sites.drop(index=drop)
    objects = profile.objects[~profile.objects["site"].isin(drop)].copy()
    # site ids stay 0..N-1 (FORMATS.md), objects follow
    new_id = {old: new for new, old in enumerate(sites.index)}
    sites["site"] = pd.array(range(len(sites)), dtype="Int64")
    sites = sites.set_index("site", drop=False)
    objects["site"] = objects["site"].map(new_id).astype("Int64")
    notes = list(profile.notes) + [
        f"{len(folded)} site(s) of pool hand-outs (--alloc-fn) counted toward the pool block "
        "site they lay in, which is what `tierwise run` places (their own rows stay in the "
        "profile for `tierwise rewrite`)"
    ]
    return (
        Profile(profile.paths, profile.meta, sites, objects, profile.modules,
                depth=profile.depth, notes=notes,
                whole=set(profile.whole) | {profile.sites.at[h, "stack"] for _, h in hand}),
        folded,
    )


def read_profiles(paths: Iterable, mixed_programs: bool = False) -> Profile:
    """Read one or more profile directories and merge them by site
    (profiles of different programs only with `mixed_programs`)."""
    paths = list(paths)
    if not paths:
        raise ValueError("no profile directory given")
    return merge([read_profile(p) for p in paths], mixed_programs)
