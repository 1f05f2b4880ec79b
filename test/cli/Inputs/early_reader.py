# SPDX-License-Identifier: MIT
"""broken-pipe.test: runs `TIERWISE report PROFILE -o OUT` with a stdout
pipe whose reader is gone before anything is written, and prints the exit
status and stderr."""
import subprocess
import sys

tw, profile, out = sys.argv[1:4]
p = subprocess.Popen(
    [tw, "report", profile, "-o", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0
)
p.stdout.close()
err = p.stderr.read().decode()
print(f"rc {p.wait()}, stderr {err.strip()!r}")
