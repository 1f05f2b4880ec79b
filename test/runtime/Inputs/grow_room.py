# SPDX-License-Identifier: MIT
"""Starts a command, waits for its "ready" line, and after WAIT seconds
rewrites the fake node meminfo MEMINFO (TIERWISE_SYSFS_NODE) to MemFree
FREE_KB kB (unchanged when FREE_KB is -), waits WAIT seconds more, sends
SIGTERM and prints how the command ended. Usage: python grow_room.py
MEMINFO FREE_KB WAIT -- CMD ARGS..."""

import os
import re
import signal
import subprocess
import sys
import time

meminfo, free_kb, wait = sys.argv[1], sys.argv[2], float(sys.argv[3])
cmd = sys.argv[sys.argv.index("--") + 1 :]
p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
assert p.stdout is not None
first = p.stdout.readline().strip()
if first != "ready":
    sys.exit(f"grow_room: expected 'ready', got {first!r}")
time.sleep(wait)
if free_kb != "-":
    with open(meminfo) as f:
        text = f.read()
    text = re.sub(r"(MemFree:\s+)\d+", rf"\g<1>{free_kb}", text)
    with open(meminfo + ".new", "w") as f:
        f.write(text)
    os.replace(meminfo + ".new", meminfo)
time.sleep(wait)
p.send_signal(signal.SIGTERM)
rest = p.stdout.read()
rc = p.wait(timeout=60)
sys.stdout.write(rest)
print(f"killed by {signal.Signals(-rc).name}" if rc < 0 else f"exit {rc}")
