#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks that each entry of the runtime's options table (src/tw_config.c
tw_options) has a row in README.md's environment table that gives its
default. Usage: options_doc.py RUNTIME_DIR; prints "N options documented"
or what is missing (exit 1)."""

import re
import sys
from pathlib import Path

rt = Path(sys.argv[1])
src = (rt / "src" / "tw_config.c").read_text()
table = src[src.index("const tw_option tw_options[") :]
table = table[: table.index("\n};")]
entries = re.findall(r'\{"(TIERWISE_\w+)",\s*"(\w+)",\s*"([^"]*)",\s*([^,]+),', table)
readme = (rt / "README.md").read_text()
rows = {m[1]: m[2] for m in re.finditer(r"^\| `(TIERWISE_\w+)` \| (.*)\|$", readme, re.M)}
bad = []
for env, _key, unit, dflt in entries:
    row = rows.get(env)
    if row is None:
        bad.append(f"{env}: no row in runtime/README.md's environment table")
    elif "default" not in row:
        bad.append(f"{env}: its row does not give the default ({dflt.strip()} {unit})")
declared = len(re.findall(r"^\s*\[TW_O_\w+\] =", table, re.M))
if not entries or len(entries) != declared:
    bad.append(f"{declared} entries in tw_options, {len(entries)} read")
for b in bad:
    print(b)
if bad:
    sys.exit(1)
print(f"{len(entries)} options documented")
