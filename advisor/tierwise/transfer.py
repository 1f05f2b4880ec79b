# SPDX-License-Identifier: MIT
"""Profile small, run big: carry the access behaviour of small profiled runs
over to a target run known from its allocation census (`tierwise profile
--backend alloc` at full size: true sizes and lifetimes, no access counts).

Sites are matched by `stack` (the site identity of advisor/FORMATS.md, so
the same binary at any input size names a site alike). For every count
column (loads, stores, LLC misses, writebacks, sequential misses) of a site:

- one small profile: the count is scaled by the site's bytes, target peak
  bytes / profiled peak bytes (accesses proportional to the data, the
  assumption of graph kernels that sweep their arrays a fixed number of
  times per iteration);
- two or more: a power law count = a * x^b is fitted per site and column by
  least squares on log-log axes over the profiles where the count is
  non-zero, x being the site's peak bytes where they grow with the input,
  else the run's peak live footprint (a fixed-size buffer whose traffic
  grows with the run), and evaluated at the target's x. Exponents are
  clipped to [0, 3]; the fit of each site is reported (exponent of loads
  and of misses, R^2 when three or more points).

Pseudo-sites ([static], [stack], [unknown]) scale with the run's footprint.
Sites of the census that no small profile has get no counts (benefit 0:
the default tier); sites only in the small profiles are dropped. Both are
listed. Miss rates carry over only when each small run simulated the
target's LLC scaled by its footprint over the target's; a profile that did
not is named with the --llc-size to use, and a site that fits the small
runs' cache but not the target's is named too (advisor/README.md "Profile
small, run big").
"""

from __future__ import annotations

from dataclasses import dataclass, field
import os
from typing import Optional, Sequence

import numpy as np
import pandas as pd

from tierwise import reader
from tierwise.advice import format_rows
from tierwise.formats.profile import SLICE_COLUMNS, count
from tierwise.reader import PSEUDO_SITES
from tierwise.select import peak_footprint

# the columns carried over (allocation columns come from the census)
CARRIED = [
    "loads",
    "stores",
    "llc_load_misses",
    "llc_store_misses",
    "writebacks",
    "llc_stream_misses",
]
MAX_EXPONENT = 3.0
# a small profile's LLC / footprint may differ from the target's by this
# factor before the transfer says that its miss rates will not carry over
CACHE_RATIO_SLACK = 1.5


@dataclass
class Transfer:
    """The target profile (census sizes and timeline, carried counts) and
    what the transfer did."""

    profile: reader.Profile
    method: str  # "scale-by-bytes" or "fit"
    footprints: list  # peak live footprint of each small profile
    target_footprint: int
    fits: pd.DataFrame  # per target site: x, x_small, x_target, exponents, r2
    only_small: list = field(default_factory=list)  # (stack, location)
    only_target: list = field(default_factory=list)  # (stack, location, peak bytes)
    outgrows_llc: list = field(default_factory=list)  # (location, small bytes, target bytes, llc)
    target_llc: Optional[int] = None
    cache_notes: list = field(default_factory=list)

    def to_json(self) -> dict:
        """placement.json `target`: what the placement was carried over to."""
        return {
            "census": str(self.profile.paths[0]),
            "profiles": [str(q) for q in self.profile.paths[1:]],
            "method": self.method,
            "footprint_bytes": int(self.target_footprint),
            "profile_footprints": [int(f) for f in self.footprints],
            "llc_bytes": self.target_llc,
            "only_small": [loc or st for st, loc in self.only_small],
            "only_target": [loc or st for st, loc, _ in self.only_target],
        }

    def notes(self) -> list:
        n = len(self.footprints)
        out = [
            (
                "transfer: 1 small profile; counts scaled by each site's bytes "
                "(target peak bytes / profiled peak bytes)"
                if self.method == "scale-by-bytes"
                else f"transfer: {n} small profiles; each site's counts fitted as a power "
                "law of its bytes (or the run's footprint) and evaluated at the target"
            )
            + f"; target peak live footprint {self.target_footprint} bytes"
        ]
        for stack, loc in self.only_small:
            out.append(f"transfer: site only in the small profiles, dropped: {loc or stack}")
        for stack, loc, b in self.only_target:
            out.append(
                f"transfer: site only in the target census ({b} bytes), no counts "
                f"(default tier): {loc or stack}"
            )
        out += self.cache_notes
        for loc, small, big, llc in self.outgrows_llc:
            out.append(
                f"transfer: {loc} fits the small runs' LLC ({small} bytes) but not the target's "
                f"({big} bytes, LLC {llc}): its miss rate at the target may be higher than carried over"
            )
        return out


def _llc_bytes(meta: dict):
    cache = (meta.get("backend_params") or {}).get("cache") or {}
    size = cache.get("llc_size") if isinstance(cache, dict) else None
    return int(size) if isinstance(size, (int, float)) and size > 0 else None


