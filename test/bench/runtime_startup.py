#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Start-up cost of the runtime against the size of the placement (not a
timed test). Open MPI, PMIx and hwloc make ~12,000 allocation sites, and
every process of a job loads the runtime, so a placement of that size must
cost only a few milliseconds at start (issue: 0.34 s became 3.06 s).

Placements of 10, 1,000 and 20,000 sites are written from a real profile's
stacks (PROFILE's sites.csv, e.g. an mpi-pagerank sim profile; sites past
its count get a changed first offset, so that they are distinct and match
nothing), all placed in dram (only the runtime's own cost is measured).
Each is applied to CMD (default /bin/true; use the profiled program to
include matching every site it allocates from) with no run report;
repetitions are interleaved and medians printed (wall and CPU seconds), then
instructions (callgrind, deterministic) of one run each.

--calibrate: what those instructions mean in time here. The runtime's JSON
reader alone (Inputs/placement_read.cc, built with g++ against
runtime/src/tw_placement_json.cc and libsimdjson) reads the 20,000-site
file 200 times in one process, in 10 processes: the best time (no page
faults; the least disturbed by other load) against callgrind's count of one
read gives instructions per ms; the best first read adds the first touch of
simdjson's buffers. The rest of the start-up difference is the kernel's (reading the
file into memory, page faults of the site table).

  python test/bench/runtime_startup.py --profile PROF [--reps 20] [--runtime LIB] [--calibrate] [-- CMD ...]
Environment: TIERWISE_BUILD_DIR (default build/).
"""

import argparse
import csv
import json
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
SIZES = [10, 1000, 20000]


def write_placement(stacks, n, path):
    sites = []
    for i in range(n):
        stack, location = stacks[i % len(stacks)]
        if i >= len(stacks):  # distinct, and matching nothing
            stack = re.sub(r"\+0x", f"+0x{i:x}0", stack, count=1)
        sites.append({"stack": stack, "location": location, "tier": "dram", "bytes": 4096})
    placement = {"format": "tierwise-placement", "version": 1, "default_tier": "dram", "sites": sites}
    path.write_text(json.dumps(placement, indent=1) + "\n")


def run_once(cmd, env):
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{cmd[0]}: exit status {os.waitstatus_to_exitcode(status)}")
    return time.perf_counter() - t0, ru.ru_utime + ru.ru_stime


def instructions(cmd, env, work):
    out = work / "cg.out"
    env = dict(env, TIERWISE_VALGRIND_REQUESTS="0")
    subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *cmd],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
    )
    m = re.search(r"^summary: (\d+)", out.read_text(), re.M)
    return int(m[1]) if m else None


def calibrate(path, work):
    exe = work / "placement_read"
    src = ROOT / "runtime" / "src"
    subprocess.run(
        ["g++", "-O2", "-fno-exceptions", "-fno-rtti", f"-I{src}", str(ROOT / "test/bench/Inputs/placement_read.cc"),
         str(src / "tw_placement_json.cc"), "-lsimdjson", "-o", str(exe)],
        check=True,
    )
    runs = []  # 10 processes: the least disturbed first read too
    for _ in range(10):
        out = subprocess.run([str(exe), str(path), "200"], capture_output=True, text=True, check=True).stdout
        runs.append([float(x) for x in re.search(r"first ([0-9.]+) best ([0-9.]+)", out).groups()])
    first, best = min(r[0] for r in runs), min(r[1] for r in runs)
    cg = work / "cg.read"
    subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={cg}", "--toggle-collect=tw_pjson_read", str(exe), str(path), "1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
    )
    ins = int(re.search(r"^summary: (\d+)", cg.read_text(), re.M)[1])
    print(
        f"calibration: the JSON read of {path.name} alone: {ins:,} instructions (callgrind), "
        f"best {best:.2f} ms of 200 reads in one process, of 10 processes ({ins / best / 1e6:.1f} M instructions a ms), "
        f"first read {first:.2f} ms at best (+{first - best:.2f} ms first touch of its buffers)"
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", required=True, help="a profile directory whose stacks to use")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--no-instructions", action="store_true")
    ap.add_argument("--runtime", help="the runtime library to measure (default: the build's)")
    ap.add_argument("--calibrate", action="store_true", help="time the JSON reader alone (needs g++, valgrind)")
    ap.add_argument("cmd", nargs="*", help="-- CMD ARGS (default /bin/true)")
    args = ap.parse_args()
    cmd = [c for c in args.cmd if c != "--"] or ["/bin/true"]
    with open(Path(args.profile) / "sites.csv", newline="") as f:
        stacks = [(r["stack"], r["location"]) for r in csv.DictReader(f) if not r["stack"].startswith("[")]
    work = Path(tempfile.mkdtemp(prefix="tw-startup."))
    lib = Path(args.runtime or BUILD / "lib" / "libtierwise-runtime.so")
    envs = {}
    for n in SIZES:
        p = work / f"placement.{n}.json"
        write_placement(stacks, n, p)
        envs[n] = dict(os.environ, LD_PRELOAD=str(lib), TIERWISE_PLACEMENT=str(p), TIERWISE_PMEM_DIR=str(work))
        envs[n].pop("TIERWISE_REPORT", None)
    base = dict(os.environ)
    base.pop("LD_PRELOAD", None)
    wall = {k: [] for k in ["native", *SIZES]}
    cpu = {k: [] for k in wall}
    for rep in range(args.reps):
        order = ["native", *SIZES]
        order = order[rep % len(order) :] + order[: rep % len(order)]  # interleaved, rotated
        for k in order:
            w, c = run_once(cmd, base if k == "native" else envs[k])
            wall[k].append(w)
            cpu[k].append(c)
    print(f"start-up of {' '.join(cmd)}: median of {args.reps} interleaved runs")
    print(f"{'placement':>12} {'size':>9} {'wall ms':>9} {'cpu ms':>8} {'+wall ms vs 10':>15}")
    w10 = statistics.median(wall[10])
    for k in wall:
        size = "" if k == "native" else f"{(work / f'placement.{k}.json').stat().st_size >> 10} KiB"
        w = statistics.median(wall[k])
        extra = "" if k == "native" else f"{(w - w10) * 1e3:+.2f}"
        print(
            f"{str(k) + (' sites' if k != 'native' else ''):>12} {size:>9} {w * 1e3:9.2f} "
            f"{statistics.median(cpu[k]) * 1e3:8.2f} {extra:>15}"
        )
    if not args.no_instructions:
        ins = {n: instructions(cmd, envs[n], work) for n in SIZES}
        print("instructions (callgrind):", ", ".join(f"{n} sites {ins[n]:,}" for n in SIZES))
        print(f"20,000 sites over 10: {ins[20000] - ins[10]:+,} instructions")
    if args.calibrate:
        calibrate(work / "placement.20000.json", work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
