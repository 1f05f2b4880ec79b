# SPDX-License-Identifier: MIT
"""The `sample` profiling backend: runs the command at close to native
speed with LD_PRELOAD=libtierwise-pmu.so in its page-touch mode
(TIERWISE_PMU_SOURCE=touch, runtime/src/tw_touch.c): the census of the alloc
backend (sites, objects, modules), plus the first touches of sampled runs
of the live objects' pages, protected a tick at a time as NUMA balancing's
hint faults do. No PMU, Valgrind or privileges. The library estimates each
site's page visits; this module prices them (`reprice`: line touches
through an LRU cache) into sites.csv's count columns, with the samples
taken (`samples`, each site's confidence); advisor/README.md "The sample
backend" says how they compare with the sim backend's counts.

formats.profile (pandas) is imported where it is used (see pmu.py)."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from tierwise import paths
from tierwise.backends import pmu
from tierwise.backends.sim import geometry
from tierwise.sizes import count_option, size_option


def add_arguments(group: Any) -> None:
    group.add_argument(
        "--sample-tick",
        type=count_option(10_000, 10_000_000),
        default=10_000,
        metavar="US",
        help="microseconds a sampled run of pages waits for its first touch "
        "(default 10000)",
    )
    group.add_argument(
        "--sample-pages",
        type=count_option(8, 256),
        default=32,
        metavar="N",
        help="pages kept armed, in runs of 4: the bound on the overhead (default 32)",
    )
    group.add_argument(
        "--sample-min-bytes",
        type=size_option(4096, 2**62),
        default=16384,
        metavar="SIZE",
        help="sample objects of at least SIZE bytes; smaller ones are counted, "
        "not sampled (default 16K: above stdio's buffers, which the kernel fills)",
    )


def available(args: argparse.Namespace | None = None) -> tuple[bool, str]:
    lib = paths.native(pmu.PRELOAD)
    if not lib.exists():
        return False, paths.missing(lib)
    return True, "page-touch sampling"


LINE = 64
PAGE = 4096
# how unlikely under random access (1 in RUN first touches at the first
# page) a site's first-page count must be before its sweeps are believed:
# a sweep multiplies a visit's line touches by up to RUN x 64
SWEEP_P = 0.01


def chance_tail(k: int, n: int, p: float) -> float:
    """P(at least k of n) for a binomial of n trials at p."""
    from math import comb

    return sum(comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1))


# first touches in a whole run below which its placement is mostly noise
# (advisor/README.md "The sample backend": the guest's bfs region, 0.05 s,
# had 9)
FEW_TOUCHES = 100


def site_model(raw: dict[str, int]) -> dict[str, float]:
    """One site's samples (the C sampler's per-site columns, tw_touch.c) as
    page visits over the run: `sweeps` (visits of a page by a sweep, which
    touches all its lines) and `random` (single-line visits), `page_s`
    (page-seconds its samples stand for), `sweep` (the share of visits
    that are sweeps), `write` (the share of visits whose first access
    wrote).

    The C rate is L = -ln(1 - share) / (R d) per page, as if each of a
    run's R pages were visited on its own; its first touches say how much
    of that is sweeps: a sweep enters a run at its first page, touching the
    run's pages as one visit, random visits land on any page. With sweeps
    of a page at rate S and random visits at rate Q, the run is first
    touched at rate S + R Q = R L, at its first page at S + Q: so with `a`
    the first-page share of touched runs, S = R L s and Q = L (1 - s),
    s = (a R - 1) / (R - 1). (An earlier reading took the sweeps as L s,
    which made swept arrays R times colder than the sim backend counts.)
    A site's runs are read as sweeps only where that many first-page
    touches had a chance below SWEEP_P under random access: 5 of 5 (1 in
    1024) are, 3 of 4 (1 in 20) are not."""
    touched = raw.get("any_touched", 0)
    page_s = raw.get("any_page_ms", 0) * 1e-3
    visits = float(raw.get("any_visits", 0))  # tw_touch.c tw_rate_est
    runs, at_first = raw.get("runs", 0), raw.get("at_first", 0)
    run = raw.get("run_pages", 4)
    sweep = 0.0
    if run > 1 and runs and chance_tail(at_first, runs, 1 / run) < SWEEP_P:
        sweep = min(max((at_first / runs * run - 1) / (run - 1), 0.0), 1.0)
    write = raw.get("first_was_write", 0) / touched if touched else 0.0
    return {
        "sweeps": visits * run * sweep,
        "random": visits * (1 - sweep),
        "page_s": page_s,
        "sweep": sweep,
        "write": write,
    }


def che_time(lines: list[float], rates: list[float], capacity: float) -> float:
    """Che's approximation of an LRU cache of `capacity` lines: the time T
    for which the lines touched in T at their rates fill the cache,
    sum(lines_i * (1 - exp(-rate_i * T))) = capacity (inf when everything
    fits). A line touched at rate r then misses with probability
    exp(-r * T)."""
    import math

    total = sum(n for n, r in zip(lines, rates) if r > 0)
    if total <= capacity:
        return math.inf

    def filled(t: float) -> float:
        return sum(n * -math.expm1(-r * t) for n, r in zip(lines, rates) if r > 0)

    lo, hi = 0.0, 1.0
    while filled(hi) < capacity:
        hi *= 2
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if filled(mid) < capacity else (lo, mid)
    return hi


def reprice(sites_csv: Path, raw: dict[int, dict[str, int]], llc: int, seconds: float) -> None:
    """sites.csv's count columns from the page samples: a visit that sweeps
    a page touches its 64 lines, any other one line; each line's touches
    miss an LRU cache of `llc` bytes with Che's probability, the lines
    competing for it being each site's live lines on average over the run
    (`seconds`: its page-seconds / the run's; an array of the loading phase
    does not crowd the kernel's out as if it lived all along); the misses
    split by the first access's kind; the sweeps' misses are
    llc_stream_misses (prefetched, as the sim backend counts them)."""
    import math

    from tierwise.formats import profile as profile_format

    rows = profile_format.read_rows(sites_csv, profile_format.REQUIRED_SITE_COLUMNS + ["samples"])
    models: dict[int, dict[str, float]] = {}
    lines: list[float] = []
    rates: list[float] = []
    for row in rows:
        site = int(row["site"])
        if site not in raw:
            continue
        m = site_model(raw[site])
        m["swept"] = m["sweeps"] * (PAGE // LINE)  # line touches of sweeps
        m["touches"] = m["swept"] + m["random"]
        pages = min(int(row["peak_bytes"] or 0) / PAGE, m["page_s"] / max(seconds, 1e-9))
        m["lines"] = pages * (PAGE // LINE)
        per_line_s = m["page_s"] * (PAGE // LINE)  # line-seconds
        m["rate"] = m["touches"] / per_line_s if per_line_s > 0 else 0.0
        models[site] = m
        lines.append(m["lines"])
        rates.append(m["rate"])
    t = che_time(lines, rates, llc / LINE)
    for row in rows:
        got = models.get(int(row["site"]))
        if got is None:  # no page of it was sampled: not measured, not 0
            for col in ("loads", "stores", "llc_load_misses", "llc_store_misses",
                        "writebacks"):
                row[col] = ""
            continue
        m = got
        miss = m["touches"] * (math.exp(-m["rate"] * t) if math.isfinite(t) else 0.0)
        w = m["write"]
        row["loads"] = str(round(m["touches"] * (1 - w)))
        row["stores"] = str(round(m["touches"] * w))
        row["llc_load_misses"] = str(round(miss * (1 - w)))
        row["llc_store_misses"] = str(round(miss * w))
        row["writebacks"] = str(round(miss * w))
        row["llc_stream_misses"] = str(round(miss * m["swept"] / m["touches"] if m["touches"] else 0))
    cols = profile_format.REQUIRED_SITE_COLUMNS + ["llc_stream_misses", "samples"]
    profile_format.write_rows(sites_csv, cols, rows)


def run(args: argparse.Namespace, cmd: list[str], outdir: Path) -> dict[str, Any]:
    ok, why = available(args)
    if not ok:
        raise FileNotFoundError(f"sample backend unavailable: {why}")
    roi = (getattr(args, "roi", None) or "all").strip()
    if roi not in ("all", "markers"):
        raise ValueError(
            f"--roi {roi}: the sample backend counts a region only between markers "
            "(--roi markers: TIERWISE_ROI_BEGIN/END of tierwise.h); a function's region "
            "needs the sim backend"
        )
    print(
        f"tierwise profile: sample: {args.sample_pages} pages armed, each run for "
        f"{args.sample_tick} us",
        file=sys.stderr,
    )
    settings = {
        "TIERWISE_PMU_SOURCE": "touch",
        "TIERWISE_DEPTH": str(getattr(args, "depth", 6)),
        "TIERWISE_PMU_MIN_BYTES": str(args.sample_min_bytes),
        "TIERWISE_TOUCH_TICK_US": str(args.sample_tick),
        "TIERWISE_TOUCH_PAGES": str(args.sample_pages),
        "TIERWISE_TOUCH_ROI": "1" if roi == "markers" else "0",
    }
    # Open MPI's single-copy transfers read a peer's buffers from the
    # kernel (process_vm_readv), which a sampled page would fail
    if "OMPI_MCA_btl_vader_single_copy_mechanism" not in os.environ:
        settings["OMPI_MCA_btl_vader_single_copy_mechanism"] = "none"
    t0 = time.monotonic()
    rc, params = pmu.run_library(cmd, Path(outdir), settings, "sample")
    seconds = time.monotonic() - t0
    raw = params.pop("sites", {})
    columns = params.pop("site_columns", [])
    if roi == "markers":
        entered, roi_s = params.pop("roi_entered", 0), params.pop("roi_us", 0) * 1e-6
        if not entered:
            for name in ("sites.csv", "objects.csv", "modules.csv"):
                (Path(outdir) / name).unlink(missing_ok=True)
            raise ValueError(
                "--roi markers: the region was never entered, so nothing was sampled (no "
                "TIERWISE_ROI_BEGIN() ran, or the program was built with an older tierwise.h, "
                "whose markers only Valgrind sees)"
                if rc == 0
                else f"{cmd[0]} ended (status {rc}) before the region (--roi markers) was "
                "entered, so nothing was sampled"
            )
        seconds = roi_s  # the page-seconds the samples stand for are the region's
        params["roi"] = {"mode": "markers", "entries": entered, "seconds": round(roi_s, 6)}
    touched = int(params.get("faults", 0))
    if touched < FEW_TOUCHES:
        where = "the region" if roi == "markers" else "the run"
        print(
            f"tierwise profile: warning: sample: {touched} of {params.get('armed', 0)} armed pages "
            f"were touched in {where} ({seconds:.2f} s): too few to rank its sites by (runs of "
            "a second give 100-300); profile a longer run or region, or arm more pages "
            "(--sample-pages, at more cost)",
            file=sys.stderr,
        )
    llc = int(geometry(args)["llc_size"])
    reprice(Path(outdir) / "sites.csv", {int(k): dict(zip(columns, v)) for k, v in raw.items()},
            llc, seconds)
    params.update(
        samples={"columns": columns, "sites": raw},  # what the counts came from
        min_bytes=args.sample_min_bytes,
        llc_size=llc,
        scaling="page visits from first touches of sampled runs of pages (tw_touch.c)",
        model="visits as line touches, priced with an LRU cache of llc_size (Che's "
        "approximation)",
    )
    return pmu.finished(Path(outdir), rc, params)
