# SPDX-License-Identifier: MIT
"""Print a minimal placement.json naming the profile sites whose `location`
ends with LOCATION (e.g. pagerank_push.c:33) as TIER:
`python place_location.py PROFILE_DIR LOCATION TIER`. Fails if none match."""
import csv
import json
import sys

prof, loc, tier = sys.argv[1:4]
with open(f"{prof}/sites.csv", newline="") as f:
    sites = [r for r in csv.DictReader(f) if r["location"].endswith(loc)]
if not sites:
    sys.exit(f"no site at {loc} in {prof}/sites.csv")
json.dump(
    {
        "format": "tierwise-placement",
        "version": 1,
        "default_tier": "dram",
        "sites": [{"stack": s["stack"], "location": s["location"], "tier": tier} for s in sites],
    },
    sys.stdout,
)
