# SPDX-License-Identifier: MIT
"""ig_roi.test: compares the whole-run and the --roi igraph_pagerank
profiles of ig-pagerank (argv: ALL ROI) and prints what the test checks."""
import csv
import json
import sys

COUNTS = ["loads", "stores", "llc_load_misses", "llc_store_misses", "writebacks"]


def sites(d):
    with open(f"{d}/sites.csv", newline="") as f:
        return {r["stack"]: r for r in csv.DictReader(f)}


def total(rows, where, col):
    return sum(int(r[col] or 0) for r in rows.values() if where in r["location"])


whole, roi = sites(sys.argv[1]), sites(sys.argv[2])
r = json.load(open(f"{sys.argv[2]}/backend.json"))["roi"]
print(f"roi {r['mode']} {r['function']} entries {r['entries']}")
for name, where in (("graph", "ig_graph.c:16"), ("edge list", "gen.c:37")):
    print(f"{name} ({where}): loads {total(roi, where, 'loads')} stores {total(roi, where, 'stores')}")
own = [s for s, x in whole.items() if "ig_pagerank.c:31" in x["location"] and int(x["loads"] or 0)]
n = lambda rows, s, c: int(rows[s][c] or 0)
# written and missed only inside igraph_pagerank (misses within 2%: the
# cache it starts with differs by what ran before); read after it too (main
# reads the scores) and written back after it (at exit): no more than whole
same = all(
    s in roi
    and n(roi, s, "stores") == n(whole, s, "stores")
    and all(
        abs(n(roi, s, c) - n(whole, s, c)) <= 0.02 * n(whole, s, c) + 16
        for c in ("llc_load_misses", "llc_store_misses")
    )
    and all(n(roi, s, c) <= n(whole, s, c) for c in ("loads", "writebacks"))
    for s in own
)
print(f"igraph_pagerank's own arrays: {len(own)} sites, "
      + ("stores equal to the whole run, misses within 2%, loads and writebacks no more" if same else "counts DIFFER"))
later = [s for s in own if n(roi, s, "loads") < n(whole, s, "loads")]
print(f"read after igraph_pagerank returned: {len(later)} site(s), "
      + ", ".join(f"{n(whole, s, 'loads') - n(roi, s, 'loads')} loads" for s in later))
