# SPDX-License-Identifier: MIT
"""Checks that a table printed by `tierwise advise` or `tierwise report`
names, for every site allocated through a shared wrapper, the caller line
that tells it apart: the rows whose location says `(via WRAPPER:N)` must
each name a different `FILE:LINE` before it, and that source line must be
where the wrapper is used (it contains USE). Prints one line per wrapper
with the caller lines, sorted, for FileCheck.

usage: wrapper_sites.py TABLE SRCDIR WRAPPER=USE...
  e.g. wrapper_sites.py advise.out examples/fwlike array.h='Array<' util.h=safe_malloc
"""

import re
import sys
from pathlib import Path


def main():
    table, srcdir = Path(sys.argv[1]).read_text(), Path(sys.argv[2])
    sources = {p.name: p for p in srcdir.rglob("*") if p.suffix in (".h", ".cc", ".c")}
    for spec in sys.argv[3:]:
        wrapper, use = spec.split("=", 1)
        # table rows only (they start with the site number): not the notes
        # under the table, e.g. "site 10 (... graph.h:75 (via util.h:23)) is split"
        rows = re.findall(
            r"(?m)^ *\d+ .* (\S+):(\d+) \(via " + re.escape(wrapper) + r":\d+\)", table
        )
        if not rows:
            sys.exit(f"no row names a caller of {wrapper}")
        callers = [f"{f}:{n}" for f, n in rows]
        if len(set(callers)) != len(callers):
            sys.exit(f"{wrapper}: callers not distinct: {callers}")
        for f, n in rows:
            line = sources[f].read_text().splitlines()[int(n) - 1]
            if use not in line:
                sys.exit(f"{f}:{n} does not use {use}: {line.strip()}")
        print(f"{wrapper}: {len(rows)} sites, distinct callers " + " ".join(sorted(callers)))


if __name__ == "__main__":
    main()