def _fit(xs: np.ndarray, ys: np.ndarray, x_t: float):
    """Power-law fit of ys over xs (all > 0) evaluated at x_t: (value,
    exponent, r2 or NaN)."""
    lx, ly = np.log(xs), np.log(ys)
    if np.ptp(lx) <= 1e-9:
        return float(ys.mean()), float("nan"), float("nan")
    b, _ = np.polyfit(lx, ly, 1)
    b = float(np.clip(b, 0.0, MAX_EXPONENT))
    a = float(np.mean(ly - b * lx))
    pred = a + b * lx
    ss = float(((ly - ly.mean()) ** 2).sum())
    r2 = 1 - float(((ly - pred) ** 2).sum()) / ss if len(xs) >= 3 and ss > 0 else float("nan")
    return float(np.exp(a + b * np.log(x_t))), b, r2


def _check(small: list, census: reader.Profile):
    for p in small:
        if not p.sites[["loads", "stores", "llc_load_misses"]].notna().any().any():
            raise ValueError(
                f"{p.paths[0]}: a small profile has no access counts (backend "
                f"{p.meta[0].get('backend', '?')}); profile the small runs with --backend sim or pmu"
            )
    depths = {p.depth for p in small} | {census.depth}
    if len(depths) > 1:
        raise ValueError(
            f"the small profiles and the target census recorded different stack depths "
            f"{sorted(depths)}; profile again with the same --depth"
        )


def _target_sites(census: reader.Profile, by_stack: list) -> pd.DataFrame:
    """The census's sites, plus the pseudo-sites the small profiles have."""
    target = census.sites.copy()
    for s in PSEUDO_SITES:
        if s not in set(target["stack"]) and any(s in b.index for b in by_stack):
            row = {c: pd.NA for c in target.columns}
            row.update(stack=s, location=s)
            target.loc[len(target)] = row
    target = target.reset_index(drop=True)
    target["site"] = pd.array(np.arange(len(target)), dtype="Int64")
    return target.set_index("site", drop=False)


def carry(small: list, census: reader.Profile, target_llc: int | None = None) -> Transfer:
    """Build the target profile from small profiles (each a reader.Profile,
    counted) and the target's census (reader.Profile). `target_llc`: the
    LLC bytes of the machine that runs the target (None: the largest LLC the
    small profiles simulated, i.e. profiled on that machine)."""
    _check(small, census)
    feet = [max(peak_footprint(p), 1) for p in small]
    foot_t = max(peak_footprint(census), 1)
    method = "scale-by-bytes" if len(small) == 1 else "fit"
    by_stack = [p.sites.set_index("stack", drop=False) for p in small]
    target = _target_sites(census, by_stack)
    peak = lambda df, st: count(df.at[st, "peak_bytes"])
    llcs = [_llc_bytes(p.meta[0]) for p in small]
    llc_t = target_llc or max((x for x in llcs if x), default=None)
    cache_notes = []
    for p, l, f in zip(small, llcs, feet):
        # miss rates carry over when the data is the same multiple of the
        # cache at both sizes (advisor/README.md "Profile small, run big")
        if l and llc_t and abs(np.log((l / f) / (llc_t / foot_t))) > np.log(CACHE_RATIO_SLACK):
            want = int(llc_t * f / foot_t)
            cache_notes.append(
                f"transfer: {p.paths[0]} simulated a {l >> 10} KiB LLC for a {f >> 10} KiB "
                f"footprint, the target has {llc_t >> 10} KiB for {foot_t >> 10} KiB: miss rates "
                f"will not carry over; profile it with --llc-size {max(want >> 10, 1)}K"
            )
    fits, only_target, grows = [], [], []
    for i in target.index:
        st = target.at[i, "stack"]
        have = [k for k, b in enumerate(by_stack) if st in b.index]
        is_pseudo = st in PSEUDO_SITES
        x_t_site = 0.0 if is_pseudo else count(target.at[i, "peak_bytes"])
        rec = {"site": i, "profiles": len(have), "x": "", "x_target": x_t_site}
        if not have:
            for c in CARRIED:
                target.at[i, c] = pd.NA if c == "llc_stream_misses" else 0
            if not is_pseudo:
                only_target.append((st, target.at[i, "location"], int(x_t_site)))
            fits.append(rec)
            continue
        xs_site = np.array([peak(by_stack[k], st) for k in have])
        use_site = (
            not is_pseudo
            and (xs_site > 0).all()
            and x_t_site > 0
            and (len(have) == 1 or xs_site.max() > 1.01 * xs_site.min())
        )
        xs = xs_site if use_site else np.array([feet[k] for k in have], dtype="float64")
        x_t = x_t_site if use_site else float(foot_t)
        rec["x"] = "site bytes" if use_site else "footprint"
        rec["x_small"] = ";".join(str(int(v)) for v in xs)
        rec["x_target"] = x_t
        small_llc = min((llcs[k] for k in have if llcs[k]), default=None)
        if small_llc and llc_t and use_site and xs.max() <= small_llc and x_t > llc_t:
            grows.append((target.at[i, "location"] or st, int(xs.max()), int(x_t), llc_t))
        for c in CARRIED:
            ys = np.array(
                [count(by_stack[k].at[st, c]) for k in have],
                dtype="float64",
            )
            if np.isnan(ys).all():
                target.at[i, c] = pd.NA  # not measured
                continue
            ys = np.nan_to_num(ys)
            pos = ys > 0
            if not pos.any():
                value, b = 0.0, float("nan")
            elif pos.sum() == 1:  # one point: proportional to x
                k = int(np.flatnonzero(pos)[0])
                value, b = ys[k] * x_t / xs[k], 1.0
            else:
                value, b, r2 = _fit(xs[pos], ys[pos], x_t)
                if c == "loads":
                    rec["r2"] = r2
            target.at[i, c] = int(round(value))
            if c in ("loads", "llc_load_misses"):
                rec["b_" + c] = b
        # where in its objects the misses are: carried by relative position
        # (the slices are shares of each object's extent at any size)
        for c in SLICE_COLUMNS:
            ys = np.array([count(by_stack[k].at[st, c]) for k in have if c in by_stack[k]])
            ys = ys[~np.isnan(ys)] if len(ys) else ys
            target.at[i, c] = int(ys.sum()) if len(ys) else pd.NA
        # sequential misses are a share of the misses
        miss = (target.at[i, "llc_load_misses"] or 0) + (target.at[i, "llc_store_misses"] or 0)
        if pd.notna(target.at[i, "llc_stream_misses"]):
            target.at[i, "llc_stream_misses"] = min(int(target.at[i, "llc_stream_misses"]), int(miss))
        fits.append(rec)
    for c in CARRIED + SLICE_COLUMNS:
        target[c] = target[c].astype("Int64")
    # the census's own location wins; fill empty ones from the small profiles
    for i in target.index:
        if not target.at[i, "location"]:
            st = target.at[i, "stack"]
            target.at[i, "location"] = next(
                (b.at[st, "location"] for b in by_stack if st in b.index and b.at[st, "location"]),
                "",
            )
    known = set(target["stack"])
    only_small = []
    for b in by_stack:
        for st, loc in zip(b["stack"], b["location"]):
            if st not in known and (st, loc) not in only_small:
                only_small.append((st, loc))
    prof = reader.Profile(
        list(census.paths) + [q for p in small for q in p.paths],
        list(census.meta) + [m for p in small for m in p.meta],
        target,
        census.objects,
        census.modules,
        depth=census.depth,
        notes=list(census.notes),
    )
    t = Transfer(prof, method, feet, foot_t, pd.DataFrame(fits).set_index("site"))
    t.only_small, t.only_target, t.outgrows_llc = only_small, only_target, grows
    t.target_llc, t.cache_notes = llc_t, cache_notes
    prof.notes = prof.notes + t.notes()
    return t


