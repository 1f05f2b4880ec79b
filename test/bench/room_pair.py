#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What the room on the DRAM node costs a malloc/free pair (issue 39; a
benchmark, not a timed test): callgrind's instruction count of the program's
own thread (the watcher's work is its thread's, not the program's), per pair
(the counts at 2K pairs less those at K, over K: start-up cancels), with the
room on and off (TIERWISE_ROOM=0), side by side:

- a ranked DRAM object of 4 MiB (the room tracks it: an ask for its room,
  its slot, its range's policy; its free rings the watcher for a pass), the
  DRAM node's room ample and short (a fake /sys, as test/runtime/room.test's);
- a 64-byte block of the same site, unranked (the fast paths: with the room
  on every free takes the out-of-line path).

  python test/bench/room_pair.py [--pairs 200]
"""

import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("TIERWISE_BUILD_DIR", ROOT / "build"))
LIB = BUILD / "lib" / "libtierwise-runtime.so"
TIERWISE = BUILD / "bin" / "tierwise"
TWCHECK = ROOT / "test" / "runtime" / "Inputs" / "twcheck.py"
SRC = ROOT / "test" / "bench" / "Inputs" / "room_pair.c"
ZONEINFO = ROOT / "test" / "runtime" / "Inputs" / "room-sys" / "zoneinfo"


def fake_sys(d: Path, free_kb: int) -> Path:
    """Node 0 (CPUs) with FREE_KB free, node 1 memory-only."""
    (d / "node0").mkdir(parents=True)
    (d / "node1").mkdir()
    (d / "has_memory").write_text("0-1\n")
    (d / "has_cpu").write_text("0\n")
    (d / "node0" / "meminfo").write_text(f"Node 0 MemTotal:  1048576 kB\nNode 0 MemFree:   {free_kb} kB\n")
    (d / "node1" / "meminfo").write_text("Node 1 MemTotal:  1048576 kB\nNode 1 MemFree:   1000000 kB\n")
    shutil.copy(ZONEINFO, d / "zoneinfo")
    return d


def main_thread_ir(work: Path, prog: Path, pairs: int, size: int, env: dict) -> int:
    """Instructions of the program's own thread (callgrind, threads apart)."""
    out = work / f"cg.{os.getpid()}"
    r = subprocess.run(["valgrind", "--tool=callgrind", "--separate-threads=yes",
                        f"--callgrind-out-file={out}", str(prog), str(pairs), str(size)],
                       env=env, capture_output=True, text=True)
    if r.returncode or "checksum:" not in r.stdout:
        sys.exit(f"room_pair: {prog} {pairs} {size} failed (exit {r.returncode}):\n{r.stderr[-2000:]}")
    main = Path(f"{out}-01")
    m = re.search(r"^(?:summary|totals): (\d+)", main.read_text(), re.M)
    for f in work.glob(f"cg.{os.getpid()}*"):
        f.unlink()
    return int(m[1])


def per_pair(work, prog, pairs, size, env):
    return (main_thread_ir(work, prog, 2 * pairs, size, env)
            - main_thread_ir(work, prog, pairs, size, env)) / pairs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=200, help="K (default 200)")
    a = ap.parse_args()
    for need, what in ((LIB, "make build"), (TIERWISE, "make build")):
        if not need.exists():
            sys.exit(f"room_pair: {need} missing: run {what}")
    if not shutil.which("valgrind"):
        sys.exit("room_pair: valgrind not found")
    with tempfile.TemporaryDirectory(prefix="tw-room-pair-") as t:
        work = Path(t)
        prog = work / "room_pair"
        subprocess.run(["cc", "-O2", "-g", "-o", prog, SRC], check=True)
        subprocess.run([TIERWISE, "profile", "--backend", "alloc", "-o", work / "prof", "--",
                        prog, "4", str(4 << 20)], check=True, capture_output=True)
        with open(work / "prof" / "sites.csv") as f:  # (make's site: the most bytes)
            site = max(csv.DictReader(f), key=lambda r: int(r["bytes_allocated"]))["location"]
        subprocess.run([sys.executable, TWCHECK, "place", work / "prof", "dram", site,
                        "-o", work / "d.json"], check=True, capture_output=True)
        doc = json.loads((work / "d.json").read_text())
        for s in doc["sites"]:
            s.update(rank=1, planned_bytes=4 << 20)
        # (a numa:1 tier named: the room is on where that node exists)
        doc["sites"].append(dict(stack="nowhere+0x1", location="", tier="numa:1"))
        (work / "p.json").write_text(json.dumps(doc))
        systems = {"ample": fake_sys(work / "ample", 500000), "short": fake_sys(work / "short", 5000)}
        rows = []
        for label, size, sysname in (("ranked 4 MiB, room ample", 4 << 20, "ample"),
                                     ("ranked 4 MiB, room short", 4 << 20, "short"),
                                     ("64 B, unranked (fast paths)", 64, "ample")):
            ir = {}
            for room in ("1", "0"):
                env = dict(os.environ, LD_PRELOAD=str(LIB), TIERWISE_PLACEMENT=str(work / "p.json"),
                           TIERWISE_SYSFS_NODE=str(systems[sysname]), TIERWISE_ROOM=room)
                ir[room] = per_pair(work, prog, a.pairs, size, env)
            rows.append((label, ir["1"], ir["0"]))
            print(f"# {label}: {ir['1']:.0f} / {ir['0']:.0f}", file=sys.stderr)
    print("| pair | room on | room off | ratio |\n|---|---|---|---|")
    for label, on, off in rows:
        print(f"| {label} | {on:,.0f} | {off:,.0f} | {on / off:.3f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
