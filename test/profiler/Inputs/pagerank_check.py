# SPDX-License-Identifier: MIT
"""Checks a sim profile of pagerank-push or pagerank-pull at -g SCALE with
the default 10 iterations: which array each kind of access is charged to.

usage: pagerank_check.py push|pull PROFILE_DIR
Arrays are told apart by size and allocation order in the kernel's source
file (n = vertices, m = edges from the edge array's size)."""

import csv
import sys

ITERS = 10


def rows(d, src):
    r = [x for x in csv.DictReader(open(f"{d}/sites.csv")) if f"{src}:" in x["location"]]
    for x in r:
        x["line"] = int(x["location"].rsplit(":", 1)[1])
        for k in ("bytes_allocated", "loads", "stores", "llc_store_misses", "writebacks"):
            x[k] = int(x[k] or 0)
    return sorted(r, key=lambda x: x["line"])


def check(ok, what):
    print(("ok: " if ok else "FAIL: ") + what)
    return ok


def main(kind, d):
    r = rows(d, f"pagerank_{kind}.c")
    by_size = {}
    for x in r:
        by_size.setdefault(x["bytes_allocated"], []).append(x)
    vec = [
        x
        for x in r
        if x["bytes_allocated"]
        == min(b for b in by_size if b >= 8 * 64 and b % 8 == 0 and len(by_size[b]) == 2)
    ]
    edges = max(r, key=lambda x: x["bytes_allocated"])
    n, m = vec[0]["bytes_allocated"] // 8, edges["bytes_allocated"] // 4
    print(f"n={n} m={m} edges at line {edges['line']}, vectors at lines {[x['line'] for x in vec]}")
    good = check(
        edges["stores"] == m, f"edge array stores {edges['stores']} == m (construction only)"
    )
    good &= check(edges["loads"] == ITERS * m, f"edge array loads {edges['loads']} == {ITERS}*m")
    if kind == "push":
        rank, acc = vec
        good &= check(
            acc["stores"] == ITERS * (m + n),
            f"acc stores {acc['stores']} == {ITERS}*(m+n) (scattered adds)",
        )
        good &= check(
            acc["stores"] > 10 * rank["stores"],
            f"acc stores {acc['stores']} >> rank stores {rank['stores']}",
        )
    else:
        rank, contrib = vec
        good &= check(
            rank["stores"] == (ITERS + 1) * n,
            f"rank stores {rank['stores']} == {ITERS + 1}*n (own writes)",
        )
        good &= check(
            contrib["loads"] >= ITERS * m,
            f"contrib loads {contrib['loads']} >= {ITERS}*m (gathers)",
        )
        good &= check(
            contrib["stores"] == ITERS * n, f"contrib stores {contrib['stores']} == {ITERS}*n"
        )
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
