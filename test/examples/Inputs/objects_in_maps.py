# SPDX-License-Identifier: MIT
"""Looks up each `object NAME 0xADDR BYTES` line (stdin, from an example's
-v output) in a /proc/PID/maps copy (from its -M option) and prints
`NAME MAPPING` with MAPPING the mapping's path, `[heap]`, or `anon`. Exits 1
if an object does not lie inside one mapping (the edge list is freed before
the maps are written, so it is skipped).

usage: EXAMPLE -v -M MAPS ... 2> ERR; objects_in_maps.py MAPS < ERR
"""

import re
import sys

maps = []
with open(sys.argv[1]) as f:
    for line in f:
        parts = line.split(None, 5)
        lo, hi = (int(x, 16) for x in parts[0].split("-"))
        maps.append((lo, hi, parts[5].strip() if len(parts) > 5 else "anon"))

for line in sys.stdin:
    m = re.match(r"object (\S+) 0x([0-9a-f]+) (\d+)$", line)
    if not m or m.group(1) == "edges":
        continue
    name, addr, size = m.group(1), int(m.group(2), 16), int(m.group(3))
    hits = [path for lo, hi, path in maps if lo <= addr and addr + max(size, 1) <= hi]
    if len(hits) != 1:
        sys.exit(f"error: object {name} at {addr:#x} ({size} bytes) is in no single mapping")
    print(name, hits[0] or "anon")
