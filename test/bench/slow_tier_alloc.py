#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Allocation-heavy cost of the slow tier (issue 40 item 4; a benchmark, not
a timed test): the reliability stress program (test/reliability/Inputs/
tw_stress.c: the whole malloc family, content checks) with EVERY site placed
in pmem, against the program alone, side by side in one run (interleaved
repetitions, median wall time) at each thread count, and the same with the
runtime's slow-tier thread cache off (TIERWISE_SLOW_CACHE=0, as before it).
Every run must print `failures: 0` and the native checksum.
--instructions adds callgrind counts at one thread (TIERWISE_VALGRIND_REQUESTS=0:
the native path's instructions); --instructions-threads 1,16 at each of
those thread counts (callgrind runs a program's threads one at a time: the
instructions of 16 threads where no 16-core machine is at hand; the
time-based counts of a wall clock are not); memcpy copies with its vector
loop in both runs (VECTOR_MEMCPY below; --rep-movsb: as glibc picks).

  python test/bench/slow_tier_alloc.py --threads 1,2,4,16 --ops 4000000 [--reps 3]
         [--instructions | --instructions-threads 1,16]

OPS is the total over all threads.
"""

import argparse
import csv
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("TIERWISE_BUILD_DIR", ROOT / "build"))
sys.path.insert(0, str(ROOT / "advisor"))
from tierwise.formats import placement as placement_mod  # noqa: E402

STRESS = BUILD / "test" / "reliability" / "Inputs" / "tw_stress"
LIB = BUILD / "lib" / "libtierwise-runtime.so"


def run(cmd, env):
    """(wall seconds, checksum line) of one run; exits on a failed one."""
    t0 = time.perf_counter()
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    chk = re.search(r"checksum: (\S+)", r.stdout)
    if r.returncode or "failures: 0" not in r.stdout or not chk:
        sys.exit(
            f"slow_tier_alloc: {' '.join(cmd)} failed (exit {r.returncode}):\n"
            + r.stderr[-2000:]
        )
    return wall, chk[1]


def all_pmem(work, env):
    """A placement naming every site of a small census run, all in pmem."""
    prof = work / "prof"
    subprocess.run(
        [str(BUILD / "bin" / "tierwise"), "profile", "--backend", "alloc",
         "-o", str(prof), "--", str(STRESS), "2", "20000"],
        env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    sites = [
        {"stack": r["stack"], "location": r["location"], "tier": "pmem"}
        for r in csv.DictReader(open(prof / "sites.csv"))
        if not r["site"].startswith("[")
    ]
    doc = placement_mod.make(sites)
    doc["default_tier"] = "pmem"
    p = work / "placement.json"
    placement_mod.write(doc, p)
    return p, len(sites)


# glibc's memcpy copies blocks from a few KiB up with `rep movsb`, which
# callgrind counts once per byte (a 16 KiB copy: ~16,400 instructions; its
# vector loop: ~1,700): the realloc growth that glibc does in place and a
# size-class allocator copies would count as bytes, not as work. So both
# runs copy with the vector loop (every count of both is that of the same
# code; --rep-movsb counts as before).
VECTOR_MEMCPY = {"GLIBC_TUNABLES": "glibc.cpu.x86_rep_movsb_threshold=1073741824"}


def instructions(cmd, env, work, name, rep_movsb=False):
    out = work / f"cg.{name}"
    r = subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *cmd],
        env={**env, "TIERWISE_VALGRIND_REQUESTS": "0", **({} if rep_movsb else VECTOR_MEMCPY)},
        capture_output=True, text=True,
    )
    m = re.search(r"refs:\s+([\d,]+)", r.stderr)
    if r.returncode or not m:
        sys.exit(f"slow_tier_alloc: callgrind of {name} failed:\n{r.stderr[-2000:]}")
    return int(m[1].replace(",", ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", default="1,2,4,16")
    ap.add_argument("--ops", type=int, default=4_000_000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--instructions", action="store_true",
                    help="callgrind counts at one thread (ops/10)")
    ap.add_argument("--instructions-threads", metavar="LIST",
                    help="callgrind counts at these thread counts (ops/10 in all)")
    ap.add_argument("--rep-movsb", action="store_true",
                    help="count glibc's rep movsb copies per byte, as callgrind does")
    args = ap.parse_args()
    counts = ([int(t) for t in args.instructions_threads.split(",")]
              if args.instructions_threads else [1] if args.instructions else [])
    if not STRESS.exists():
        sys.exit(f"slow_tier_alloc: {STRESS} missing: run `make build` first")
    base = {k: v for k, v in os.environ.items() if not k.startswith("TIERWISE_")}
    threads = [int(t) for t in args.threads.split(",")]
    with tempfile.TemporaryDirectory(prefix="tw-slowalloc.") as tmp:
        work = Path(tmp)
        (work / "pmem").mkdir()
        pl, nsites = all_pmem(work, base)
        placed = {**base, "LD_PRELOAD": str(LIB), "TIERWISE_PLACEMENT": str(pl),
                  "TIERWISE_PMEM_DIR": str(work / "pmem")}
        configs = {
            "native": base,
            "pmem": placed,
            "pmem-nocache": {**placed, "TIERWISE_SLOW_CACHE": "0"},
        }
        print(f"tw_stress, {args.ops} ops in all, every site ({nsites}) in pmem; "
              f"median wall of {args.reps}, interleaved", flush=True)
        print(f"{'threads':>7} {'native s':>9} {'pmem s':>8} {'ratio':>6} "
              f"{'nocache s':>9} {'ratio':>6}", flush=True)
        for t in threads:
            cmd = [str(STRESS), str(t), str(args.ops), str(args.seed)]
            walls = {n: [] for n in configs}
            sums = set()
            for rep in range(args.reps):
                for name, env in configs.items():
                    w, chk = run(cmd, env)
                    walls[name].append(w)
                    sums.add(chk)
                print(f"  ({t} threads: rep {rep + 1}/{args.reps} done)",
                      file=sys.stderr, flush=True)
            if len(sums) != 1:
                sys.exit(f"slow_tier_alloc: checksums differ at {t} threads: {sums}")
            med = {n: statistics.median(v) for n, v in walls.items()}
            print(f"{t:7d} {med['native']:9.3f} {med['pmem']:8.3f} "
                  f"{med['pmem'] / med['native']:6.3f} {med['pmem-nocache']:9.3f} "
                  f"{med['pmem-nocache'] / med['native']:6.3f}", flush=True)
        for t in counts:
            cmd = [str(STRESS), str(t), str(max(args.ops // 10, 1000)), str(args.seed)]
            ir = {n: instructions(cmd, env, work, n, args.rep_movsb)
                  for n, env in configs.items()}
            print(f"instructions at {t} thread{'s' if t > 1 else ''}, {cmd[2]} ops: "
                  f"native {ir['native']:,}, "
                  f"pmem {ir['pmem']:,} ({ir['pmem'] / ir['native']:.3f}x), "
                  f"pmem without the cache {ir['pmem-nocache']:,} "
                  f"({ir['pmem-nocache'] / ir['native']:.3f}x)", flush=True)

if __name__ == "__main__":
    main()
