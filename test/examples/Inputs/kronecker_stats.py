# SPDX-License-Identifier: MIT
"""Checks the shape of a generated Kronecker graph from `adjlist -p` output
(lines `vertex depth degree strength`, undirected degrees): vertex and edge counts, a skewed degree
distribution as Graph500's A=0.57 gives, and that the vertex permutation
moved the hubs away from low ids. Prints one summary line or exits 1.

usage: adjlist -g SCALE -p | kronecker_stats.py SCALE
"""

import sys

scale = int(sys.argv[1])
deg = []
for line in sys.stdin:
    if line.startswith("checksum"):
        continue
    v, _, d, _ = line.split()
    assert int(v) == len(deg), f"vertex {v} out of order"
    deg.append(int(d))
n, m = len(deg), sum(deg) // 2
errors = []
if n != 1 << scale:
    errors.append(f"{n} vertices, want {1 << scale}")
if m != 16 * n:
    errors.append(f"{m} edges, want {16 * n}")
zero = sum(1 for d in deg if d == 0) / n
top = max(deg)
hub = deg.index(top)
# Graph500 RMAT graphs at small scale: many isolated vertices, hubs with
# hundreds of edges; an unskewed graph would have max ~ 2x average (32).
if zero < 0.1:
    errors.append(f"only {zero:.0%} vertices without out-edges")
if top < 20 * 32:
    errors.append(f"max out-degree {top} is not skewed")
# Without the permutation the biggest hub would be vertex 0 and the top
# degrees would crowd the low ids.
top_ids = sorted(range(n), key=lambda v: -deg[v])[:16]
if hub == 0 or max(top_ids) < n // 4:
    errors.append(f"hubs at ids {top_ids}: vertex ids not permuted")
if errors:
    sys.exit("error: " + "; ".join(errors))
print(f"kronecker ok: {n} vertices, {m} edges")
