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
import math
import os
import shutil
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
        help="pages kept armed, in runs of 4, while --sample-overhead allows; with the "
        "budget earned before a --roi region, up to 256 in it (default 32)",
    )
    group.add_argument(
        "--sample-overhead",
        type=count_option(1, 100),
        default=10,
        metavar="PCT",
        help="the sampler's page-protection calls take at most PCT%% of the run's time "
        "so far (their measured time): the bound on its overhead; time not spent "
        "outside a --roi region is spent in it (default 10)",
    )
    group.add_argument(
        "--sample-runs",
        type=count_option(1, 100),
        default=1,
        metavar="N",
        help="run the command N times and pool their samples (N times the time; the "
        "last run's census and output are the profile's, the others' stdout is "
        "dropped): one run's placement moves by several percent from the next's "
        "(default 1)",
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
# tw_touch.c's windows (us: tw_soon_ns), in which a run's first touch is
# counted; a run lives at least as long as the last
SOON_US = [10, 100, 1000, 10000]
SOON_LAST_S = SOON_US[-1] * 1e-6
# first touches a window bin needs before its rate is believed
MIN_TOUCHES = 5
# how unlikely under random access (1 in RUN first touches at the first
# page) a site's first-page count must be before its sweeps are believed:
# a sweep multiplies a visit's line touches by up to RUN x 64
SWEEP_P = 0.01


def chance_tail(k: int, n: int, p: float) -> float:
    """P(at least k of n) for a binomial of n trials at p, 0 < p < 1. Summed
    in logs: comb(n, i) overflows a float from about n = 1030, which a
    site's touched runs reach with many pages armed or pooled runs."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    lp, lq = math.log(p), math.log1p(-p)
    terms = [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * lp + (n - i) * lq
             for i in range(k, n + 1)]
    top = max(terms)
    return min(1.0, math.exp(top) * sum(math.exp(t - top) for t in terms))


# first touches in a whole run below which its placement is mostly noise
# (advisor/README.md "The sample backend": the guest's bfs region, 0.05 s,
# had 9)
FEW_TOUCHES = 100


def site_model(raw: dict[str, Any]) -> dict[str, float]:
    """One site's samples (the C sampler's per-site columns, tw_touch.c) as
    page visits over the run: `sweeps` (visits of a page by a sweep, which
    touches all its lines) and `random` (single-line visits), `page_s`
    (page-seconds its samples stand for), `sweep` (the share of visits
    that are sweeps), `write` (the share of visits whose first access
    wrote).

    A sweep enters a run at its first page and touches the run's R pages
    as one visit; random visits land on any page. With `a` the first-page
    share of the runs touched within the longest window d (10 ms), s = (a
    R - 1) / (R - 1) of those touches are sweeps: a page is swept S =
    -ln(1 - s x touched share) / d times a second (the run's rate: each
    sweep visits all its pages). The page rate L of page_visits, from the
    fastest window bin with touches, gives the random visits, Q = L (1 -
    s). (Sweeps read as L s made swept arrays R times too cold; as R L s,
    a site's random phase, which fills the short windows, multiplied its
    sweeps: pagerank-push's edge array, scattered
    while the graph is built and then swept, came out at 14x the sim's
    misses.) A site's runs are read as sweeps only where that many
    first-page touches had a chance below SWEEP_P under random access: 5
    of 5 (1 in 1024) are, 3 of 4 (1 in 20) are not."""
    touched = raw.get("any_touched", 0)
    page_s = raw.get("any_page_ms", 0) * 1e-3
    visits = page_visits(raw, "any")
    runs, at_first = raw.get("runs", 0), raw.get("at_first", 0)
    run = raw.get("run_pages", 4)
    sweep = 0.0
    if run > 1 and runs and chance_tail(at_first, runs, 1 / run) < SWEEP_P:
        sweep = min(max((at_first / runs * run - 1) / (run - 1), 0.0), 1.0)
    write = raw.get("first_was_write", 0) / touched if touched else 0.0
    armed, soon = raw.get("any_runs", 0), raw.get("any_soon") or []
    swept = 0.0
    if sweep and armed and soon:
        share = min(sweep * soon[-1] / armed, 1 - 0.5 / armed)
        swept = -math.log1p(-share) / SOON_LAST_S * page_s
    return {
        "sweeps": swept,
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


def reprice(sites_csv: Path, raw: dict[int, dict[str, Any]], llc: int, seconds: float) -> None:
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


def _run_samples(where: Path, params: dict[str, Any]) -> tuple:
    """One run's (site -> stack, samples by site, pmu.json's other counts)."""
    from tierwise.formats import profile as profile_format

    rows = profile_format.read_rows(where / "sites.csv", profile_format.REQUIRED_SITE_COLUMNS)
    stacks = {row["site"]: row["stack"] for row in rows}
    cols = params.get("site_columns", [])
    sites = {k: dict(zip(cols, v)) for k, v in params.get("sites", {}).items()}
    return stacks, sites, {k: v for k, v in params.items() if isinstance(v, (int, float))}


def _pooled_samples_column(sites_csv: Path, by_site: dict[str, dict]) -> None:
    """sites.csv's `samples`: the pooled runs' page samples of each site."""
    from tierwise.formats import profile as profile_format

    cols = profile_format.REQUIRED_SITE_COLUMNS + ["samples"]
    rows = profile_format.read_rows(sites_csv, cols)
    for row in rows:
        r = by_site.get(row["site"])
        if r:
            row["samples"] = str(r.get("any_samples", 0) + r.get("write_samples", 0))
    profile_format.write_rows(sites_csv, cols, rows)


def page_visits(raw: dict[str, Any], kind: str, soon_us: list[int] = SOON_US) -> float:
    """A site's page visits of kind `any` (first accesses) or `write` (first
    writes) over the run, from its runs' first-touch windows (tw_touch.c's
    counts): the fastest rate at which runs were first touched in a window
    bin with 5 touches or more, ln(S0 / S1) / (the bin's length) with S the
    share of runs not yet touched at the bin's edges (the bin with the
    most touches where none has 5), over the run's R pages, times the
    page-seconds the samples stand for.

    Each bin is measured from its own start: first touches come after a
    dead time (a fault's latency natively, ~100 us in a TCG guest), and
    the shortest window with 5 touches read from 0 (what tw_touch.c
    computed before) made a TCG guest's contrib array, touched within 1 ms
    in 113 of 118 runs but within 100 us in 5, 8x colder than that. The
    fastest bin is a page's rate while in use, as an array used in bursts
    needs (touch_check's hot array; the bin with the most touches put it
    below the cold one in 3 runs of 10). At 20% on 10 programs: one run's
    placement 1.032-1.077x the sim placement's, three pooled 1.030x/1.029x
    (5 within 3%), against 1.048-1.086x and 1.026x/1.025x before."""
    n, soon = raw.get(f"{kind}_runs", 0), raw.get(f"{kind}_soon") or []
    if n <= 0 or not soon:
        return 0.0
    edges = [0.0] + [x * 1e-6 for x in soon_us]
    cum = [0] + list(soon)
    rate, most, busiest = 0.0, 0, 0.0
    for j in range(1, len(cum)):
        got = cum[j] - cum[j - 1]
        s0, s1 = 1 - cum[j - 1] / n, max(1 - cum[j] / n, 0.5 / n)
        if s0 <= s1:
            continue
        h = math.log(s0 / s1) / (edges[j] - edges[j - 1])
        if got >= MIN_TOUCHES:
            rate = max(rate, h)
        elif got > most:
            most, busiest = got, h
    return (rate or busiest) / raw.get("run_pages", 4) * raw.get(f"{kind}_page_ms", 0) * 1e-3


def pool(runs: list[tuple]) -> dict[str, dict]:
    """Per stack, the samples of several runs of one command as those of one
    run: each run's (site -> stack, pmu.json's sites by site) summed by
    stack, the page-seconds averaged."""
    acc: dict[str, dict[str, Any]] = {}
    for stacks, sites, *_ in runs:
        for site, r in sites.items():
            a = acc.setdefault(stacks.get(site, f"?{site}"), {})
            for c, v in r.items():
                if isinstance(v, list):
                    a[c] = [x + y for x, y in zip(a.get(c, [0] * len(v)), v)]
                elif c == "run_pages":
                    a[c] = v
                else:
                    a[c] = a.get(c, 0) + v
    for a in acc.values():
        for kind in ("any", "write"):
            a[f"{kind}_page_ms"] = a.get(f"{kind}_page_ms", 0) / len(runs)
    return acc


def run(args: argparse.Namespace, cmd: list[str], outdir: Path) -> dict[str, Any]:
    ok, why = available(args)
    if not ok:
        raise FileNotFoundError(f"sample backend unavailable: {why}")
    # (pipeline.profile refuses any --roi but all and markers for this backend)
    roi = (getattr(args, "roi", None) or "all").strip()
    print(
        f"tierwise profile: sample: {args.sample_pages} pages armed, each run for "
        f"{args.sample_tick} us, within {args.sample_overhead}% of the run's time",
        file=sys.stderr,
    )
    settings = {
        "TIERWISE_PMU_SOURCE": "touch",
        "TIERWISE_DEPTH": str(getattr(args, "depth", 6)),
        "TIERWISE_PMU_MIN_BYTES": str(args.sample_min_bytes),
        "TIERWISE_TOUCH_TICK_US": str(args.sample_tick),
        "TIERWISE_TOUCH_PAGES": str(args.sample_pages),
        "TIERWISE_TOUCH_OVERHEAD": str(args.sample_overhead),
        "TIERWISE_TOUCH_ROI": "1" if roi == "markers" else "0",
    }
    # Open MPI's single-copy transfers read a peer's buffers from the
    # kernel (process_vm_readv), which a sampled page would fail
    if "OMPI_MCA_btl_vader_single_copy_mechanism" not in os.environ:
        settings["OMPI_MCA_btl_vader_single_copy_mechanism"] = "none"
    n = getattr(args, "sample_runs", 1) or 1
    earlier: list[tuple] = []
    spent = 0.0
    for k in range(n):
        # runs before the last write into .runs/K; the last, the profile
        where = Path(outdir) / ".runs" / str(k) if k < n - 1 else Path(outdir)
        where.mkdir(parents=True, exist_ok=True)
        if n > 1:
            print(f"tierwise profile: sample: run {k + 1} of {n}", file=sys.stderr, flush=True)
        t0 = time.monotonic()
        rc, params = pmu.run_library(cmd, where, settings, "sample", quiet=k < n - 1)
        spent += time.monotonic() - t0
        if k < n - 1:
            if rc != 0:
                print(f"tierwise profile: warning: sample: run {k + 1} of {n} exited with "
                      f"status {rc}; its samples are pooled all the same", file=sys.stderr)
            earlier.append(_run_samples(where, params))
            shutil.rmtree(where, ignore_errors=True)
    if earlier:
        shutil.rmtree(Path(outdir) / ".runs", ignore_errors=True)
    seconds = spent / n
    columns = params.get("site_columns", [])
    if earlier:  # the last run's sites, with every run's samples
        last = _run_samples(Path(outdir), params)
        pooled = pool(earlier + [last])
        by_site = {site: pooled[stack] for site, stack in last[0].items() if stack in pooled}
        params["sites"] = {str(site): [r.get(c, 0) for c in columns] for site, r in by_site.items()}
        for key in ("ticks", "armed", "faults", "retried", "skipped_in_io", "roi_entered",
                    "mprotects", "mprotect_us", "sampler_us"):
            if key in params:
                params[key] = int(params[key]) + sum(int(e[2].get(key, 0)) for e in earlier)
        if "roi_us" in params:
            params["roi_us"] = (params["roi_us"] + sum(e[2].get("roi_us", 0) for e in earlier)) / n
        params["runs"] = n
        _pooled_samples_column(Path(outdir) / "sites.csv", by_site)
    raw = params.pop("sites", {})
    params.pop("site_columns", None)
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
        span = ("the region" if roi == "markers" else "the run") + (f"s of {n} runs" if n > 1 else "")
        print(
            f"tierwise profile: warning: sample: {touched} of {params.get('armed', 0)} armed pages "
            f"were touched in {span} ({seconds:.2f} s{' each' if n > 1 else ''}): too few to rank its sites by (runs of "
            "a second give 100-300); profile a longer run or region, pool runs "
            "(--sample-runs), or let the sampler spend more (--sample-overhead)",
            file=sys.stderr,
        )
    llc = int(geometry(args)["llc_size"])
    reprice(Path(outdir) / "sites.csv", {int(k): dict(zip(columns, v)) for k, v in raw.items()},
            llc, seconds)
    params.update(
        seconds=round(seconds, 6),  # the page-seconds' span: a run's (region's) mean
        samples={"columns": columns, "sites": raw},  # what the counts came from
        min_bytes=args.sample_min_bytes,
        llc_size=llc,
        scaling="page visits from first touches of sampled runs of pages (tw_touch.c)",
        model="visits as line touches, priced with an LRU cache of llc_size (Che's "
        "approximation)",
    )
    return pmu.finished(Path(outdir), rc, params)
