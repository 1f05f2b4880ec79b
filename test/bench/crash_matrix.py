#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The runtime's crash matrix (issue 40; a benchmark, not a CI test: the
full matrix takes about an hour on 2 cores). Each case runs RUNS times under
the runtime and counts the runs that crashed (a signal or a non-zero exit)
and those whose output differs from the program's alone:

- fork-frees: two threads allocate and free pmem-placed blocks of 16 B -
  300 KB while the main thread forks 300 times (test/runtime/Inputs/
  tw_fork_frees.c);
- limit: THREADS threads, OPS operations, blocks of 16 B - 2 MiB with
  realloc growth (test/reliability/Inputs/tw_limit_stress.c) under
  TIERWISE_DRAM_LIMIT=LIMIT, no placement;
- limit+heads: the same with a placement that gives the big site a 256 KiB
  DRAM head and sends the realloc growth site to pmem;
the slow tier's directory on tmpfs (/dev/shm), where the crashes showed.

  python test/bench/crash_matrix.py [--runs 10] [--threads 4,16]
        [--ops 1000000,10000000] [--limits 4MiB,8MiB]
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
LIB = BUILD / "lib" / "libtierwise-runtime.so"
FORK = BUILD / "test" / "runtime" / "Inputs" / "tw_fork_frees"
LIMIT = BUILD / "test" / "reliability" / "Inputs" / "tw_limit_stress"


def census_placement(work, cmd, env, heads):
    """A placement from a census of \\p cmd: {location prefix: dram_bytes
    or None} of the sites to put in pmem."""
    prof = work / "prof"
    shutil.rmtree(prof, ignore_errors=True)
    subprocess.run([str(BUILD / "bin" / "tierwise"), "profile", "--backend", "alloc",
                    "-o", str(prof), "--", *cmd], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    import csv

    meta = json.loads((prof / "meta.json").read_text())
    sites = []
    for r in csv.DictReader(open(prof / "sites.csv")):
        for loc, head in heads.items():
            if r["location"].startswith(loc):
                s = {"stack": r["stack"], "location": r["location"], "tier": "pmem"}
                if head:
                    s["dram_bytes"] = head
                sites.append(s)
    doc = {"format": "tierwise-placement", "version": 1, "default_tier": "dram",
           "depth": meta["depth"], "modules": meta["modules"], "sites": sites}
    p = work / f"p{len(list(work.glob('p*.json')))}.json"
    p.write_text(json.dumps(doc))
    return p


def case(name, cmd, env, runs, expect):
    crashed = differ = 0
    walls = []
    for i in range(runs):
        shm = Path(tempfile.mkdtemp(prefix="tw-crash.", dir="/dev/shm"))
        try:
            t0 = time.perf_counter()
            r = subprocess.run(cmd, env={**env, "TIERWISE_PMEM_DIR": str(shm)},
                               capture_output=True, text=True)
            walls.append(time.perf_counter() - t0)
        finally:
            shutil.rmtree(shm, ignore_errors=True)
        if r.returncode:
            crashed += 1
            why = f"signal {-r.returncode}" if r.returncode < 0 else f"exit {r.returncode}"
            print(f"  {name} run {i + 1}: {why}: {r.stderr.strip()[-300:]}",
                  file=sys.stderr, flush=True)
        elif r.stdout != expect:
            differ += 1
    wall = sorted(walls)[len(walls) // 2]
    print(f"{name:44} {runs:5d} {crashed:8d} {differ:8d} {wall:8.1f}", flush=True)
    return crashed + differ


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--threads", default="4,16")
    ap.add_argument("--ops", default="1000000,10000000")
    ap.add_argument("--limits", default="4MiB,8MiB")
    args = ap.parse_args()
    for p in (FORK, LIMIT):
        if not p.exists():
            sys.exit(f"crash_matrix: {p} missing: run `make build` first")
    base = {k: v for k, v in os.environ.items() if not k.startswith("TIERWISE_")}
    bad = 0
    with tempfile.TemporaryDirectory(prefix="tw-crash.") as tmp:
        work = Path(tmp)
        print(f"{'case':44} {'runs':>5} {'crashed':>8} {'differs':>8} {'median s':>8}",
              flush=True)
        cmd = [str(FORK), "300"]
        plain = subprocess.run(cmd, env=base, capture_output=True, text=True, check=True).stdout
        p = census_placement(work, [str(FORK), "3", "1000"], base, {"slow_block ": None})
        bad += case("fork-frees: 300 forks, 2 threads freeing pmem", cmd,
                    {**base, "LD_PRELOAD": str(LIB), "TIERWISE_PLACEMENT": str(p)},
                    args.runs, plain)
        heads = census_placement(work, [str(LIMIT), "4", "4000", "7"], base,
                                 {"ls_big ": 262144, "ls_grow ": None})
        for t in args.threads.split(","):
            for ops in args.ops.split(","):
                cmd = [str(LIMIT), t, ops, "7"]
                plain = subprocess.run(cmd, env=base, capture_output=True, text=True,
                                       check=True).stdout
                for lim in args.limits.split(","):
                    env = {**base, "LD_PRELOAD": str(LIB), "TIERWISE_DRAM_LIMIT": lim}
                    bad += case(f"limit {lim}: {t} threads, {ops} ops", cmd, env,
                                args.runs, plain)
                    bad += case(f"limit {lim}+heads: {t} threads, {ops} ops", cmd,
                                {**env, "TIERWISE_PLACEMENT": str(heads)}, args.runs, plain)
    print(f"crash_matrix: {'no crash, every output equal' if not bad else f'{bad} bad runs'}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
