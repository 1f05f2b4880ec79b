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
"$tw" profile --backend alloc -o "$dir/prof" -- "$probe" -a 1 -b 1 -c 1 -n 100
twcheck place "$dir/prof" numa:1 "make_a " -o "$dir/numa1.json"
twcheck place "$dir/prof" kmem "make_a " -o "$dir/kmem.json"
twcheck place "$dir/prof" numa:1 "make_a " --dram-bytes 4194304 -o "$dir/head.json"
twcheck place "$dir/prof" kmem "make_a " --dram-bytes 4194304 -o "$dir/kmem-head.json"
# Access counts for the cost model (small objects: only site identity matters).
"$tw" profile --backend sim -o "$dir/simprof" -- "$probe" -a 1 -b 1 -c 1 -n 100
