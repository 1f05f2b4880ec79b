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
(or tierwise-boot.py __tierwise_run_finish__ TMP ..., under bin/tierwise).
TMP the private directory ('' for none), REPORT the report path (`%p`
not yet replaced), FLAGS letters (r: --report was given, d: --dram-limit;
'-' for none), STARTED the time.time() before the launcher started, CMD the
program's name; the launcher adds PID and HOW (exit:N, signal:N,
exec:ERRNO). Standard library only at start (cli.FAST_VERBS)."""

from __future__ import annotations

import os
import signal
import sys

from tierwise.formats import report as report_mod
from tierwise.formats.report import other_reports, others_line

# Signals whose default action dumps core: a core file of this Python
# would name the wrong process.
_CORE = ("SIGABRT", "SIGBUS", "SIGFPE", "SIGILL", "SIGQUIT", "SIGSEGV", "SIGSYS", "SIGTRAP", "SIGXCPU", "SIGXFSZ")


def summary(report_path: str) -> str:
    """One line from a run report."""
    rep = report_mod.read(report_path)
    totals = rep.get("totals", {})
    tiers = ", ".join(f"{t} {b / 2**20:.1f} MiB" for t, b in totals.items())
    sites = rep.get("sites", [])
    matched = sum(1 for s in sites if s.get("allocs"))
    untracked = rep.get("untracked_default_sites", 0)
    fb = sum(s.get("fallback_bytes", 0) for s in sites)
    fb += sum(s.get("fallback_bytes", 0) for s in rep.get("unmatched", []))
    warn = len(rep.get("warnings", []))
    mismatches = (rep.get("cache") or {}).get("mismatches", 0)
    stood_down = rep.get("stood_down")  # the program's own allocator serves
    none = sites and not matched and not stood_down
    warn += 1 if none else 0
    return (
        (
            f"tierwise run: warning: nothing placed: {stood_down} "
            "(the run report's \"allocator\"; runtime/README.md)\n"
            if stood_down
            else ""
        )
        + (
            f"tierwise run: warning: none of the placement's {len(sites)} sites matched "
            "an allocation of the command: was the placement made for another program, "
            "or another build of it? (the run report's \"unmatched\" lists them)\n"
            if none
            else ""
        )
        + f"tierwise run: {tiers}; {matched}/{len(sites)} placement sites "
        + (f"matched ({untracked} more in the default tier not tracked); " if untracked else "matched; ")
        + f"fallback {fb / 2**20:.1f} MiB; {warn} warning(s)"
        + (f" ({mismatches} fast-path mismatch(es): see the report's warnings)" if mismatches else "")
    )


def plan_lines(report_path: str, limit: int = 20) -> list[str]:
    """Per ranked DRAM site of the placement (rank, planned_bytes): what it
    was planned, what it got in DRAM (over the run) and what fell back;
    under a DRAM limit the most of its reservation it held at once
    (runtime/README.md "DRAM limit")."""
    rep = report_mod.read(report_path)
    ranked = sorted((s for s in rep.get("sites", []) if s.get("rank")), key=lambda s: s["rank"])
    if not ranked:
        return []
    from tierwise.symbolize import fit_location

    mib = lambda b: f"{b / 2**20:.2f} MiB"
    lim = rep.get("dram_limit")
    head = "tierwise run: DRAM sites in the advisor's order"
    if lim:
        shared = f" over {lim['instants']} instants" if lim.get("instants", 0) > 1 else ""
        head += f" (limit {mib(lim['bytes'])}, {lim['policy']}, {mib(lim['reserved_bytes'])} reserved{shared})"
    held = lim and "reserved_peak_bytes" in ranked[0]
    lines = [head + f": rank, planned, got, fell back, {'most held at once, ' if held else ''}location"]
    for s in ranked[:limit]:
        got = s.get("bytes", {}).get("dram", 0)
        most = f" {mib(s['reserved_peak_bytes']):>12}" if held else ""
        lines.append(
            f"  {s['rank']:>3} {mib(s['planned_bytes']):>12} {mib(got):>12} "
            f"{mib(s.get('fallback_bytes', 0)):>12}{most}  {fit_location(s.get('location') or s['stack'], 72)}"
        )
    if len(ranked) > limit:
        lines.append(f"  ... {len(ranked) - limit} more in the report")
    return lines


def remove_tree(path: str) -> None:
    """rm -rf of the private directory, as far as it goes (shutil.rmtree
    with ignore_errors, without importing shutil)."""
    for root, dirs, files in os.walk(path, topdown=False):
        for name in files + dirs:
            p = os.path.join(root, name)
            try:
                os.rmdir(p) if os.path.isdir(p) and not os.path.islink(p) else os.unlink(p)
            except OSError:
                pass
    try:
        os.rmdir(path)
    except OSError:
        pass


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
