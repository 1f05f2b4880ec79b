#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Interposer overhead benchmark (not a timed test): adjlist (millions of
small mallocs through vector<vector<int>>) and pagerank-pull (few huge
allocations), run natively, under memkind's own libmemtier.so (static DRAM
tier), under the tierwise runtime with a placement naming every site (all in
dram, so only the interposer's cost is measured), and under the census.
Repetitions are interleaved; prints medians and ratios to native.
With --instructions, counts instructions instead (callgrind, 1 thread,
deterministic: for noisy machines): native vs the placement run with the
Valgrind client requests off (TIERWISE_VALGRIND_REQUESTS=0), and the extra
instructions per allocation (each allocation's free included).

  python test/bench/runtime_overhead.py [--scale 18] [--reps 5] [--threads 2]
  python test/bench/runtime_overhead.py --instructions [--scale 15]
Environment: TIERWISE_BUILD_DIR (default build/), TW_MEMTIER (memkind's
libmemtier.so).
"""

import argparse
import csv
import json
import os
import signal
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
        why = (
            f"killed by {signal.Signals(-r.returncode).name}"
            if r.returncode < 0
            else f"exit status {r.returncode}"
        )
        return None, [why]
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


def callgrind_ir(cmd, env):
    """Instructions executed by \p cmd under callgrind (1 thread)."""
    with tempfile.TemporaryDirectory() as d:
        r = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={d}/cg.out"]
            + cmd,
            env=dict(env, OMP_NUM_THREADS="1"),
            capture_output=True,
            text=True,
        )
    for line in r.stderr.splitlines():
        if "Collected :" in line:
            return int(line.split()[-1])
    sys.exit(f"callgrind failed on {cmd}: {r.stderr[-500:]}")


def instructions(args, lib, base, work):
    print(f"scale {args.scale}, 1 thread, callgrind instruction counts")
    print(
        f"{'kernel':14} {'native':>14} {'tierwise':>14} {'extra':>8}  "
        "allocs  per alloc"
    )
    for k in args.kernels:
        cmd = [str(BUILD / "examples" / k), "-g", str(args.scale)]
        placement, _ = placement_all_sites(cmd, base, work / k)
        report = work / k / "report.json"
        env = dict(
            base,
            LD_PRELOAD=lib,
            TIERWISE_PLACEMENT=str(placement),
            TIERWISE_REPORT=str(report),
            TIERWISE_VALGRIND_REQUESTS="0",
        )
        native = callgrind_ir(cmd, base)
        placed = callgrind_ir(cmd, env)
        c = json.loads(report.read_text())["cache"]
        allocs = c["hits"] + c["unwinds"]
        print(
            f"{k:14} {native:14,d} {placed:14,d} {placed / native - 1:+8.2%}  "
            f"{allocs:6d}  {(placed - native) / max(allocs, 1):9.1f}",
            flush=True,
        )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=18)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--kernels", nargs="+", default=KERNELS)
    ap.add_argument(
        "--instructions",
        action="store_true",
        help="count instructions under callgrind (1 thread) instead of timing",
    )
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
    if args.instructions:
        return instructions(args, lib, base, work)
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
        for n in sorted(failed):
            print(f"  {k}: {n} failed: {sums[n][0]}", flush=True)


if __name__ == "__main__":
    main()
