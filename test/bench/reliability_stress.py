#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Long stress benchmark (not a timed test): the reliability stress program
(test/reliability/Inputs/tw_stress.c: seeded random malloc family mix with
content checks) at THREADS x OPS, side by side: no preload, memkind's
libmemtier.so (static DRAM tier), the tierwise runtime with three sites in
pmem and a DRAM limit forcing fallbacks, and the tierwise census. Every run
must report `failures: 0` and the same checksum; prints operations per
second (median of --reps, interleaved) and ratios to no preload.

  python test/bench/reliability_stress.py --threads 16 --ops 160000000 [--reps 3]

OPS is the total over all threads (16 x 10M above).
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("TIERWISE_BUILD_DIR", ROOT / "build"))
sys.path.insert(0, str(ROOT / "advisor"))
from tierwise.formats import placement as placement_mod  # noqa: E402

STRESS = BUILD / "test" / "reliability" / "Inputs" / "tw_stress"
MEMTIER = "/usr/lib/x86_64-linux-gnu/libmemtier.so"
PLACED = ("st_realloc", "st_big", "st_memalign")


def run(cmd, env, may_fail=False):
    """(ops/s, checksum); (None, why) for a run that may fail (memtier)."""
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    out = r.stdout
    m = re.search(r"ops/s: (\d+)", r.stderr)
    fails = re.search(r"failures: (\d+)", out)
    chk = re.search(r"checksum: (\S+)", out)
    if r.returncode or not m or not fails or fails[1] != "0":
        if may_fail:
            why = (
                f"signal {-r.returncode}"
                if r.returncode < 0
                else f"exit {r.returncode}"
            )
            return None, why
        sys.exit(
            f"reliability_stress: {' '.join(cmd)} failed (exit {r.returncode}):\n"
            + r.stderr[-2000:]
        )
    return int(m[1]), chk[1]


def placement(work, small_ops, env):
    """Census at a small op count, then the placement of PLACED in pmem."""
    prof = work / "prof"
    subprocess.run(
        [
            str(BUILD / "bin" / "tierwise"),
            "profile",
            "--backend",
            "alloc",
            "-o",
            str(prof),
            "--",
            str(STRESS),
            "2",
            str(small_ops),
        ],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    sites = [
        {"stack": r["stack"], "location": r["location"], "tier": "pmem"}
        for r in csv.DictReader(open(prof / "sites.csv"))
        if r["location"].split(" ")[0] in PLACED
    ]
    p = work / "placement.json"
    placement_mod.write(placement_mod.make(sites), p)
    return p


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ops", type=int, default=2_000_000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dram-limit", default="1M")
    args = ap.parse_args()
    if not STRESS.exists():
        sys.exit(f"reliability_stress: {STRESS} missing: run `make build` first")
    base = dict(os.environ)
    for k in [k for k in base if k.startswith("TIERWISE_")]:
        del base[k]
    cmd = [str(STRESS), str(args.threads), str(args.ops), str(args.seed)]
    with tempfile.TemporaryDirectory(prefix="tw-stress.") as tmp:
        work = Path(tmp)
        (work / "pmem").mkdir()
        lib = str(BUILD / "lib" / "libtierwise-runtime.so")
        configs = {"native": base}
        if Path(MEMTIER).exists():  # memkind's own interposer, all DRAM
            configs["memtier"] = {**base, "LD_PRELOAD": MEMTIER}
            configs["memtier"][
                "MEMKIND_MEM_TIERS"
            ] = "KIND:DRAM,RATIO:1;POLICY:STATIC_RATIO"
        configs["tierwise"] = {**base, "LD_PRELOAD": lib}
        configs["tierwise"].update(
            TIERWISE_PLACEMENT=str(placement(work, 20000, base)),
            TIERWISE_PMEM_DIR=str(work / "pmem"),
            TIERWISE_DRAM_LIMIT=args.dram_limit,
            TIERWISE_REPORT=str(work / "report.json"),
        )
        configs["census"] = {
            **base,
            "LD_PRELOAD": lib,
            "TIERWISE_CENSUS": str(work / "cen"),
        }
        ops = {name: [] for name in configs}
        sums = set()
        failed = {}
        for rep in range(args.reps):
            for name, env in configs.items():
                if name == "census":
                    (work / "cen").mkdir(exist_ok=True)
                    for f in (work / "cen").iterdir():
                        f.unlink()
                rate, chk = run(cmd, env, may_fail=name == "memtier")
                if rate is None:
                    failed[name] = chk
                else:
                    ops[name].append(rate)
                    sums.add(chk)
                print(
                    f"rep {rep + 1}/{args.reps} {name}: {rate or chk} ops/s",
                    file=sys.stderr,
                )
        if len(sums) != 1:
            sys.exit(
                f"reliability_stress: checksums differ between configurations: {sums}"
            )
        rep = json.loads((work / "report.json").read_text())
    med = {n: statistics.median(v) for n, v in ops.items() if v}
    print(
        f"tw_stress {args.threads} threads x {args.ops} ops, median of {args.reps}, "
        f"0 failures, checksum {sums.pop()}"
    )
    print(f"{'config':10} {'ops/s':>12} {'vs native':>10}")
    for n, v in med.items():
        print(f"{n:10} {v:12.0f} {v / med['native']:10.2f}")
    for n, why in failed.items():
        print(f"{n:10} {'crashed':>12} ({why} in at least one run)")
    fb = sum(s["fallback_bytes"] for s in rep["sites"] + rep["unmatched"])
    print(
        f"tierwise run report: dram {rep['totals']['dram'] >> 20} MiB, pmem "
        f"{rep['totals']['pmem'] >> 20} MiB, fallback {fb >> 20} MiB"
    )


if __name__ == "__main__":
    main()
