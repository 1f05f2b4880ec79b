# SPDX-License-Identifier: MIT
"""Runs an example with OMP_NUM_THREADS=1, 2 and 16 and checks that each run
succeeds and prints one `checksum: <16 hex digits>` line, the same in all
runs. Prints that line once (for FileCheck) or one error line and exits 1.

usage: threads.py EXAMPLE ARGS...
"""

import os
import re
import subprocess
import sys


def main():
    cmd = sys.argv[1:]
    sums = {}
    for threads in (1, 2, 16):
        env = dict(os.environ, OMP_NUM_THREADS=str(threads))
        r = subprocess.run(cmd, env=env, capture_output=True, text=True)
        found = re.findall(r"^checksum: ([0-9a-f]{16})$", r.stdout, re.M)
        if r.returncode != 0 or len(found) != 1:
            sys.exit(
                f"error: {' '.join(cmd)} with {threads} threads: exit {r.returncode}, "
                f"checksum lines {found}, stderr {r.stderr.strip()!r}"
            )
        if not re.search(r"^time: [0-9.]+ s$", r.stderr, re.M):
            sys.exit(f"error: {' '.join(cmd)}: no 'time: X s' line on stderr")
        sums[threads] = found[0]
    if len(set(sums.values())) != 1:
        sys.exit(f"error: {' '.join(cmd)}: checksum depends on the thread count: {sums}")
    print(f"checksum: {sums[1]}")


if __name__ == "__main__":
    main()
