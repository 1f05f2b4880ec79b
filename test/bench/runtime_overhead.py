#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Interposer overhead benchmark (not a timed test): adjlist (millions of
small mallocs through vector<vector<int>>) and pagerank-pull (few huge
allocations), run natively, under memkind's own libmemtier.so (static DRAM
tier), under the tierwise runtime with a placement naming every site (all in
dram, so only the interposer's cost is measured), and under the census.
Repetitions are interleaved; prints medians and ratios to native.

  python test/bench/runtime_overhead.py [--scale 18] [--reps 5] [--threads 2]
"""

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("TIERWISE_BUILD_DIR", ROOT / "build"))
MEMTIER = os.environ.get("TW_MEMTIER", "/usr/lib/x86_64-linux-gnu/libmemtier.so")
KERNELS = ["adjlist", "pagerank-pull"]


def timed(cmd, env, cpu=False):
    """Wall seconds of one run (or user+sys CPU seconds of it with cpu=True:
    steadier on a shared machine)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    out = proc.stdout.read()
    _, status, ru = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    r = subprocess.CompletedProcess(cmd, proc.returncode, out)
    dt = ru.ru_utime + ru.ru_stime if cpu else time.perf_counter() - t0
    if r.returncode:  # memtier aborts on some kernels (memkind assertion)
        return None, [f"exit status {r.returncode}"]
    return dt, [l for l in r.stdout.splitlines() if l.startswith("checksum")]


def placement_all_sites(cmd, env, work):
    """Census (the raw runtime output: no symbolization needed), then a
    placement naming every site (tier dram)."""
    prof = work / "prof"
    prof.mkdir(parents=True, exist_ok=True)
    lib = str(BUILD / "lib" / "libtierwise-runtime.so")
    subprocess.run(
        cmd,
        env=dict(env, LD_PRELOAD=lib, TIERWISE_CENSUS=str(prof)),
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    sites = [
        {"stack": r["stack"], "location": r["location"], "tier": "dram"}
        for r in csv.DictReader(open(prof / "sites.csv"))
    ]
    p = work / "placement.json"
    p.write_text(
        json.dumps(
            {
                "format": "tierwise-placement",
                "version": 1,
                "default_tier": "dram",
                "sites": sites,
            }
        )
    )
    return p, len(sites)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=18)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--kernels", nargs="+", default=KERNELS)
    ap.add_argument(
        "--cpu",
        action="store_true",
        help="compare user+sys CPU "
        "seconds instead of wall seconds (steadier on a busy machine)",
    )
    args = ap.parse_args()
    lib = str(BUILD / "lib" / "libtierwise-runtime.so")
    base = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    work = Path(tempfile.mkdtemp(prefix="tw-bench."))
    what = "CPU (user+sys)" if args.cpu else "wall"
    print(
        f"scale {args.scale}, {args.reps} interleaved repetitions, "
        f"{args.threads} threads; {what} seconds (median) and ratio to native"
    )
    print(
        f"{'kernel':14} {'native':>8} {'memtier':>15} {'tierwise':>15} {'census':>15}  sites  cache hits/unwinds"
    )
    for k in args.kernels:
        cmd = [str(BUILD / "examples" / k), "-g", str(args.scale)]
        placement, nsites = placement_all_sites(cmd, base, work / k)
        report = work / k / "report.json"
        envs = {
            "native": base,
            "memtier": dict(
                base,
                LD_PRELOAD=MEMTIER,
                MEMKIND_MEM_TIERS="KIND:DRAM,RATIO:1;POLICY:STATIC_RATIO",
            ),
            "tierwise": dict(
                base,
                LD_PRELOAD=lib,
                TIERWISE_PLACEMENT=str(placement),
                TIERWISE_REPORT=str(report),
            ),
            "census": dict(
                base, LD_PRELOAD=lib, TIERWISE_CENSUS=str(work / k / "census")
            ),
        }
        (work / k / "census").mkdir(exist_ok=True)
        times = {n: [] for n in envs}
        sums = {}
        for _ in range(args.reps):
            for n, env in envs.items():
                if n == "census":
                    (work / k / "census" / ".census-owner").unlink(missing_ok=True)
                dt, cs = timed(cmd, env, args.cpu)
                times[n].append(dt)
                sums.setdefault(n, cs)
        failed = {n for n, v in times.items() if None in v}
        if (
            "native" in failed
            or len({tuple(v) for n, v in sums.items() if n not in failed}) != 1
        ):
            sys.exit(f"{k}: checksums differ between configurations: {sums}")
        if failed - {"memtier"}:
            sys.exit(f"{k}: {failed} failed: {sums}")
        med = {
            n: statistics.median(v) if n not in failed else float("nan")
            for n, v in times.items()
        }
        rep = json.loads(report.read_text())
        c = rep["cache"]
        cells = " ".join(
            (
                f"{med[n]:7.3f} ({med[n] / med['native']:.3f}x)"
                if n not in failed
                else f"{'crashed':>15}"
            )
            for n in ["memtier", "tierwise", "census"]
        )
        print(
            f"{k:14} {med['native']:8.3f} {cells}  {nsites:5d}  "
            f"{c['hits']}/{c['unwinds']}",
            flush=True,
        )


if __name__ == "__main__":
    main()
