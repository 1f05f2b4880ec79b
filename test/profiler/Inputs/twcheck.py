# SPDX-License-Identifier: MIT
"""Checks counts in a profile's sites.csv for the profiler lit tests.

usage: twcheck.py DIR SELECTOR EXPECT...
  SELECTOR  column=value picking exactly one row (e.g. bytes_allocated=4194304,
            stack=[stack])
  EXPECT    column=N (exact), column~N (within 5%), column<=N, column>=N
Prints the row and one line per expectation; exits 1 on any failure."""

import csv
import re
import sys


def main(argv):
    path, selector, expects = argv[1], argv[2], argv[3:]
    with open(f"{path}/sites.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    key, value = selector.split("=", 1)
    hits = [r for r in rows if r[key] == value]
    if len(hits) != 1:
        print(f"FAIL: {len(hits)} rows with {selector} in {path}/sites.csv")
        return 1
    row, ok = hits[0], True
    print("row:", ",".join(f"{k}={v}" for k, v in row.items()))
    for e in expects:
        col, op, num = re.fullmatch(r"(\w+)(=|~|<=|>=)(\d+)", e).groups()
        got, want = int(row[col] or 0), int(num)
        good = {
            "=": got == want,
            "~": abs(got - want) <= 0.05 * want,
            "<=": got <= want,
            ">=": got >= want,
        }[op]
        ok &= good
        print(f"{'ok' if good else 'FAIL'}: {col} {got} {op} {want}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
