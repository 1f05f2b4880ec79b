# SPDX-License-Identifier: MIT
"""Runs a command that must fail: non-zero exit, nothing on stdout, exactly
one line on stderr. Prints `rc=N: <that line>` for FileCheck, or exits 1.

usage: one_error.py CMD ARGS...
"""

import subprocess
import sys

r = subprocess.run(sys.argv[1:], capture_output=True, text=True)
lines = r.stderr.splitlines()
if r.returncode == 0 or r.stdout or len(lines) != 1:
    sys.exit(f"error: {sys.argv[1:]}: exit {r.returncode}, stdout {r.stdout!r}, stderr {lines!r}")
print(f"rc={r.returncode}: {lines[0]}")
