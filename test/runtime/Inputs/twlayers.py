#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks the runtime's layering (runtime/README.md "Layers") at link level:
each runtime/src file says its layer in its opening comment ("Layer N"); it
is compiled alone (-O0, so nothing is inlined away) and every symbol it
uses from another runtime file must be defined in the same or a lower
layer, and the file-level graph of those uses must have no cycle.

  twlayers.py SRC_DIR [--cc CC] [--cflags "-I... -I..."]
Prints the layers, each file's uses of other files, the longest downward
chain, and "layers: ok" or the violations (exit 1).
"""

import argparse
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

LAYER = re.compile(r"Layer (\d)")
# A file whose opening comment says "pass-through interposers" defines libc
# names (read, write, syscall, ...) whose bodies check one flag and pass the
# call on (tw_touch_io.c, the sample profiler's): the runtime's own calls of
# those names are calls of libc, not uses of that file. Other interposers
# (malloc, mmap, sigaction) are uses: the runtime calls __libc_malloc,
# tw_sys_mmap and __sigaction instead.
PASS_THROUGH = re.compile(r"pass-through interposers")


def symbols(obj):
    """(defined, undefined) global symbols of an object file."""
    out = subprocess.run(
        ["nm", "-P", "--no-sort", str(obj)], capture_output=True, text=True, check=True
    ).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) < 2:
            continue
        name, kind = f[0], f[1]
        if kind == "U":
            undefined.add(name)
        elif kind in "TDBRVWtdbr" and kind.isupper():
            defined.add(name)
    return defined, undefined


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src", type=Path)
    ap.add_argument("--cc", default="cc")
    ap.add_argument("--cflags", default="", help="one string, split as a shell would")
    args = ap.parse_args()
    files = sorted(p for p in args.src.iterdir() if p.suffix in (".c", ".cc"))
    layer, defs, uses, passed = {}, {}, {}, set()
    bad = []
    with tempfile.TemporaryDirectory() as tmp:
        for f in files:
            m = LAYER.search(f.read_text()[:600])
            if not m:
                bad.append(f"{f.name}: no 'Layer N' in its opening comment")
                continue
            layer[f.name] = int(m.group(1))
            passing = PASS_THROUGH.search(f.read_text()[:1500]) is not None
            obj = Path(tmp) / (f.name + ".o")
            cc = args.cc if f.suffix == ".c" else args.cc.replace("gcc", "g++")
            subprocess.run(
                [cc, "-c", "-O0", "-fvisibility=hidden", str(f), "-o", str(obj)]
                + shlex.split(args.cflags)
                + (["-std=c++17"] if f.suffix == ".cc" else []),
                check=True,
            )
            defs[f.name], uses[f.name] = symbols(obj)
            if passing:
                passed.update(defs[f.name])
    owner = {s: f for f, ds in defs.items() for s in ds}
    for f in uses:  # the pass-through names are libc's to their callers
        uses[f] = {s for s in uses[f] if s not in passed}
    graph = {}
    for f, us in uses.items():
        graph[f] = sorted({owner[s] for s in us if s in owner and owner[s] != f})
        for g in graph[f]:
            if layer[g] > layer[f]:
                names = sorted(s for s in us if owner.get(s) == g)
                bad.append(
                    f"{f} (layer {layer[f]}) calls up into {g} (layer {layer[g]}): "
                    + ", ".join(names)
                )
    # cycles (DFS)
    state = {}

    def visit(f, path):
        state[f] = 1
        for g in graph.get(f, []):
            if state.get(g) == 1:
                bad.append("cycle: " + " -> ".join(path[path.index(g) :] + [g]))
            elif not state.get(g):
                visit(g, path + [g])
        state[f] = 2

    for f in graph:
        if not state.get(f):
            visit(f, [f])
    depth = {}

    def longest(f):
        if f not in depth:
            depth[f] = 1 + max((longest(g) for g in graph[f]), default=0)
        return depth[f]

    for n in range(5):
        fs = sorted(f for f in layer if layer[f] == n)
        print(f"layer {n}: {' '.join(fs)}")
    for f in sorted(graph, key=lambda f: (layer[f], f)):
        print(f"  {f} -> {' '.join(graph[f]) or '(nothing)'}")
    if not any(b.startswith("cycle") for b in bad):
        print(f"longest chain of files: {max(longest(f) for f in graph)}")
    for b in bad:
        print("VIOLATION:", b)
    print("layers: ok" if not bad else f"layers: {len(bad)} violation(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
