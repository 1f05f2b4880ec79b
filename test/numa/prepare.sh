#!/bin/bash
# SPDX-License-Identifier: MIT
# Host side of `make check-numa` (called by check-numa.sh as
# `prepare.sh SRC BUILD DIR`): profiles test/numa/numa_probe on the host
# (allocation census, and a small sim profile for the guest's `advise`) and
# writes the placements the guest runs with, because the advisor is Python
# and slow under TCG. Placements: numa1.json (site make_a -> numa:1),
# kmem.json (make_a -> kmem), head.json (make_a -> numa:1 with a 4 MiB DRAM head),
# kmem-head.json (make_a -> kmem with a 4 MiB DRAM head).
set -euo pipefail
src=$1 build=$2 dir=$3
rm -rf "$dir" && mkdir -p "$dir"
probe=$build/test/numa/numa_probe
tw=$build/bin/tierwise
py=$src/.venv/bin/python
[ -x "$py" ] || py=python3
twcheck() { PYTHONPATH=$src/advisor "$py" "$src/test/runtime/Inputs/twcheck.py" "$@"; }
# ranked OUT "FUNC :RANK:MIB"... -- PLACEMENT...: the placements' sites in
# one placement, each given the rank and planned bytes of the entry whose
# "FUNC " its stack or location names, as `advise` ranks a plan
ranked() {
  local out=$1
  shift
  "$py" - "$out" "$@" <<'PY'
import json, sys
out, args = sys.argv[1], sys.argv[2:]
cut = args.index("--")
plan = {}
for e in args[:cut]:
    key, rank, mib = e.rsplit(":", 2)
    plan[key] = (int(rank), int(mib.rstrip("M")) << 20)
doc = json.load(open(args[cut + 1]))
for f in args[cut + 2:]:
    doc["sites"] += json.load(open(f))["sites"]
for s in doc["sites"]:
    key = next(k for k in plan if k in s["stack"] or k in s["location"])
    s["rank"], s["planned_bytes"] = plan[key]
json.dump(doc, open(out, "w"), indent=1)
PY
}
"$tw" profile --backend alloc -o "$dir/prof" -- "$probe" -a 1 -b 1 -c 1 -n 100
twcheck place "$dir/prof" numa:1 "make_a " -o "$dir/numa1.json"
twcheck place "$dir/prof" kmem "make_a " -o "$dir/kmem.json"
twcheck place "$dir/prof" numa:1 "make_a " --dram-bytes 4194304 -o "$dir/head.json"
twcheck place "$dir/prof" kmem "make_a " --dram-bytes 4194304 -o "$dir/kmem-head.json"
# Access counts for the cost model (small objects: only site identity matters).
"$tw" profile --backend sim -o "$dir/simprof" -- "$probe" -a 1 -b 1 -c 1 -n 100
# The program's phases (numa_probe --phases, runtime/README.md "Room on the
# DRAM node"): make_cold, make_tmp and make_hot in dram, ranked as a
# placement by `advise` is (hot 1, split head 2, tmp 3, cold 4), make_split
# in numa:1 with an 8 MiB head (phases.json).
"$tw" profile --backend alloc -o "$dir/phprof" -- "$probe" --phases 1,1,1,2 > /dev/null
twcheck place "$dir/phprof" dram "make_cold " "make_tmp " "make_hot " -o "$dir/ph-dram.json"
twcheck place "$dir/phprof" numa:1 "make_split " --dram-bytes 8388608 -o "$dir/ph-split.json"
ranked "$dir/phases.json" "make_hot :1:16M" "make_split :2:8M" "make_tmp :3:32M" \
  "make_cold :4:48M" -- "$dir/ph-dram.json" "$dir/ph-split.json"
# Small vectors grown in a kernel (numa_probe --bins, issue 39): make_bin
# in dram, ranked 1 (32 MiB planned, every block below TIERWISE_ROOM_MIN),
# above make_big, ranked 2: numa:1 with a 96 MiB DRAM head that fills node
# 0's room (bins.json).
"$tw" profile --backend alloc -o "$dir/binprof" -- "$probe" --bins 1,1 > /dev/null
twcheck place "$dir/binprof" dram "make_bin " -o "$dir/bin-dram.json"
twcheck place "$dir/binprof" numa:1 "make_big " --dram-bytes 100663296 -o "$dir/bin-big.json"
ranked "$dir/bins.json" "make_bin :1:32M" "make_big :2:96M" -- "$dir/bin-dram.json" \
  "$dir/bin-big.json"
