# SPDX-License-Identifier: MIT
"""Checks the advisor's size parser (tierwise/sizes.py) against the shared
vectors, as tw_vector_check.c does the runtime's: one FAIL line per
disagreement, then "sizes: N vectors ok" or "sizes: N failed".
Usage: python size_check.py size-vectors.txt"""

import sys

from tierwise.sizes import parse_size


def parsed(text):
    try:
        return str(parse_size(text))
    except ValueError:
        return "error"


rows = [
    line.rsplit("\t", 1)
    for line in open(sys.argv[1], encoding="utf-8").read().splitlines()
    if "\t" in line and not line.startswith("#")
]
bad = [(text, want) for text, want in rows if parsed(text) != want]
for text, want in bad:
    print(f"FAIL: {text!r}: parse_size gives {parsed(text)}, expected {want}")
print(f"sizes: {len(bad)} failed" if bad else f"sizes: {len(rows)} vectors ok")
sys.exit(1 if bad else 0)
