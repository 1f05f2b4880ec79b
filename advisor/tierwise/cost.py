# SPDX-License-Identifier: MIT
"""Cost model: modelled time of each site on each tier, the benefit of the
fast tier, and the modelled time of a whole placement.

Per site s on tier t (line = 64 B):
  latency_s   = (llc_load_misses * t.read_latency + llc_store_misses * t.write_latency) / MLP_s
  bandwidth_s = (llc_load_misses + llc_store_misses) * line / t.read_bandwidth
              + writebacks * line / t.write_bandwidth
  time(s, t)  = max(latency_s, bandwidth_s)
MLP_s, the site's memory-level parallelism, is measured where the profile
has the interval model's count (llc_overlapped_misses, sim backend: misses
that overlap an earlier outstanding miss, or are prefetched, and so cost no
latency of their own; profiler/sim/tw_interval.c):
  MLP_s = misses / (misses - llc_overlapped_misses)
i.e. only the misses that lead an interval pay the tier's latency. Without
the count (pmu and alloc backends, older profiles) MLP_s is the tier
model's constant `mlp` and sequential misses are discounted as follows.
Sequential misses (llc_stream_misses: misses that continue a sweep of
consecutive lines, counted by the sim backend) have their latency divided by
prefetch_factor: prefetchers hide most of it (calibrated on seed 004 table
3.3). A site is charged
  latency_s * ((1 - q) + q / prefetch_factor),  q = llc_stream_misses / misses.
Where the count was not measured (pmu backend, older profiles) q is 1 for
sites whose LLC misses are <= stream_miss_ratio of their loads + stores (a
sweep over lines) and 0 otherwise.
A site is charged the larger of the two: a site that streams more bytes than
the tier can move in its latency-bound time is bandwidth bound (seed 002,
GraphMat/X-Stream), otherwise latency bound (Galois/GraphLab). Writebacks are
posted (seed 002 footnote 1) so they cost bandwidth, not latency; a store
miss waits for the read-for-ownership.
  benefit(s) = time(s, slow) - time(s, fast)
  placement time = compute baseline + sum_s time(s, tier(s))
  compute baseline = (loads + stores of all sites and pseudo-sites) * compute_ns_per_access
                   + atomics * atomic_ns   (locked read-modify-writes, where counted)
Pseudo-sites ([static], [stack], [unknown]) are not placeable and stay in
system memory ('dram'). A DRAM head of a fraction x of a site's bytes serves
head_share(x) of its accesses: the share of its LLC misses in the first x of
its objects where the sim backend counted them by slice
(llc_miss_slice0..15), else x. See advisor/README.md for the assumptions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Mapping

import numpy as np
import pandas as pd

from tierwise.formats.profile import SLICE_COLUMNS
from tierwise.reader import PSEUDO_SITES

if TYPE_CHECKING:
    from tierwise.formats.tiers import Tier, TierModel

COUNTS = ["loads", "stores", "llc_load_misses", "llc_store_misses", "writebacks"]
# Optional count: of the LLC misses, those continuing a sweep (sim backend).
STREAM = "llc_stream_misses"
# Optional counts of the interval model (sim backend): of the LLC misses,
# those overlapped with an earlier outstanding one (or prefetched), those
# whose address depends on an earlier missing load; and the sum over misses
# of the misses in flight with each.
OVERLAPPED = "llc_overlapped_misses"
DEPENDENT = "llc_dependent_misses"
INFLIGHT = "llc_inflight_misses"
INTERVAL = [OVERLAPPED, DEPENDENT, INFLIGHT]
# Optional count (sim backend): locked read-modify-writes (CAS, atomic adds).
ATOMICS = "atomics"
OPTIONAL = [STREAM] + INTERVAL + [ATOMICS]
# Optional counts (sim backend): the LLC misses in each of 16 equal slices
# of a site's objects (formats.profile.SLICE_COLUMNS); the cumulative share
# of a site's misses is known at these fractions of an object.
SLICE_GRID = np.linspace(0.0, 1.0, len(SLICE_COLUMNS) + 1)


def miss_curves(sites: pd.DataFrame) -> pd.Series:
    """Per site: the cumulative share of its LLC misses over the slices of
    its objects (len(SLICE_COLUMNS) + 1 points from 0 to 1, at SLICE_GRID),
    where the profile counted them and they are not all zero; else None
    (misses taken as uniform over the bytes)."""
    out = pd.Series([None] * len(sites), index=sites.index, dtype="object")
    if not all(c in sites for c in SLICE_COLUMNS):
        return out
    m = sites[SLICE_COLUMNS].astype("float64")
    tot = m.sum(axis=1, min_count=len(SLICE_COLUMNS))
    for i in sites.index[(tot > 0).fillna(False)]:
        c = np.concatenate([[0.0], np.cumsum(m.loc[i].to_numpy()) / tot[i]])
        out[i] = tuple(float(x) for x in c)
    return out


def head_share(curve: object, x: float | np.ndarray) -> float | np.ndarray:
    """The share of a site's misses in the first fraction x of each object
    (a DRAM head of x of the bytes): by its miss curve (miss_curves), x
    itself where there is none (uniform)."""
    x = np.clip(x, 0.0, 1.0)
    if curve is None:
        return x
    return np.interp(x, SLICE_GRID, np.asarray(curve, dtype="float64"))


def counts_of(df: pd.DataFrame) -> pd.DataFrame:
    """Access counts as float64, empty (not measured) as 0; and the
    OPTIONAL counts, NaN where not measured. `df`: sites as the reader
    typed them (Int64), or per-tier counts (float64)."""
    num = lambda c: df[c].astype("float64")
    out = pd.DataFrame(
        {c: (num(c).fillna(0.0) if c in df else 0.0) for c in COUNTS}, index=df.index
    )
    for c in OPTIONAL:
        out[c] = num(c) if c in df else float("nan")
    return out


def latency_share(c: pd.DataFrame) -> pd.Series:
    """Share of each row's LLC misses that pay the tier's latency (1 / MLP):
    the misses that lead an interval, measured by the interval model; NaN
    where it was not counted."""
    miss = c["llc_load_misses"] + c["llc_store_misses"]
    lead = (1 - c[OVERLAPPED] / miss.where(miss > 0)).clip(0, 1)
    return lead.where(miss > 0, 0.0).where(c[OVERLAPPED].notna())


def mlp_of(c: pd.DataFrame, model: TierModel) -> pd.Series:
    """Memory-level parallelism each row's misses are charged with: measured
    (misses / leading misses; inf when every miss overlapped), else the
    model's constant; NaN for a row without misses."""
    share = latency_share(c)
    miss = c["llc_load_misses"] + c["llc_store_misses"]
    mlp = (1 / share.where(share > 0)).fillna(np.inf).where(share.notna(), model.mlp)
    return mlp.where(miss > 0)  # NaN: no misses


