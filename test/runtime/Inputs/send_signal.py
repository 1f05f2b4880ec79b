# SPDX-License-Identifier: MIT
"""Starts a command, waits for its "ready" line, sends it a signal, and
prints what it printed after that and how it ended ("exit N" or
"killed by SIGNAME"). Usage: python send_signal.py SIGNAME -- CMD ARGS..."""

import signal
import subprocess
import sys

sig = signal.Signals[sys.argv[1]]
cmd = sys.argv[sys.argv.index("--") + 1 :]
# A shell without job control starts background jobs with SIGINT ignored,
# and exec keeps an ignored signal ignored: the command gets the default
# (for each of the signals that end a job: a program may look at them all).
def defaults():
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, signal.SIG_DFL)


p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, preexec_fn=defaults)
assert p.stdout is not None
first = p.stdout.readline().strip()
while first.startswith("SIG"):  # (what a program saw of its signals)
    print(first)
    first = p.stdout.readline().strip()
if first != "ready":
    sys.exit(f"send_signal: expected 'ready', got {first!r}")
p.send_signal(sig)
rest = p.stdout.read()
rc = p.wait(timeout=60)
sys.stdout.write(rest)
print(f"killed by {signal.Signals(-rc).name}" if rc < 0 else f"exit {rc}")
