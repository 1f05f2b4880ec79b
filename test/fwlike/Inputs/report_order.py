# SPDX-License-Identifier: MIT
"""report.test: the site numbers of a `tierwise report` table must be the
sites with the largest KEY (bytes: peak bytes from sites.csv; benefit: the
table's benefit column), in descending order.

usage: report_order.py REPORT_OUTPUT PROFILE bytes|benefit
"""

import csv
import re
import sys
from pathlib import Path

out, prof, key = Path(sys.argv[1]).read_text(), Path(sys.argv[2]), sys.argv[3]
rows = re.findall(r"^ *(\d+)  .* ([0-9.]+)ms ", out, re.M)
sites = [int(s) for s, _ in rows]
with open(prof / "sites.csv") as f:
    heap = [r for r in csv.DictReader(f) if not r["stack"].startswith("[")]
if key == "bytes":
    val = {int(r["site"]): int(r["peak_bytes"] or 0) for r in heap}
    shown = [val[s] for s in sites]
    everything = sorted(val.values(), reverse=True)
else:
    shown = [float(b) for _, b in rows]
    # every site's benefit, from the report's own csv of all sites
    import subprocess

    subprocess.run([sys.executable, "-m", "tierwise", "report", str(prof), "-o", str(prof / "rep")],
                   check=True, capture_output=True)
    with open(prof / "rep" / "report.csv") as f:
        everything = sorted((float(r["benefit_s"]) * 1e3 for r in csv.DictReader(f)), reverse=True)
ok = shown == sorted(shown, reverse=True) and all(
    abs(a - b) <= 0.0005 * max(1, abs(b)) for a, b in zip(shown, everything)
)
if not ok:
    sys.exit(f"rows {sites} have {key} {shown}; the largest are {everything[:len(shown)]}")
print(f"{len(sites)} rows: the {len(sites)} largest of {len(heap)} sites, in descending {key}")
