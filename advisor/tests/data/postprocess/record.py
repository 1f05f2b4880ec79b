#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Records a raw profile as a post-processing test input (README.md here):
a sample of RAW's sites (and of each child process's), what llvm-symbolizer
says of their frames (symbols.json: the binaries stay out of the repo), and
the locations that a reference tierwise (REF: an advisor/ directory, e.g.
`git archive 410378c advisor | tar -x -C /tmp/ref`) finishes them with
(expected-locations.csv: site, location; it leaves every other column as
the raw sites.csv has it).

  python record.py RAW OUT --ref /tmp/ref/advisor [--every N]

RAW: `python -m tierwise.backends.sim -o RAW -- CMD` (or the alloc
backend's raw output), or `synthetic:N:SEED` (synthetic()). --every N keeps one site in N (by stack hash, so that
the sample keeps every kind of site; sites with a line in the program's own
code are all kept)."""

import argparse
import hashlib
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # advisor/
from tierwise.formats.profile import (  # noqa: E402
    OBJECT_COLUMNS, OPTIONAL_COLUMNS, REQUIRED_SITE_COLUMNS, read_modules, read_rows, write_rows,
)
from tierwise.symbolize import Symbolizer, parse_frame  # noqa: E402

# The reference finishes the sites with symbols.json's answers (the frames
# of a synthetic input have no binary)
FINISH = """
import json, sys
from datetime import datetime, timezone
from pathlib import Path
import tierwise.symbolize as S
from tierwise.formats.profile import finish_profile, read_modules
d = Path(sys.argv[1])
table = json.loads((d / "symbols.json").read_text())
known = {f"{m['module']}+{off}": [tuple(x) for x in chain]
         for m in read_modules(d) for off, chain in table.get(m["path"], {}).items()}
init = S.Symbolizer.__init__
def preloaded(self, *a, **k):
    init(self, *a, **k)
    self.cache.update(known)
S.Symbolizer.__init__ = preloaded
t = datetime(2026, 11, 28, tzinfo=timezone.utc)
finish_profile(d, ["x"], "sim", {"exit_status": 0}, t, t)
"""


def keep(stack, every, own):
    digest = int(hashlib.sha1(stack.encode()).hexdigest()[:8], 16)
    return stack.startswith("[") or any(stack.startswith(m + "+") for m in own) or digest % every == 0


def write_raw(out, rows, objects, modules_csv, backend, table):
    """A raw profile directory with its symbols.json."""
    out.mkdir(parents=True)
    columns = REQUIRED_SITE_COLUMNS + [c for c in OPTIONAL_COLUMNS if rows and c in rows[0]]
    write_rows(out / "sites.csv", columns, rows)
    write_rows(out / "objects.csv", list(OBJECT_COLUMNS), objects)
    (out / "modules.csv").write_text(modules_csv)
    (out / "backend.json").write_text(backend)
    (out / "symbols.json").write_text(json.dumps(table, indent=0, sort_keys=True) + "\n")


def reference(out, ref):
    """expected-locations.csv: the reference's finish_profile of a copy of OUT."""
    work = out.resolve().parent / (out.name + ".ref")
    shutil.copytree(out, work)
    subprocess.run([sys.executable, "-c", FINISH, str(work)], cwd=ref, check=True)
    # the reference kept every other column as the backend wrote it: what
    # it wrote is the raw sites.csv with these locations
    got = read_rows(work / "sites.csv", REQUIRED_SITE_COLUMNS)
    raw = read_rows(out / "sites.csv", REQUIRED_SITE_COLUMNS)
    assert [dict(r, location="") for r in got] == [dict(r, location="") for r in raw], \
        "the reference changed a column"
    write_rows(out / "expected-locations.csv", ["site", "location"], got)
    shutil.rmtree(work)