def streamed(c: pd.DataFrame, model: TierModel) -> pd.Series:
    """Rows whose LLC misses are at most `stream_miss_ratio` of their loads
    and stores: accesses that sweep lines (one miss per line of small
    elements), which hardware prefetchers hide (seed 002 fig. 1). The
    fallback where sequential misses were not counted."""
    acc = c["loads"] + c["stores"]
    miss = c["llc_load_misses"] + c["llc_store_misses"]
    return (acc > 0) & (miss <= model.stream_miss_ratio * acc)


def stream_share(c: pd.DataFrame, model: TierModel) -> pd.Series:
    """Share of each row's LLC misses that are sequential: measured where
    STREAM was counted, else 1 or 0 by the ratio rule (streamed())."""
    miss = c["llc_load_misses"] + c["llc_store_misses"]
    q = (c[STREAM] / miss.where(miss > 0)).clip(0, 1).fillna(0.0)
    return q.where(c[STREAM].notna(), streamed(c, model).astype("float64"))


def _time_parts(c: pd.DataFrame, tier, model):
    lat = (
        c["llc_load_misses"] * tier.read_latency_ns + c["llc_store_misses"] * tier.write_latency_ns
    ) * 1e-9
    q = stream_share(c, model)
    fallback = lat / model.mlp * ((1 - q) + q / model.prefetch_factor)
    lat = (lat * latency_share(c)).where(c[OVERLAPPED].notna(), fallback)
    bw = (c["llc_load_misses"] + c["llc_store_misses"]) * model.line_bytes / (
        tier.read_bandwidth_gbs * 1e9
    ) + c["writebacks"] * model.line_bytes / (tier.write_bandwidth_gbs * 1e9)
    return lat, bw


