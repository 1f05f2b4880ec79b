# SPDX-License-Identifier: MIT
"""Reference results for the example kernels, computed independently in
plain Python from an edge-list file: BFS depths, Dijkstra distances, the
fixed-point PageRank of examples/common/graph.h, adjlist's undirected degrees,
strengths and degree histogram, fwlike's asynchronous PageRank (the least
fixed point, here by synchronous sweeps: a different order of updates),
and the FNV-1a checksum. Prints exactly what `EXAMPLE -f FILE -p` prints on
stdout, so a test can diff the two.

usage: graphref.py KERNEL FILE [-n ITER] [-r ROOT]
       (KERNEL: bfs, sssp, adjlist, pagerank, fwlike-pagerank[-sym])
       graphref.py gen VERTICES EDGES SEED OUT   (random weighted graph)
"""

import argparse
import heapq
import random
from collections import deque

FRAC = 48
ONE = 1 << FRAC
MASK = (1 << 64) - 1


def read_edges(path):
    edges, n = [], 0
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].split()
            if not line:
                continue
            s, d = int(line[0]), int(line[1])
            w = int(line[2]) if len(line) > 2 else 1
            edges.append((s, d, w))
            n = max(n, s + 1, d + 1)
    return n, edges


def out_lists(n, edges):
    adj = [[] for _ in range(n)]
    for s, d, w in edges:
        adj[s].append((d, w))
    return adj


def checksum(values):
    h = 0xCBF29CE484222325
    for v in values:
        v &= MASK
        for i in range(8):
            h ^= (v >> (8 * i)) & 0xFF
            h = (h * 0x100000001B3) & MASK
    return h


def default_root(adj, root):
    if root is not None:
        return root
    return next((v for v, l in enumerate(adj) if l), 0)


def bfs_depths(adj, root):
    depth = [-1] * len(adj)
    depth[root] = 0
    q = deque([root])
    while q:
        u = q.popleft()
        for v, _ in adj[u]:
            if depth[v] < 0:
                depth[v] = depth[u] + 1
                q.append(v)
    return depth


def dijkstra(adj, root):
    dist = [-1] * len(adj)
    heap = [(0, root)]
    while heap:
        d, u = heapq.heappop(heap)
        if dist[u] >= 0:
            continue
        dist[u] = d
        for v, w in adj[u]:
            if dist[v] < 0:
                heapq.heappush(heap, (d + w, v))
    return dist


def pagerank(n, edges, iters):
    deg = [0] * n
    for s, _, _ in edges:
        deg[s] += 1
    rank = [ONE // n] * n
    base = (15 * ONE) // (100 * n)
    for _ in range(iters):
        acc = [0] * n
        for s, d, _ in edges:
            acc[d] += rank[s] // deg[s]
        rank = [base + a * 85 // 100 for a in acc]
    return rank


def fwlike_pagerank(n, edges):
    """examples/fwlike/pagerank.cc: 1/n is 2^20, contributions truncated,
    iterated from the base rank until nothing changes (Jacobi sweeps; the
    kernel updates in place, and both reach the least fixed point)."""
    one = 1 << 20
    base = 15 * one // 100
    deg = [0] * n
    for s, _, _ in edges:
        deg[s] += 1
    rank = [base] * n
    while True:
        acc = [0] * n
        for s, d, _ in edges:
            acc[d] += rank[s] // deg[s]
        new = [base + a * 85 // 100 for a in acc]
        if new == rank:
            return rank
        rank = new


def components(n, edges):
    """Each vertex's label: the smallest vertex id of its (undirected)
    component (fwtmpl-cc)."""
    parent = list(range(n))

    def find(v):
        while parent[v] != v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v

    for s, d, _ in edges:
        a, b = find(s), find(d)
        if a != b:
            parent[max(a, b)] = min(a, b)
    return [find(v) for v in range(n)]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("kernel")
    p.add_argument("args", nargs="+")
    p.add_argument("-n", type=int, default=10)
    p.add_argument("-r", type=int)
    a = p.parse_args()
    if a.kernel == "gen":
        nv, ne, seed, out = int(a.args[0]), int(a.args[1]), int(a.args[2]), a.args[3]
        rnd = random.Random(seed)
        with open(out, "w") as f:
            f.write("# random test graph: src dst weight\n")
            for _ in range(ne):
                f.write(f"{rnd.randrange(nv)} {rnd.randrange(nv)} {rnd.randint(1, 255)}\n")
        return
    n, edges = read_edges(a.args[0])
    if a.kernel in ("adjlist", "fwlike-pagerank-sym"):  # undirected: each edge both ways
        edges = edges + [(d, s, w) for s, d, w in edges]
    adj = out_lists(n, edges)
    if a.kernel == "fwtmpl-cc":
        res = components(n, edges)
        for v, x in enumerate(res):
            print(v, x)
    elif a.kernel in ("bfs", "sssp", "fwpregel-sssp", "adjlist"):
        root = default_root(adj, a.r)
        res = (dijkstra if a.kernel.endswith("sssp") else bfs_depths)(adj, root)
        if a.kernel != "adjlist":
            for v, x in enumerate(res):
                print(v, x)
        else:
            strength = [sum(w for _, w in l) for l in adj]
            for v, x in enumerate(res):
                print(v, x, len(adj[v]), strength[v])
            hist = [0] * 34
            for l in adj:
                hist[len(l).bit_length()] += 1
            res = res + strength + hist + [max(len(l) for l in adj)]
    elif a.kernel.startswith("fwlike-pagerank"):
        res = fwlike_pagerank(n, edges)
        for v, x in enumerate(res):
            print(v, x)
    else:
        res = pagerank(n, edges, a.n)
        for v, x in enumerate(res):
            print(f"{v} {x / ONE:.9f}")
    print(f"checksum: {checksum(res):016x}")


if __name__ == "__main__":
    main()
