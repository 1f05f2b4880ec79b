# SPDX-License-Identifier: MIT
"""Census overhead at full size: `tierwise profile --backend alloc` (the
runtime in census mode, TIERWISE_CENSUS) against no preload, on the five
kernels at -g 20 (the census of a target run, "profile small, run big",
advisor/README.md). Goal: at most 1.10x.

Runs alternate (native, census, native, census, ...), so that load on a
shared machine falls on both alike; the ratio is of the medians. Wall time
and CPU time (user + sys of the child, from wait4) are both printed: on a
loaded 2-core machine the CPU time is the steadier of the two.

Run after `make build`:  .venv/bin/python test/bench/census_overhead.py [--scale 20] [--reps 5]
"""

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("TIERWISE_BUILD_DIR", ROOT / "build"))
KERNELS = ["pagerank-push", "pagerank-pull", "bfs", "sssp", "spmv-pagerank"]


def timed(cmd, env):
    """(wall s, cpu s) of one run; its stdout discarded."""
    t0 = time.perf_counter()
    pid = os.posix_spawn(
        cmd[0],
        cmd,
        env,
        file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)],
    )
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(cmd)}: exit status {os.waitstatus_to_exitcode(status)}")
    return wall, ru.ru_utime + ru.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=20)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--kernels", nargs="+", default=KERNELS)
    ap.add_argument("--goal", type=float, default=1.10)
    args = ap.parse_args()
    lib = BUILD / "lib" / "libtierwise-runtime.so"
    work = Path(tempfile.mkdtemp(prefix="tw-census-bench."))
    base = dict(os.environ)
    for k in [k for k in base if k.startswith("TIERWISE_")] + ["LD_PRELOAD"]:
        base.pop(k, None)
    rows = []
    try:
        for k in args.kernels:
            cmd = [str(BUILD / "examples" / k), "-g", str(args.scale)]
            native, census = [], []
            for r in range(args.reps):
                native.append(timed(cmd, base))
                d = work / f"{k}.{r}"
                d.mkdir()
                env = dict(base, LD_PRELOAD=str(lib), TIERWISE_CENSUS=str(d))
                census.append(timed(cmd, env))
                if not (d / "sites.csv").exists():
                    sys.exit(f"{k}: the census wrote no sites.csv in {d}")
                shutil.rmtree(d)
                print(
                    f"# {k} rep {r + 1}/{args.reps}: native {native[-1][0]:.2f} s, "
                    f"census {census[-1][0]:.2f} s (wall)",
                    file=sys.stderr,
                    flush=True,
                )
            med = lambda xs, i: statistics.median(x[i] for x in xs)
            rows.append((k, med(native, 0), med(census, 0), med(native, 1), med(census, 1)))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(
        f"\n## census overhead, -g {args.scale}, median of {args.reps} interleaved runs "
        f"({os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f})"
    )
    print(f"{'kernel':<14} {'native s':>9} {'census s':>9} {'wall':>7} {'cpu native':>10} {'cpu census':>10} {'cpu':>7}")
    for k, nw, cw, nc, cc in rows:
        print(f"{k:<14} {nw:>9.2f} {cw:>9.2f} {cw / nw:>6.3f}x {nc:>10.2f} {cc:>10.2f} {cc / nc:>6.3f}x")
    worst_cpu = max(cc / nc for _, _, _, nc, cc in rows)
    worst_wall = max(cw / nw for _, nw, cw, _, _ in rows)
    print(
        f"worst ratio: cpu {worst_cpu:.3f}x, wall {worst_wall:.3f}x (goal <= {args.goal:.2f}x) "
        + ("MET" if worst_cpu <= args.goal else "NOT MET")
        + " by cpu time"
    )


if __name__ == "__main__":
    main()