def time_on(df: pd.DataFrame, tier: Tier, model: TierModel) -> pd.Series:
    """Modelled memory time (s) of each row's accesses if served by `tier`."""
    lat, bw = _time_parts(counts_of(df), tier, model)
    return np.maximum(lat, bw)


def baseline_seconds(df: pd.DataFrame, model: TierModel) -> float:
    """Compute baseline: loads + stores at compute_ns_per_access each, and
    locked read-modify-writes (where counted) at atomic_ns each."""
    c = counts_of(df)
    ns = (c["loads"] + c["stores"]).sum() * model.compute_ns_per_access
    ns += c[ATOMICS].fillna(0).sum() * model.atomic_ns
    return float(ns * 1e-9)


def system_tier(model: TierModel) -> Tier:
    """The tier unplaceable memory (static data, stacks) lives in."""
    return model.fast if model.fast.name == "dram" or model.slow.name != "dram" else model.slow


def site_costs(sites: pd.DataFrame, model: TierModel) -> pd.DataFrame:
    """Per site: t_fast, t_slow (s), benefit (s), regime on the slow tier
    ('latency', 'streamed': latency bound after prefetching, or 'bandwidth'), placeable (bool), bytes (peak_bytes).
    """
    c = counts_of(sites)
    lat_s, bw_s = _time_parts(c, model.slow, model)
    out = pd.DataFrame(index=sites.index)
    out["stack"] = sites["stack"]
    out["bytes"] = sites["peak_bytes"].fillna(0).astype("int64")
    out["t_fast"] = time_on(sites, model.fast, model)
    out["t_slow"] = np.maximum(lat_s, bw_s)
    out["benefit"] = out["t_slow"] - out["t_fast"]
    out["regime"] = np.where(
        bw_s > lat_s, "bandwidth", np.where(stream_share(c, model) >= 0.5, "streamed", "latency")
    )
    out["placeable"] = ~sites["stack"].isin(PSEUDO_SITES)
    out["mlp"] = mlp_of(c, model)
    # where in its objects the site's misses are (None: uniform)
    out["miss_curve"] = miss_curves(sites)
    return out


def placement_seconds(
    sites: pd.DataFrame, costs: pd.DataFrame, model: TierModel, fast_fraction: Iterable | Mapping
) -> float:
    """Modelled time of a placement: `fast_fraction` maps site index -> the
    fraction of that site's accesses served by the fast tier (1 = all in the
    fast tier, 0 = all slow; sites not in it are slow). Accesses are assumed
    spread uniformly over a site's bytes when the fraction is partial."""
    f = pd.Series(0.0, index=costs.index)
    if isinstance(fast_fraction, (set, frozenset, list)):
        f[list(fast_fraction)] = 1.0
    else:
        ff = pd.Series(fast_fraction, dtype="float64")
        f[ff.index] = ff.clip(0, 1)
    f[~costs["placeable"]] = 1.0 if system_tier(model) is model.fast else 0.0
    mem = (f * costs["t_fast"] + (1 - f) * costs["t_slow"]).sum()
    return baseline_seconds(sites, model) + float(mem)


def modelled_time(counts: pd.DataFrame, model: TierModel) -> dict:
    """Modelled time from per-site per-tier counts: rows with a `tier`
    column (a tier name of `model`) and the COUNTS columns. Returns
    {"seconds": total, "baseline": s, "per_tier": {tier: {counts..., seconds}}}."""
    if counts.empty:
        return {"seconds": 0.0, "baseline": 0.0, "per_tier": {}}
    base = baseline_seconds(counts, model)
    per_tier = {}
    total = base
    for name, rows in counts.groupby("tier", sort=True):
        t = time_on(rows, model.tier(str(name)), model).sum()
        c = counts_of(rows)[COUNTS].sum()
        per_tier[str(name)] = {**{k: int(v) for k, v in c.items()}, "seconds": float(t)}
        total += float(t)
    return {"seconds": total, "baseline": base, "per_tier": per_tier}
