# SPDX-License-Identifier: MIT
"""Driver of run-signals.test: starts `tierwise run ... -- tw_run_target
MODE`, waits for the program's "ready PID PPID" line, sends a signal to
`tierwise run`'s pid (what a scheduler or a supervisor does), and prints
one line per fact the test checks:
  parent: whether the program's parent is that pid (no process between);
  resident: that pid's VmRSS and RssAnon while the program runs, under
    4 MiB and 1 MiB (the Python CLI held ~12 MiB, ~6 MiB anonymous);
  ended within 1 s: from the signal to the program's exit, waited for on
    a pidfd of the program (a 20 s bound otherwise, after which the
    program is killed);
then the program's output after that, `tierwise run`'s exit status as a
shell shows it ("status N", and "killed by SIG..." when it ended by a
signal), whether REPORT is a run report with the program's 4 MiB in
dram, what is left in $TMPDIR, and `tierwise run`'s stderr.
Usage: run_signal.py SIGNAME|stop REPORT -- CMD ARGS...
stop: SIGTSTP, then (both stopped) SIGCONT, then (both running) SIGTERM.
SIGKILL, which the launcher cannot pass on, kills the program through
PR_SET_PDEATHSIG (no report; the private directory stays)."""

import json
import os
import select
import signal
import subprocess
import sys
import time

what, report = sys.argv[1], sys.argv[2]
cmd = sys.argv[sys.argv.index("--") + 1 :]
sig = signal.SIGTERM if what == "stop" else signal.Signals[what]


def default_signals() -> None:
    # A shell without job control starts background jobs with SIGINT
    # ignored, and an ignored signal stays ignored through exec.
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGTSTP):
        signal.signal(s, signal.SIG_DFL)


# Its own process group, whose parent (this driver) is in another group of
# the same session: not an orphaned group, where the kernel discards a
# SIGTSTP that would stop a process (lit may run in one).
p = subprocess.Popen(
    cmd,
    stdout=subprocess.PIPE,
    stderr=subprocess.PIPE,
    text=True,
    preexec_fn=default_signals,
    process_group=0,
)
assert p.stdout is not None and p.stderr is not None
if not select.select([p.stdout], [], [], 60)[0]:
    p.kill()
    sys.exit("run_signal: no 'ready' line within 60 s")
first = p.stdout.readline().split()
if first[:1] != ["ready"]:
    p.kill()
    sys.exit(f"run_signal: expected 'ready PID PPID', got {first!r}")
prog, parent = int(first[1]), int(first[2])
print("parent: tierwise run", parent == p.pid)


def status_kb(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return -1


rss, anon = status_kb(p.pid, "VmRSS"), status_kb(p.pid, "RssAnon")
print(f"resident: VmRSS {rss} kB, RssAnon {anon} kB", file=sys.stderr)
print("resident under 4 MiB, anonymous under 1 MiB:", 0 <= rss < 4096 and 0 <= anon < 1024)


def state(pid: int) -> str:
    """The process's state letter (R, S, T, Z...), '' when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0]
    except OSError:
        return ""


def wait_states(letters: str, timeout: float = 20) -> bool:
    """Whether the program and `tierwise run` both reach a state in `letters`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        a, b = state(prog), state(p.pid)
        if a and b and a in letters and b in letters:
            return True
        time.sleep(0.01)
    return False


if what == "stop":
    os.kill(p.pid, signal.SIGTSTP)
    print("stopped, both:", wait_states("T"))
    os.kill(p.pid, signal.SIGCONT)
    print("continued, both:", wait_states("RSD"))

pidfd = os.pidfd_open(prog)
t0 = time.monotonic()
os.kill(p.pid, sig)
ended = bool(select.select([pidfd], [], [], 20)[0])
dt = time.monotonic() - t0
print(f"signal to exit: {dt:.3f} s", file=sys.stderr)
print("ended within 1 s:", ended and dt < 1.0)
if not ended:
    os.kill(prog, signal.SIGKILL)
out, err = p.communicate(timeout=60)
sys.stdout.write(out)
rc = p.returncode
print(f"status {128 - rc} (killed by {signal.Signals(-rc).name})" if rc < 0 else f"status {rc}")
try:
    with open(report) as f:
        rep = json.load(f)
    print("report: dram >= 4 MiB:", rep["totals"].get("dram", 0) >= 4 << 20)
except (OSError, ValueError, KeyError) as e:
    print(f"report: none ({e})")
tmp = os.environ.get("TMPDIR", "/tmp")
print("left in TMPDIR:", sorted(e for e in os.listdir(tmp) if e.startswith("tierwise-run.")))
sys.stdout.write(err)
