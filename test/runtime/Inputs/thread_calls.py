#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Counts the system calls of an `strace -f -o FILE` trace per thread kind:
the process's main thread (its tid is the pid: the lowest in the file)
and its other threads. Usage: thread_calls.py FILE CALL...; prints one line
per call: "CALL main=N others=M"."""

import re
import sys
from collections import Counter

lines = open(sys.argv[1]).read().splitlines()
tids = [int(m[1]) for m in (re.match(r"^(\d+)\s", ln) for ln in lines) if m]
main = min(tids) if tids else -1  # (the process: its threads came after it)
count = Counter()
for ln in lines:
    m = re.match(r"^(\d+)\s+(?:<\.\.\. )?(\w+)[(\s]", ln)
    if m and "resumed>" not in ln:
        count[(m[2], int(m[1]) == main)] += 1
for call in sys.argv[2:]:
    print(f"{call} main={count[(call, True)]} others={count[(call, False)]}")
