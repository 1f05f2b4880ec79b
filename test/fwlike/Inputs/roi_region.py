# SPDX-License-Identifier: MIT
"""For each fwlike-pagerank profile made with --roi: the region's entries,
the symbol the tool entered, and the loads of the rank array (an Array of
the kernel, read in every sweep) and of the generator's edge list (read
only before the kernel). One line per profile.

usage: roi_region.py PROFILE...
"""

import csv
import json
import sys
from pathlib import Path

for d in map(Path, sys.argv[1:]):
    roi = json.loads((d / "meta.json").read_text())["backend_params"]["roi"]
    loads = {}
    with open(d / "sites.csv") as f:
        for row in csv.DictReader(f):
            loads[row["location"]] = int(row["loads"] or 0)
    src = (Path(__file__).parents[3] / "examples/fwlike/pagerank.cc").read_text().splitlines()
    rank_line = next(i + 1 for i, l in enumerate(src) if "Array<uint64_t> rank(n)" in l)
    rank = [v for k, v in loads.items() if f"pagerank.cc:{rank_line} " in k]
    edges = [v for k, v in loads.items() if "alloc_edges" in k]
    syms = ",".join(s["symbol"] for s in roi.get("symbols", []))
    print(f"entries {roi['entries']}, symbol {syms}, rank loads {sum(rank)}, "
          f"edge list loads {sum(edges)}")
