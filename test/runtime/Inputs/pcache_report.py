# SPDX-License-Identifier: MIT
"""What placement-cache.test checks in a run report: the placement cache's
state, the untracked default-tier sites, and each listed site's tier,
allocations and bytes per tier (the placement as applied).
  pcache_report.py REPORT [--state]   (--state: the first line only)"""

import json
import sys

r = json.load(open(sys.argv[1]))
pc = r.get("placement_cache", {})
print("cache", pc.get("state", "(none)"), "untracked", r["untracked_default_sites"],
      "listed", len(r["sites"]))
for s in r["sites"] if sys.argv[2:] != ["--state"] else []:
    b = s["bytes"]
    print("site", s["location"], s["tier"], s["allocs"], b.get("dram", 0), b.get("pmem", 0),
          s.get("rank", "-"), s.get("planned_bytes", "-"))
