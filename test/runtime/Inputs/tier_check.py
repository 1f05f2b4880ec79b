# SPDX-License-Identifier: MIT
"""Checks the advisor's tier names (tierwise/formats/placement.py
valid_tier, which tier files and the CLI use too) against the shared
vectors, as tw_vector_check.c does the runtime's: one FAIL line per
disagreement, then "tiers: N vectors ok" or "tiers: N failed".
Usage: python tier_check.py tier-vectors.txt"""

import sys

from tierwise.formats.placement import valid_tier

rows = [
    line.rsplit("\t", 1)
    for line in open(sys.argv[1], encoding="utf-8").read().splitlines()
    if "\t" in line and not line.startswith("#")
]
bad = [(name, want) for name, want in rows if ("ok" if valid_tier(name) else "error") != want]
for name, want in bad:
    print(f"FAIL: {name!r}: valid_tier gives {not want == 'ok'}, expected {want}")
print(f"tiers: {len(bad)} failed" if bad else f"tiers: {len(rows)} vectors ok")
sys.exit(1 if bad else 0)
