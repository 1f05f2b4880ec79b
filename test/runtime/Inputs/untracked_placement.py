# SPDX-License-Identifier: MIT
"""A large placement for untracked-default.test, from a census of tw_sites:
N made-up default-tier (dram) sites that match nothing, site C (the
posix_memalign array) in pmem, the first frame of site A's stack in pmem,
and site A's whole stack in dram: the longer dram site decides A's calls
against the pmem prefix, so it must stay tracked however many dram sites
the placement lists. Site B's stack twice in dram, the second time ranked:
the first entry is the one matched, and it stays tracked too.
  untracked_placement.py PROFILE_DIR N -o FILE"""

import csv
import json
import sys
from pathlib import Path

prof, n, out = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[4]
rows = list(csv.DictReader(open(prof / "sites.csv")))
meta = json.loads((prof / "meta.json").read_text())


def one(part):
    hits = [r for r in rows if part in r["location"]]
    if len(hits) != 1:
        sys.exit(f"untracked_placement: {len(hits)} sites at {part}")
    return hits[0]


a, b, c = one("tw_sites.c:10"), one("tw_sites.c:19"), one("tw_sites.c:21")
first = a["stack"].split(";")[0]
module = first.split("+")[0]
sites = [{"stack": f"{module}+0x{0x7f0000 + 16 * i:x};{module}+0x10", "location": f"made-up {i}", "tier": "dram"}
         for i in range(n)]
sites += [
    {"stack": c["stack"], "location": c["location"], "tier": "pmem"},
    {"stack": first, "location": "site A's first frame", "tier": "pmem"},
    {"stack": a["stack"], "location": a["location"], "tier": "dram"},
    {"stack": b["stack"], "location": b["location"], "tier": "dram"},
    {"stack": b["stack"], "location": "site B again, ranked", "tier": "dram", "rank": 1,
     "planned_bytes": 4 << 20},
]
Path(out).write_text(json.dumps({
    "format": "tierwise-placement", "version": 1, "default_tier": "dram",
    "depth": meta["depth"], "modules": meta["modules"], "sites": sites}) + "\n")