def read(
    small_paths: Sequence[str | os.PathLike[str]],
    census_path: str | os.PathLike[str],
    target_llc: int | None = None,
) -> Transfer:
    """Read the small profiles and the target census and carry over."""
    census = reader.read_profile(census_path)
    backend = census.meta[0].get("backend")
    if backend != "alloc":
        # any profile gives sizes and lifetimes; say what it is
        census.notes.append(
            f"{census_path}: target profile of backend {backend}, used for its sizes and "
            "lifetimes only"
        )
    return carry([reader.read_profile(p) for p in small_paths], census, target_llc)


def format_fits(t: Transfer, limit: int = 30) -> str:
    """The transfer table `tierwise advise --target` prints: per site its
    bytes in the small runs and at the target, and the fitted growth of its
    loads and load misses (exponent b of count ~ x^b; R^2 with 3+ runs)."""
    s = t.profile.sites
    rows = t.fits[t.fits["profiles"] > 0].copy()
    rows["bytes"] = s.loc[rows.index, "peak_bytes"].fillna(0)
    rows = rows.sort_values("bytes", ascending=False, kind="mergesort")
    how = (
        "counts x (target bytes / profiled bytes)"
        if t.method == "scale-by-bytes"
        else "counts fitted as a * x^b (x: site bytes, or the run's footprint)"
    )
    title = (
        f"transfer to the target ({t.target_footprint / 2**20:.1f} MiB peak live footprint, "
        f"small runs {', '.join(f'{f / 2**20:.2f}' for f in t.footprints)} MiB): {how}"
    )
    fmt = lambda v: "-" if pd.isna(v) else f"{v:.2f}"
    shown = rows.head(limit)
    table = format_rows(
        lambda w: f"{'site':>4}  {'location':<{w}} {'x':<10} {'small':>22} {'target':>10} "
        f"{'b loads':>7} {'b miss':>7} {'R^2':>5}",
        shown,
        [s.at[i, "location"] or s.at[i, "stack"] for i in shown.index],
        lambda r: f"{r['x']:<10} {str(r.get('x_small', '')):>22} "
        f"{int(r['x_target']):>10} {fmt(r.get('b_loads')):>7} "
        f"{fmt(r.get('b_llc_load_misses')):>7} {fmt(r.get('r2')):>5}",
        f"... {len(rows) - limit} more sites" if len(rows) > limit else "",
    )
    return f"{title}\n{table}"
