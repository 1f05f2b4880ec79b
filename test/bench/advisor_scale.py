#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Python time of the advisor's verbs on a profile with thousands of sites
(not a timed test). Open MPI programs have ~12,000 allocation sites; the
goal is at most 5 s of Python time each for `advise`, `simulate` and
`compare --profile`. Python time is the CPU time (user + sys) of the
tierwise processes themselves, not of the program or Valgrind: each verb
runs as `python -m tierwise ...` with its own resource usage printed at
exit. `simulate` runs a `tierwise profile` of the placed program, whose
Python time is measured the same way and added.

  python test/bench/advisor_scale.py --profile PROF [--budget 20%] -- CMD ARGS

PROF: a sim profile of CMD (e.g. `tierwise profile --backend sim --llc-size
256K -o PROF -- build/examples/mpi-pagerank -g 10`, Open MPI in singleton
mode). Environment: TIERWISE_BUILD_DIR (default build/).
"""

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WRAP = (
    "import atexit, resource, runpy, sys\n"
    "def done():\n"
    "    r = resource.getrusage(resource.RUSAGE_SELF)\n"
    "    print(f'PYTHON-CPU {r.ru_utime + r.ru_stime:.3f}', file=sys.stderr)\n"
    "atexit.register(done)\n"
    "sys.argv = ['tierwise'] + sys.argv[1:]\n"
    "runpy.run_module('tierwise', run_name='__main__', alter_sys=True)\n"
)


def python_time(argv, env, log):
    """Runs `python -m tierwise ARGV`; returns (Python CPU seconds of that
    process, wall seconds)."""
    t0 = time.perf_counter()
    with open(log, "w") as err:
        r = subprocess.run(
            [sys.executable, "-c", WRAP, *argv], env=env, stdout=subprocess.DEVNULL, stderr=err
        )
    wall = time.perf_counter() - t0
    text = Path(log).read_text()
    if r.returncode:
        raise SystemExit(f"tierwise {argv[0]} failed ({r.returncode}); see {log}")
    cpu = [float(l.split()[1]) for l in text.splitlines() if l.startswith("PYTHON-CPU")]
    return cpu[-1], wall


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", required=True)
    ap.add_argument("--budget", default="20%")
    ap.add_argument("--advisor", help="the advisor package's directory to measure (default advisor/)")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        ap.error("the profiled command is needed (for simulate): -- CMD ARGS")
    with open(Path(args.profile) / "sites.csv", newline="") as f:
        n_sites = sum(1 for _ in csv.DictReader(f))
    work = Path(tempfile.mkdtemp(prefix="tw-advisor-scale."))
    env = dict(os.environ, PYTHONPATH=str(Path(args.advisor or ROOT / "advisor")))
    placement = work / "placement.json"
    rows = []
    cpu, wall = python_time(
        ["advise", args.profile, "--dram-budget", args.budget, "-o", str(placement)], env, work / "advise.log"
    )
    rows.append(("advise (cost policy)", cpu, wall))
    cpu, wall = python_time(
        ["simulate", "--placement", str(placement), "-o", str(work / "sim"), "--", *cmd],
        env,
        work / "simulate.log",
    )
    meta = json.loads((Path(args.profile) / "meta.json").read_text())["backend_params"]
    llc = str(meta.get("cache", {}).get("llc_size", "")) or None
    pcpu, pwall = python_time(
        ["profile", "--backend", "sim", *(["--llc-size", llc] if llc else []), "-o", str(work / "prof"), "--", *cmd],
        env,
        work / "profile.log",
    )
    rows.append(("simulate (own process)", cpu, wall))
    rows.append(("  + its tierwise profile", pcpu, pwall))
    rows.append(("simulate (sum)", cpu + pcpu, None))
    # the other source of counts: the unplaced profile split by the run
    # report of a native run (its `tierwise run` child is a fast verb)
    cpu, wall = python_time(
        ["simulate", "--placement", str(placement), "--profile", args.profile, "-o", str(work / "simr"), "--", *cmd],
        env,
        work / "simulate-report.log",
    )
    rows.append(("simulate --profile (report)", cpu, wall))
    cpu, wall = python_time(["compare", "--profile", args.profile, "-o", str(work / "cmp")], env, work / "compare.log")
    rows.append(("compare --profile", cpu, wall))
    print(f"Python time on {args.profile} ({n_sites:,} sites); goal <= 5 s each")
    print(f"{'verb':<26} {'python cpu s':>12} {'wall s':>8}")
    for name, c, w in rows:
        print(f"{name:<26} {c:12.2f} {'' if w is None else f'{w:8.1f}':>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
