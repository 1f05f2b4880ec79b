# SPDX-License-Identifier: MIT
"""Checking helper of the reliability tests (test/reliability). Sub-commands:
census PROFILE OUT           the census counts (sites.csv, summed per
      function of `location`) equal the program's own `count FUNCTION
      allocs N bytes B` lines in OUT
report REPORT PROFILE OUT    the same for a run report (placed sites and
      `unmatched`, which must list every stack: TIERWISE_UNMATCHED_MIN=0),
      stacks mapped to functions through the census PROFILE; then the
      bytes per tier and the fallback bytes
place PROFILE TIER FUNC... -o FILE   placement of the sites of FUNCs
meta PROFILE                 complete, exit_status of meta.json
"""

import csv
import json
import sys
from collections import defaultdict
from pathlib import Path

from tierwise.formats import placement


def program_counts(out):
    counts = {}
    for line in open(out):
        f = line.split()
        if len(f) == 6 and f[0] == "count":
            counts[f[1]] = (int(f[3]), int(f[5]))
    if not counts:
        sys.exit(f"relcheck: no `count` lines in {out}")
    return counts


def function_of(location):
    return location.split(" ")[0] if location else ""


def compare(counts, got, what):
    bad = 0
    for fn, (n, b) in sorted(counts.items()):
        g = got.get(fn, (0, 0))
        status = "ok" if g == (n, b) else "MISMATCH"
        bad += status != "ok"
        print(
            f"{status} {fn}: program allocs={n} bytes={b}, {what} allocs={g[0]} bytes={g[1]}"
        )
    print(f"{what}: {len(counts) - bad}/{len(counts)} sites equal")


def census(args):
    prof, out = Path(args[0]), args[1]
    got = defaultdict(lambda: (0, 0))
    for r in csv.DictReader(open(prof / "sites.csv")):
        fn = function_of(r["location"])
        a, b = got[fn]
        got[fn] = (a + int(r["allocs"] or 0), b + int(r["bytes_allocated"] or 0))
    compare(program_counts(out), got, "census")


def report(args):
    rep = json.loads(Path(args[0]).read_text())
    fn_of = {
        r["stack"]: function_of(r["location"])
        for r in csv.DictReader(open(Path(args[1]) / "sites.csv"))
    }
    got = defaultdict(lambda: (0, 0))
    fallback = 0
    for s in rep["sites"]:
        fn = function_of(s["location"]) or fn_of.get(s["stack"], "")
        a, b = got[fn]
        got[fn] = (a + s["allocs"], b + sum(s["bytes"].values()))
        fallback += s["fallback_bytes"]
    def fn_by_prefix(stack):
        # a one-frame site (the runtime unwinds no further where no placement
        # site starts with that frame): the function of the census sites it
        # starts, when they share one
        fns = {f for st, f in fn_of.items() if st == stack or st.startswith(stack + ";")}
        return fns.pop() if len(fns) == 1 else "?"

    for u in rep["unmatched"]:
        fn = fn_of.get(u["stack"]) or fn_by_prefix(u["stack"])
        a, b = got[fn]
        got[fn] = (a + u["allocs"], b + u["bytes"])
        fallback += u["fallback_bytes"]
    compare(program_counts(args[2]), got, "report")
    pmem = rep["totals"].get("pmem", 0)
    print(
        f"pmem bytes {'>0' if pmem else '0'}, fallback bytes {'>0' if fallback else '0'}"
    )


def place(args):
    out = args[args.index("-o") + 1]
    args = args[: args.index("-o")]
    prof, tier, fns = Path(args[0]), args[1], args[2:]
    meta = json.loads((prof / "meta.json").read_text())
    rows = list(csv.DictReader(open(prof / "sites.csv")))
    def keys(loc):
        # a site is named by its location's function, or by a file name
        # (with a dot) anywhere in it, e.g. the `(via lib.c:9)` of a wrapper
        return {function_of(loc)} | {f for f in fns if "." in f and f in loc}

    sites = [
        {"stack": r["stack"], "location": r["location"], "tier": tier}
        for r in rows
        if keys(r["location"]) & set(fns)
    ]
    missing = set(fns) - {k for s in sites for k in keys(s["location"])}
    if missing:
        sys.exit(f"relcheck place: no site in {sorted(missing)}")
    doc = placement.make(sites, depth=meta["depth"], modules=meta["modules"])
    placement.write(doc, out)
    print(f"placed {len(sites)} site(s) in {tier}")


def meta(args):
    m = json.loads((Path(args[0]) / "meta.json").read_text())
    print(f"complete {m['complete']} exit_status {m['exit_status']}")


if __name__ == "__main__":
    {"census": census, "report": report, "place": place, "meta": meta}[sys.argv[1]](
        sys.argv[2:]
    )
