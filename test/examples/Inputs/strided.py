# SPDX-License-Identifier: MIT
"""Writes the edge list that `-G consecutive|scattered -g SCALE -d D` must
generate, straight from seed 000's description: vertex i's neighbours are
i+1..i+D (consecutive) or i+a, i+2a, .., i+D*a (scattered), modulo n = 2^SCALE,
with a = (n // D) | 1 as documented in examples/README.md.

usage: strided.py consecutive|scattered SCALE D OUT
"""

import sys

kind, scale, d, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
n = 1 << scale
gap = (n // d) | 1 if kind == "scattered" else 1
with open(out, "w") as f:
    for i in range(n):
        for k in range(1, d + 1):
            f.write(f"{i} {(i + k * gap) % n}\n")
