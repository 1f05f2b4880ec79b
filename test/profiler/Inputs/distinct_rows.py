# SPDX-License-Identifier: MIT
"""Checks a site table printed by `tierwise advise` or `tierwise report`:
no two rows print the same location (each row is a different site, so a
different stack), and no function name is cut so that its own name is lost
(the last `::` component of PROFILE's full location must be in the row).
Prints the number of rows and each row's location, sorted, for FileCheck.

usage: distinct_rows.py TABLE PROFILE_DIR"""

import csv
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "advisor"))
from tierwise.symbolize import short_function, split_location  # noqa: E402


def main() -> None:
    table = Path(sys.argv[1]).read_text()
    sites = {int(r["site"]): r["location"] for r in csv.DictReader(open(Path(sys.argv[2]) / "sites.csv"))}
    rows = {}
    for line in table.splitlines():
        # a row: site, location, then the size column (e.g. "128.0 KiB")
        m = re.match(r"\s*(\d+)  (.+?) +\d[\d.]* (?:[KMGT]i)?B ", line)
        if not m:
            continue
        cell = m.group(2).strip()
        site = int(m.group(1))
        rows[site] = cell
        func = split_location(sites[site])
        own = re.sub(r"<.*", "", short_function(func[0]).split("::")[-1]) if func else ""
        if own and own not in cell:
            sys.exit(f"site {site}: {cell!r} lost the function's own name {own!r}")
    seen: dict = {}
    for site, cell in rows.items():
        if cell in seen:
            sys.exit(f"sites {seen[cell]} and {site} print the same location {cell!r}")
        seen[cell] = site
    print(f"{len(rows)} rows, all distinct")
    for cell in sorted(rows.values()):
        print(cell)


if __name__ == "__main__":
    main()
