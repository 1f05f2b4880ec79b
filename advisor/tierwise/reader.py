# SPDX-License-Identifier: MIT
"""Profile reader for the advisor: reads `tierwise-profile` v1 directories
(advisor/FORMATS.md) into DataFrames with a declared schema, and merges
several profiles (ranks, runs) by site stack.

Merging rule: counts (allocs, bytes_allocated, loads, stores, misses,
writebacks) are summed; `peak_bytes` is the maximum over the runs, because a
placement applies to each process separately and the DRAM budget is a
per-process quantity. Each profile's objects timeline is kept apart (column
`profile`) so lifetime-aware packing checks every run's timeline on its own.
"""

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

PROFILE_FORMAT = "tierwise-profile"
PROFILE_VERSIONS = (1,)

# Declared schema: column -> kind. "int" columns may be empty (not measured)
# and are read as pandas nullable Int64.
SITE_COLUMNS = {
    "site": "int",
    "stack": "str",
    "location": "str",
    "allocs": "int",
    "bytes_allocated": "int",
    "peak_bytes": "int",
    "loads": "int",
    "stores": "int",
    "llc_load_misses": "int",
    "llc_store_misses": "int",
    "writebacks": "int",
    # optional (sim backend; empty = not measured, as from the pmu backend):
    # the LLC misses that continue a sweep of consecutive lines
    "llc_stream_misses": "int",
    # optional (sim backend's interval model, profiler/sim/tw_interval.c): of
    # the LLC misses, those overlapped with an earlier outstanding miss (or
    # prefetched), those whose address depends on an earlier missing load;
    # the sum over misses of the misses in flight with each
    "llc_overlapped_misses": "int",
    "llc_dependent_misses": "int",
    "llc_inflight_misses": "int",
    # optional (sim backend): locked read-modify-writes on the site
    "atomics": "int",
}
OPTIONAL_COLUMNS = {
    "llc_stream_misses",
    "llc_overlapped_misses",
    "llc_dependent_misses",
    "llc_inflight_misses",
    "atomics",
}
COUNT_COLUMNS = [c for c, k in SITE_COLUMNS.items() if k == "int" and c != "site"]
OBJECT_COLUMNS = {"site": "int", "size": "int", "alloc_time": "int", "free_time": "int"}
MODULE_COLUMNS = {"module": "str", "path": "str", "build_id": "str"}
PSEUDO_SITES = ("[static]", "[stack]", "[unknown]")


@dataclass
class Profile:
    """One profile, or several merged. `sites` is indexed by `site` (0..N-1)
    with SITE_COLUMNS; `objects` has OBJECT_COLUMNS plus `profile` (index
    into `paths`); `meta` is the list of meta.json dicts, one per path."""

    paths: list
    meta: list
    sites: pd.DataFrame
    objects: pd.DataFrame
    modules: pd.DataFrame
    depth: int = 6
    notes: list = field(default_factory=list)

    @property
    def placeable(self) -> pd.DataFrame:
        """Sites a placement can move: heap sites, not pseudo-sites."""
        return self.sites[~self.sites["stack"].isin(PSEUDO_SITES)]


def _read_csv(path: Path, schema: dict, required: bool = True) -> pd.DataFrame:
    if not path.exists():
        if required:
            raise ValueError(f"{path}: file missing (is this a tierwise profile directory?)")
        return pd.DataFrame(
            {c: pd.Series(dtype="Int64" if k == "int" else "object") for c, k in schema.items()}
        )
    if path.stat().st_size == 0:
        raise ValueError(f"{path}: empty file (expected a header line: {','.join(schema)})")
    try:
        df = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[])
    except pd.errors.ParserError as e:
        raise ValueError(f"{path}: not a valid CSV file ({str(e).splitlines()[0]})") from None
    for c in OPTIONAL_COLUMNS & set(schema) - set(df.columns):
        df[c] = ""  # an optional column the writer did not have: not measured
    missing = [c for c in schema if c not in df.columns]
    if missing:
        raise ValueError(
            f"{path}: missing column '{missing[0]}' (expected columns: {','.join(schema)})"
        )
    df = df[list(schema)].copy()
    for col, kind in schema.items():
        if kind == "str":
            df[col] = df[col].astype(str)
            continue
        raw = df[col].str.strip()
        bad = ~raw.str.fullmatch(r"\d*")
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise ValueError(
                f"{path}: column '{col}' row {i + 2}: value '{df[col].iloc[i]}' "
                "is not a non-negative integer"
            )
        df[col] = pd.to_numeric(raw.replace("", None), errors="raise").astype("Int64")
    return df


