#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Start-up benchmark of `tierwise run` (not a timed test): what the CLI adds
to a program that does nothing. Runs, interleaved, `/bin/true`, the runtime
alone (`env LD_PRELOAD=libtierwise-runtime.so TIERWISE_PLACEMENT=P
/bin/true`), `tierwise run --placement P -- /bin/true` and `tierwise config
--cflags --libs`, and prints each one's median wall time and the added
milliseconds against /bin/true (goal: tierwise run adds at most 50 ms; issue
14 item 4). Two placements: one with only DRAM sites (the runtime does not
load memkind) and one with a pmem site (it does). (The runtime's own
start-up against the size of the placement is runtime_startup.py.)

  python test/bench/run_startup.py [--reps 30]
Environment: TIERWISE_BUILD_DIR (default build/).
"""

import argparse
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


def timed(cmd, env):
    """(wall seconds, CPU seconds) of one run; CPU is user+sys of the
    process and the children it waited for (steadier on a shared machine,
    where wall time includes waiting for a core)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(proc.pid, 0)
    dt = time.perf_counter() - t0
    if status:
        sys.exit(f"run_startup: {' '.join(cmd)}: wait status {status}")
    return dt, ru.ru_utime + ru.ru_stime


def placement(path, tier):
    doc = {
        "format": "tierwise-placement",
        "version": 1,
        "default_tier": "dram",
        "sites": [{"stack": "true+0x1234;libc.so.6+0x5678", "location": "x", "tier": tier}],
    }
    path.write_text(json.dumps(doc))
    return str(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=30, help="repetitions of each (default 30)")
    args = ap.parse_args()
    if args.reps < 20:
        ap.error("--reps: at least 20 (the goal is a median of >= 20)")
    cli = str(BUILD / "bin" / "tierwise")
    lib = str(BUILD / "lib" / "libtierwise-runtime.so")
    env = dict(os.environ, TIERWISE_BUILD_DIR=str(BUILD))
    with tempfile.TemporaryDirectory(prefix="tw-startup.") as tmp:
        pmem = Path(tmp) / "pmem"
        pmem.mkdir()
        cases = {"/bin/true": (["/bin/true"], env)}
        for tier in ("dram", "pmem"):
            p = placement(Path(tmp) / f"{tier}.json", tier)
            pre = dict(env, LD_PRELOAD=lib, TIERWISE_PLACEMENT=p, TIERWISE_PMEM_DIR=str(pmem))
            cases[f"runtime only ({tier} placement)"] = (["/bin/true"], pre)
            cases[f"tierwise run ({tier} placement)"] = (
                [cli, "run", "--placement", p, "--", "/bin/true"],
                env,
            )
        cases["tierwise config --cflags --libs"] = ([cli, "config", "--cflags", "--libs"], env)
        times = {name: [] for name in cases}
        for name, (cmd, e) in cases.items():  # warm the page cache once
            timed(cmd, e)
        for _ in range(args.reps):
            for name, (cmd, e) in cases.items():
                times[name].append(timed(cmd, e))
    med = {n: [statistics.median(t[i] for t in ts) * 1e3 for i in (0, 1)] for n, ts in times.items()}
    base = med["/bin/true"]
    print(f"medians of {args.reps} interleaved runs, ms (added: minus /bin/true)")
    print(f"{'command':36} {'wall':>7} {'added':>7} {'CPU':>7} {'added':>7}")
    worst = 0.0
    for name, (w, c) in med.items():
        if name.startswith("tierwise"):
            worst = max(worst, w - base[0])
        print(f"{name:36} {w:7.1f} {w - base[0]:7.1f} {c:7.1f} {c - base[1]:7.1f}")
    print(f"tierwise run/config add at most {worst:.1f} ms (goal: 50 ms): "
          f"{'met' if worst <= 50 else 'NOT met'}")
    return 0 if worst <= 50 else 1


if __name__ == "__main__":
    sys.exit(main())
