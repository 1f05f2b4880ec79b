#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Start-up benchmark of the CLI's quick verbs (not a timed test; issue 36
item 1): best-of-N wall time of `tierwise --help`, `--version`, `doctor` and
`run --placement P -- /bin/true`, interleaved with `numactl --hardware` (a
native tool that reads the same machine facts as `doctor`) and /bin/true.
Goal: each tierwise line at most 150 ms on a quiet machine (best of 5).

  python test/bench/cli_startup.py [--reps 5] [--against OTHER_BUILD_DIR]
Environment: TIERWISE_BUILD_DIR (default build/). --against: the same
tierwise lines with another build's bin/tierwise (e.g. main's), interleaved.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("TIERWISE_BUILD_DIR", ROOT / "build"))
GOAL_MS = 150.0


def wall(cmd, env):
    """Wall seconds of one run, output discarded; exits on failure."""
    t0 = time.perf_counter()
    rc = subprocess.call(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    dt = time.perf_counter() - t0
    if rc:
        sys.exit(f"cli_startup: {' '.join(cmd)}: exit status {rc}")
    return dt


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=5, help="runs of each, best kept (default 5)")
    ap.add_argument("--against", metavar="BUILD_DIR", help="also time this build's tierwise")
    args = ap.parse_args()
    cli = str(BUILD / "bin" / "tierwise")
    env = dict(os.environ, TIERWISE_BUILD_DIR=str(BUILD))
    with tempfile.TemporaryDirectory(prefix="tw-cli-startup.") as tmp:
        p = Path(tmp) / "p.json"
        p.write_text(json.dumps({"format": "tierwise-placement", "version": 1,
                                 "default_tier": "dram", "sites": []}))
        cases = {"/bin/true": ["/bin/true"]}
        if shutil.which("numactl"):
            cases["numactl --hardware"] = ["numactl", "--hardware"]
        cases["tierwise --help"] = [cli, "--help"]
        cases["tierwise --version"] = [cli, "--version"]
        cases["tierwise doctor"] = [cli, "doctor"]
        cases["tierwise run -- /bin/true"] = [cli, "run", "--placement", str(p), "--", "/bin/true"]
        if args.against:
            other = str(Path(args.against) / "bin" / "tierwise")
            for name in [n for n in cases if n.startswith("tierwise")]:
                cases[f"other: {name}"] = [other] + cases[name][1:]
        envs = {n: dict(env, TIERWISE_BUILD_DIR=args.against) if n.startswith("other") else env
                for n in cases}
        for name, cmd in cases.items():  # warm the page cache once
            wall(cmd, envs[name])
        times = {name: [] for name in cases}
        for _ in range(args.reps):  # interleaved: load changes hit every case alike
            for name, cmd in cases.items():
                times[name].append(wall(cmd, envs[name]))
    print(f"{'command':32} {'best ms':>8} {'median ms':>10}")
    failed = []
    for name, ts in times.items():
        best, med = min(ts) * 1e3, sorted(ts)[len(ts) // 2] * 1e3
        mark = ""
        if name.startswith("other"):
            mine = min(times[name.removeprefix("other: ")])
            mark = f"  {min(ts) / mine:.1f}x this build's"
        elif name.startswith("tierwise"):
            mark = "  ok" if best <= GOAL_MS else f"  over {GOAL_MS:.0f} ms"
            if best > GOAL_MS:
                failed.append(name)
        print(f"{name:32} {best:8.1f} {med:10.1f}{mark}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
