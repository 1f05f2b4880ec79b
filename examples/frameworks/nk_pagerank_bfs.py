# SPDX-License-Identifier: MIT
"""nk_pagerank_bfs.py: PageRank or BFS with NetworKit (C++ core with OpenMP,
driven from Python), a target whose big allocations happen inside
libnetworkit.so, not in the interpreter.

Options follow the C examples: -g SCALE (NetworKit's own R-MAT generator with
the Graph500 parameters A=0.57 B=0.19 C=0.19 D=0.05, 2^SCALE vertices, edge
factor -d, undirected, seeded with -s), or -f FILE ('src dst [weight]' lines,
directed, ids 0..max id, duplicate edges kept). It prints
'checksum: <16 hex digits>' on stdout:
- bfs: FNV-1a over each vertex's depth (-1 unreachable) as 64-bit words,
  exactly as the C examples, so on the same -f FILE it equals theirs;
- pagerank: nk.centrality.PageRank (damping 0.85, exactly -n iterations,
  no sink handling); each score rounded to 2^-20 of the average score
  (floor(x * n * 2^20 + 0.5)) and hashed the same way, as the C drivers'
  tw_fw_checksum_scores. NetworKit's per-vertex sums are sequential, so the
  scores do not depend on the thread count.
"""

import argparse
import sys
import time

import numpy as np

FNV_INIT = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
MASK = (1 << 64) - 1


def fnv_words(values):
    """FNV-1a over int64 values as little-endian 64-bit words."""
    h = FNV_INIT
    for byte in np.asarray(values, dtype="<i8").tobytes():
        h = ((h ^ byte) * FNV_PRIME) & MASK
    return h


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="nk_pagerank_bfs.py",
        description="PageRank or BFS with NetworKit; prints 'checksum: <hex>'.",
    )
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument(
        "-g", type=int, metavar="SCALE", help="R-MAT graph, 2^SCALE vertices"
    )
    src.add_argument("-f", metavar="FILE", help="edge list 'src dst [weight]'")
    p.add_argument(
        "-a", choices=["pagerank", "bfs"], default="pagerank", help="algorithm"
    )
    p.add_argument(
        "-d", type=int, default=16, metavar="DEGREE", help="edge factor (16)"
    )
    p.add_argument("-s", type=int, default=1, metavar="SEED", help="generator seed (1)")
    p.add_argument(
        "-n", type=int, default=10, metavar="ITER", help="PageRank iterations (10)"
    )
    p.add_argument("-r", type=int, default=-1, metavar="ROOT", help="BFS source")
    p.add_argument("-p", action="store_true", help="print the per-vertex result")
    args = p.parse_args(argv)
    if args.g is not None and not 0 <= args.g <= 30:
        p.error(f"-g {args.g}: SCALE must be in 0..30")
    if args.n < 1:
        p.error(f"-n {args.n}: ITER must be at least 1")
    return args


def read_edges(path):
    """The examples' edge-list format: 'src dst [weight]' per line, '#'
    starts a comment, ids 0..max id. (NetworKit's EdgeListReader rejects a
    two-field line after a three-field one, so the file is parsed here and
    the edges handed to NetworKit as arrays.)"""
    src, dst = [], []
    try:
        with open(path) as f:
            for lineno, line in enumerate(f, 1):
                fields = line.split("#", 1)[0].split()
                if not fields:
                    continue
                ids_ok = len(fields) in (2, 3) and (fields[0] + fields[1]).isdigit()
                if not ids_ok or not fields[-1].lstrip("-").isdigit():
                    sys.exit(
                        f"nk_pagerank_bfs.py: error: {path}:{lineno}: expected "
                        f"'src dst [weight]' with non-negative integers, got {line.strip()!r}"
                    )
                src.append(int(fields[0]))
                dst.append(int(fields[1]))
    except OSError as e:
        sys.exit(
            f"nk_pagerank_bfs.py: error: cannot read graph file {path}: {e.strerror}"
        )
    return np.array(src, dtype=np.uint64), np.array(dst, dtype=np.uint64)


def load(args):
    """The graph; a bad -f file fails before NetworKit is imported (~2 s)."""
    edges = read_edges(args.f) if args.f is not None else None
    import networkit as nk

    if edges is not None:
        src, dst = edges
        n = int(max(src.max(initial=0), dst.max(initial=0))) + 1 if len(src) else 0
        g = nk.Graph(n, directed=True)
        g.addEdges((src, dst))  # duplicates kept: the examples' multigraph
        return nk, g
    nk.setSeed(args.s, False)
    gen = nk.generators.RmatGenerator(args.g, args.d, 0.57, 0.19, 0.19, 0.05)
    return nk, gen.generate()


def bfs_depths(nk, g, root):
    dist = np.asarray(nk.distance.BFS(g, root, storePaths=False).run().getDistances())
    # NetworKit marks unreachable vertices with the largest double.
    return np.where(dist > g.numberOfNodes(), -1, dist).astype(np.int64)


def main(argv):
    args = parse_args(argv)
    nk, g = load(args)
    n = g.numberOfNodes()
    t0 = time.perf_counter()
    if args.a == "bfs":
        if args.r >= n:
            sys.exit(
                f"nk_pagerank_bfs.py: error: root {args.r} is not a vertex (0..{n - 1})"
            )
        root = args.r
        if root < 0:  # the first vertex with an out-edge, as the C examples
            root = next((u for u in range(n) if g.degreeOut(u) > 0), 0)
        result = bfs_depths(nk, g, root)
    else:
        pr = nk.centrality.PageRank(g, 0.85, 1e-300)
        pr.maxIterations = args.n
        pr.run()
        scores = np.asarray(pr.scores())
        result = np.floor(scores * (n * 1048576.0) + 0.5).astype(np.int64)
    print(f"time: {time.perf_counter() - t0:.6f} s", file=sys.stderr)
    if args.p:
        shown = scores if args.a == "pagerank" else result
        for v, x in enumerate(shown):
            print(v, f"{x:.9f}" if args.a == "pagerank" else x)
    print(f"checksum: {fnv_words(result):016x}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