def _read_meta(d: Path) -> dict:
    p = d / "meta.json"
    if not p.exists():
        raise ValueError(f"{p}: file missing (an incomplete profile, or not a profile directory)")
    try:
        meta = json.loads(p.read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"{p}: not valid JSON ({e})") from None
    if not isinstance(meta, dict):
        raise ValueError(f"{p}: expected a JSON object")
    if meta.get("format") != PROFILE_FORMAT:
        raise ValueError(
            f"{p}: field 'format' is {meta.get('format')!r}, expected '{PROFILE_FORMAT}'"
        )
    if meta.get("version") not in PROFILE_VERSIONS:
        raise ValueError(
            f"{p}: field 'version' is {meta.get('version')!r}; this tierwise reads "
            f"version {', '.join(map(str, PROFILE_VERSIONS))}"
        )
    if meta.get("complete") is False:
        raise ValueError(
            f"{p}: field 'complete' is false: the profiled run did not finish; profile again"
        )
    return meta


def read_profile(path) -> Profile:
    """Read one profile directory; raise ValueError naming the file, column
    and value on any contract violation."""
    d = Path(path)
    if not d.is_dir():
        raise ValueError(f"{d}: no such profile directory")
    meta = _read_meta(d)
    sites = _read_csv(d / "sites.csv", SITE_COLUMNS)
    if sites.empty:
        raise ValueError(f"{d / 'sites.csv'}: no sites (the profile recorded no allocations)")
    if sites["site"].isna().any():
        raise ValueError(f"{d / 'sites.csv'}: column 'site' must not be empty")
    notes = []
    nostack = sites["stack"].str.strip().eq("")
    if nostack.any():
        # allocations with no frame outside the allocators (e.g. the runtime's
        # own): not placeable, counted with the unknown accesses
        sites.loc[nostack, "stack"] = "[unknown]"
        notes.append(
            f"{d / 'sites.csv'}: {int(nostack.sum())} site(s) without a user frame "
            "counted as [unknown]"
        )
    if sites["site"].duplicated().any():
        dup = int(sites.loc[sites["site"].duplicated(), "site"].iloc[0])
        raise ValueError(f"{d / 'sites.csv'}: column 'site': value '{dup}' appears twice")
    objects = _read_csv(d / "objects.csv", OBJECT_COLUMNS, required=False)
    unknown = ~objects["site"].isin(sites["site"])
    if unknown.any():
        raise ValueError(
            f"{d / 'objects.csv'}: column 'site': value '{objects['site'][unknown].iloc[0]}' "
            "is not a site of sites.csv"
        )
    modules = _read_csv(d / "modules.csv", MODULE_COLUMNS, required=False)
    sites["location"] = sites["location"].replace("nan", "")
    objects["profile"] = 0
    return Profile(
        [d],
        [meta],
        sites.set_index("site", drop=False),
        objects,
        modules,
        depth=int(meta.get("depth", 6) or 6),
        notes=notes,
    )


def merge(profiles: list) -> Profile:
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
    frames = []
    for i, p in enumerate(profiles):
        s = p.sites.reset_index(drop=True).copy()
        s["_order"] = i * 10**9 + np.arange(len(s))
        frames.append(s)
    allsites = pd.concat(frames, ignore_index=True)
    agg = {c: "sum" for c in COUNT_COLUMNS}
    agg["peak_bytes"] = "max"
    agg["location"] = lambda x: next((v for v in x if v), "")
    agg["_order"] = "min"
    merged = allsites.groupby("stack", sort=False).agg(agg).reset_index()
    # sum/max of all-empty (not measured) columns must stay empty
    for c in COUNT_COLUMNS:
        measured = allsites.groupby("stack", sort=False)[c].apply(lambda x: x.notna().any())
        merged[c] = merged[c].astype("Int64").where(merged["stack"].map(measured), pd.NA)
    # sequential misses and the interval counts describe a share of the
    # misses: unknown for a site where a profile counted its misses but not
    # them (pmu)
    for c in OPTIONAL_COLUMNS:
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


def read_profiles(paths) -> Profile:
    """Read one or more profile directories and merge them by site."""
    if not paths:
        raise ValueError("no profile directory given")
    return merge([read_profile(p) for p in paths])
