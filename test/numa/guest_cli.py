# SPDX-License-Identifier: MIT
"""Inside the check-numa guest (test/numa/guest.sh): several `tierwise`
commands in ONE Python process, because under TCG most of a CLI call is
Python starting and importing numpy/pandas over 9p (25-80 s a call on a
loaded host). Usage:
    guest_cli.py NAME VERB ARGS... [, NAME VERB ARGS...]...
Each command runs through tierwise.cli.main (what build/bin/tierwise runs)
with stdout/stderr redirected at the file-descriptor level (subprocesses
included) to NAME.out / NAME.err in the current directory, and its exit
status written to NAME.rc, as guest.sh's run() leaves them."""

import os
import sys
import time
import traceback

from tierwise.cli import main


def run_one(name, argv, timeline):
    with open(timeline, "a") as t:
        t.write(f"{time.clock_gettime(time.CLOCK_BOOTTIME):.2f} start {name}\n")
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with open(f"{name}.out", "w") as out, open(f"{name}.err", "w") as err:
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        try:
            rc = main(argv)
        except SystemExit as e:  # argparse errors
            rc = e.code if isinstance(e.code, int) else 2
        except Exception:  # keep going: the verdict names the failed command
            traceback.print_exc()
            rc = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
    for fd in saved:
        os.close(fd)
    with open(f"{name}.rc", "w") as f:
        f.write(f"{rc}\n")
    with open(timeline, "a") as t:
        t.write(f"{time.clock_gettime(time.CLOCK_BOOTTIME):.2f} end {name}\n")


def commands(args):
    cmd = []
    for a in args + [","]:
        if a == ",":
            if cmd:
                yield cmd[0], cmd[1:]
            cmd = []
        else:
            cmd.append(a)


if __name__ == "__main__":
    for name, argv in commands(sys.argv[1:]):
        run_one(name, argv, "timeline")
