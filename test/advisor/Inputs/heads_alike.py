# SPDX-License-Identifier: MIT
"""heads_alike.py DEFAULT.json OTHER.json...: every site the default model's
placement gives a DRAM head (`dram_bytes`) has one in each OTHER placement
too, whose entry names that placement's slow tier. Prints one line per
placement and head, then OK; exits 1 otherwise."""

import json
import sys


def heads(path):
    doc = json.load(open(path))
    return doc, {s["stack"]: s for s in doc["sites"] if "dram_bytes" in s}


base_doc, base = heads(sys.argv[1])
ok = bool(base)
if not base:
    print(f"{sys.argv[1]}: the default model gives no head")
for path in sys.argv[1:]:
    doc, got = heads(path)
    slow = [t for t in doc["tiers"] if t != "dram"]
    for stack, s in sorted(got.items(), key=lambda kv: kv[1]["location"]):
        print(
            f"{doc['tier_model']}: head {s['location'].split('/')[-1]} tier {s['tier']} "
            f"dram_bytes {s['dram_bytes']} of {s['bytes']}"
        )
        ok &= s["tier"] == slow[0] and 0 < s["dram_bytes"] < s["bytes"]
    missing = sorted(base[k]["location"].split("/")[-1] for k in base if k not in got)
    if missing:
        print(f"{doc['tier_model']}: no head on {', '.join(missing)}")
        ok = False
print("OK" if ok else "FAIL")
sys.exit(0 if ok else 1)