def record(raw, out, ref, every, own):
    """A sample of the raw profile RAW, symbolized with its binaries."""
    rows = read_rows(raw / "sites.csv", REQUIRED_SITE_COLUMNS)
    rows = [r for r in rows if keep(r["stack"], every, own)]
    ids = {r["site"] for r in rows}
    objs = [o for o in read_rows(raw / "objects.csv", list(OBJECT_COLUMNS)) if o["site"] in ids]
    modules = {m["module"]: m["path"] for m in read_modules(raw)}
    sym = Symbolizer(modules)
    frames = sorted({f for r in rows for f in r["stack"].split(";") if f})
    sym.resolve(frames)
    table: dict = {}
    for f in frames:  # every frame, those that resolve to nothing too
        p = parse_frame(f)
        if p and p[0] in modules:
            table.setdefault(modules[p[0]], {})[hex(p[1])] = [list(x) for x in sym.cache[f]]
    write_raw(out, rows, objs, (raw / "modules.csv").read_text(),
              (raw / "backend.json").read_text(), table)
    reference(out, ref)
    return len(rows)


def synthetic(out, ref, n, seed):
    """N sites of random stacks in a module with no binary, whose frames
    resolve to few files, lines and columns (inlined chains, frames with no
    line, frames that do not resolve): many sites print alike, share
    prefixes, or differ only in a column or a raw frame."""
    rnd = random.Random(seed)
    path = "/nonexistent/synth"
    table: dict = {path: {}}
    for off in range(0x100, 0x100 + 60 * 16, 16):
        kind = rnd.random()
        chain = []
        if kind > 0.1:
            for _ in range(rnd.choice([1, 1, 1, 2, 3])):
                f = rnd.choice(["a.c", "b.h", "/usr/include/c++/v.h", "c.cc"])
                chain.append([rnd.choice(["f", "g(int)", "h<T>"]), "/src/" + f if f[0] != "/" else f,
                              0 if kind < 0.2 else rnd.choice([3, 7, 9]), rnd.choice([0, 5, 11])])
        if kind > 0.1 and table[path] and rnd.random() < 0.3:
            # another call on the same line(s): the same chain, or one
            # whose columns differ
            chain = [list(x) for x in rnd.choice(list(table[path].values()))]
            if rnd.random() < 0.4:
                chain = [x[:3] + [x[3] + 1] for x in chain]
        table[path][hex(off)] = chain
    offs = list(table[path])
    stacks = set()
    while len(stacks) < n:
        if stacks and rnd.random() < 0.3:  # a neighbour of a site already made
            st = rnd.choice(sorted(stacks)).split(";")
            st[rnd.randrange(len(st))] = "synth+" + rnd.choice(offs)
            st = st[: rnd.randint(1, len(st))] if rnd.random() < 0.3 else st
        else:
            st = ["synth+" + rnd.choice(offs) for _ in range(rnd.randint(1, 6))]
        stacks.add(";".join(st))
    rows = [{"site": str(i), "stack": st, "location": "", "allocs": str(rnd.randint(1, 9)),
             "bytes_allocated": str(rnd.randint(1, 1 << 20))}
            for i, st in enumerate(sorted(stacks))]
    for r in rows:
        for c in REQUIRED_SITE_COLUMNS:
            r.setdefault(c, str(rnd.randint(0, 99)))
    write_raw(out, rows, [], f"module,path,build_id\nsynth,{path},\n",
              json.dumps({"depth": 6}) + "\n", table)
    reference(out, ref)
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("raw", help="raw profile directory, or synthetic:N:SEED")
    ap.add_argument("out", type=Path)
    ap.add_argument("--ref", type=Path, required=True)
    ap.add_argument("--every", type=int, default=1)
    ap.add_argument("--own", action="append", default=[], help="module whose sites are all kept")
    args = ap.parse_args()
    if args.raw.startswith("synthetic:"):
        _, n, seed = args.raw.split(":")
        print(f"{args.out}: {synthetic(args.out, args.ref, int(n), int(seed))} sites")
        return
    raw = Path(args.raw)
    print(f"{args.out}: {record(raw, args.out, args.ref, args.every, args.own)} sites")
    for kid in sorted((raw / "children").glob("*")):
        n = record(kid, args.out / "children" / kid.name, args.ref, args.every, args.own)
        print(f"{args.out / 'children' / kid.name}: {n} sites")


if __name__ == "__main__":
    main()
