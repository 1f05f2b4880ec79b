# SPDX-License-Identifier: MIT
"""Writes a random directed edge list 'src dst [weight]' for the framework
cross-checks: N vertices, M edges, with duplicate edges, self-loops, a
'#' comment, some weighted lines and vertices nothing reaches, so every
framework's reader and traversal sees the awkward cases.
usage: edgelist.py N M SEED"""

import random
import sys

n, m, seed = (int(x) for x in sys.argv[1:4])
rng = random.Random(seed)
print(f"# {n} vertices, {m} random edges, seed {seed}")
for e in range(m):
    u, v = rng.randrange(n // 2), rng.randrange(n)  # upper half: no out-edges
    if e % 97 == 0:
        v = u  # self-loop
    print(f"{u} {v}" + (f" {rng.randrange(1, 9)}" if e % 5 == 0 else ""))
    if e % 31 == 0:
        print(f"{u} {v}")  # duplicate
print(f"{n - 1} {n - 2}")  # the top vertex exists and points down
