# SPDX-License-Identifier: MIT
"""The finish step of `tierwise run`: what tierwise-launch (runtime/launch/
tw_launch.c) execs, in the same process, once the program has ended. It
prints the summary of the run report, removes the private directory, and
ends as the program ended: its exit status, or the signal that killed it
(raised again, without a core file, so a shell shows 128+N and a script
that runs `tierwise run` stops at a Ctrl-C as it would at the program's).
The signals the launcher passes on arrive blocked here and stay so: the
clean-up completes, and the status is the program's.

Not a verb: its arguments are the launcher's protocol, made by
commands/run.py:
  python -m tierwise.commands.run_finish TMP REPORT FLAGS STARTED CMD PID HOW
TMP the private directory ('' for none), REPORT the report path (`%p`
not yet replaced), FLAGS letters (r: --report was given, d: --dram-limit;
'-' for none), STARTED the time.time() before the launcher started, CMD the
program's name; the launcher adds PID and HOW (exit:N, signal:N,
exec:ERRNO). Standard library only at start (cli.FAST_VERBS)."""

from __future__ import annotations

import os
import signal
import sys

from tierwise.commands.run import plan_lines, remove_tree, summary
from tierwise.formats.report import other_reports, others_line

# Signals whose default action dumps core: a core file of this Python
# would name the wrong process.
_CORE = ("SIGABRT", "SIGBUS", "SIGFPE", "SIGILL", "SIGQUIT", "SIGSEGV", "SIGSYS", "SIGTRAP", "SIGXCPU", "SIGXFSZ")


def report_lines(report: str, flags: str, started: float, pid: int, how: str) -> tuple[list[str], bool]:
    """The lines `tierwise run` prints after the program, and whether the
    report could be read (a report that is there but is not one: False)."""
    rep = report.replace("%p", str(pid)) if "%p" in report else report
    if not os.path.exists(rep):
        kind, _, num = how.partition(":")
        if kind == "signal":
            name = _signame(int(num))
            why = f"the command was killed by {name}" + (
                ", which no program can catch" if name == "SIGKILL" else " before the runtime wrote it"
            )
        else:
            why = (
                "the command did not load the runtime, or ended without running its exit "
                "handlers (_exit, exec)"
            )
        return [f"tierwise run: no run report at {rep} ({why})"], True
    try:
        lines = summary(rep).split("\n")
        if "d" in flags:
            lines += plan_lines(rep)
    except ValueError as e:
        return [f"tierwise run: error: {e}"], False
    if "r" in flags:
        lines.append(f"tierwise run: report {rep}")
    others = other_reports(rep, started) if "%p" not in report else []
    if others:
        lines.append(f"tierwise run: {others_line(rep, others)}")
    return lines, True


def _signame(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def main(argv: list[str]) -> int:
    tmp, report, flags, started, cmd, pid, how = argv
    kind, _, num = how.partition(":")
    try:
        if kind == "exec":
            print(f"tierwise run: error: {cmd}: cannot run: {os.strerror(int(num))}", file=sys.stderr)
            return 2
        lines, ok = report_lines(report, flags, float(started), int(pid), how)
        print("\n".join(lines), file=sys.stderr)
        sys.stderr.flush()
    finally:
        if tmp:
            remove_tree(tmp)
    if not ok:
        return 2
    if kind == "signal":
        _die_of(int(num))
    return int(num)


def _die_of(sig: int) -> None:
    """End this process by signal `sig`, as the program ended."""
    if _signame(sig) in _CORE:
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    sys.stdout.flush()
    sys.stderr.flush()
    signal.signal(sig, signal.SIG_DFL)
    os.kill(os.getpid(), sig)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {sig})
    os._exit(128 + sig)  # a signal that does not end a process (SIGCHLD...)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
