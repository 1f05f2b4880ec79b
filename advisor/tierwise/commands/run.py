# SPDX-License-Identifier: MIT
"""`tierwise run`: run a command with a placement applied by the LD_PRELOAD
runtime (build/lib/libtierwise-runtime.so), then print a one-line summary of
its run report. The command's exit status is passed through."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tierwise import placement as placement_mod
from tierwise.backends.alloc import preload_blocker
from tierwise.cli import UserError
from tierwise.paths import runtime_preload
from tierwise.simulation import other_reports, others_line


def add_parser(sub):
    p = sub.add_parser(
        "run",
        help="run a command with a placement applied",
        description="Run CMD with LD_PRELOAD=libtierwise-runtime.so: each "
        "allocation site named in the placement is served from its tier "
        "(memkind), the rest from the default tier. Without the CLI: "
        "LD_PRELOAD=... TIERWISE_PLACEMENT=placement.json CMD.",
    )
    p.add_argument(
        "--placement",
        required=True,
        metavar="FILE",
        help="placement.json (tierwise advise, or hand-written)",
    )
    p.add_argument(
        "--pmem-dir",
        metavar="DIR",
        help="directory for the pmem "
        "tier's file (an fsdax mount on real hardware; default: a "
        "private temporary directory, removed afterwards)",
    )
    p.add_argument(
        "--dram-limit",
        metavar="SIZE",
        help="most bytes of live "
        "DRAM-placed data (suffixes K/M/G); beyond it, allocations "
        "fall back to the slow tier",
    )
    p.add_argument(
        "--report",
        metavar="FILE",
        help="write the run report of CMD here (`%%p` is the pid; default: a "
        "temporary file); other processes of the job that load the runtime "
        "(helper daemons, children) write FILE.COMMAND.PID beside it",
    )
    p.add_argument("cmd", nargs="*", metavar="-- CMD ARGS...")
    return p


def run_env(placement, pmem_dir, report, dram_limit=None, env=None):
    """The environment that runs a command under the runtime."""
    env = dict(os.environ if env is None else env)
    env["LD_PRELOAD"] = runtime_preload(env)
    env["TIERWISE_PLACEMENT"] = str(Path(placement).resolve())
    env["TIERWISE_PMEM_DIR"] = str(pmem_dir)
    env["TIERWISE_REPORT"] = str(report)
    env.pop("TIERWISE_CENSUS", None)
    env.pop("TIERWISE_REPORT_OWNER", None)  # CMD is the named process
    if dram_limit:
        env["TIERWISE_DRAM_LIMIT"] = str(dram_limit)
    return env


def summary(report_path):
    """One line from a run report."""
    rep = json.loads(Path(report_path).read_text())
    totals = rep.get("totals", {})
    tiers = ", ".join(f"{t} {b / 2**20:.1f} MiB" for t, b in totals.items())
    sites = rep.get("sites", [])
    matched = sum(1 for s in sites if s.get("allocs"))
    fb = sum(s.get("fallback_bytes", 0) for s in sites)
    fb += sum(s.get("fallback_bytes", 0) for s in rep.get("unmatched", []))
    warn = len(rep.get("warnings", []))
    return (
        f"tierwise run: {tiers}; {matched}/{len(sites)} placement sites "
        f"matched; fallback {fb / 2**20:.1f} MiB; {warn} warning(s)"
    )


def run(args):
    cmd = [c for c in args.cmd]
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        raise UserError("no command given: tierwise run --placement P -- CMD ARGS...")
    placement_mod.load(args.placement)  # one clear error before running
    if args.dram_limit:
        placement_mod.parse_size(args.dram_limit)
    why = preload_blocker(cmd[0])
    if why:  # never keep the user's program from running: run it unplaced
        print(f"tierwise run: warning: {why}; running it unplaced", file=sys.stderr)
        try:
            return subprocess.call(cmd)
        except OSError as e:
            raise UserError(f"{cmd[0]}: cannot run: {e.strerror}") from e
    tmp = Path(tempfile.mkdtemp(prefix="tierwise-run."))
    os.chmod(tmp, 0o700)
    try:
        pmem_dir = Path(args.pmem_dir) if args.pmem_dir else tmp / "pmem"
        if not args.pmem_dir:
            pmem_dir.mkdir(mode=0o700)
        report = args.report or str(tmp / "report.json")
        env = run_env(args.placement, pmem_dir, report, args.dram_limit)
        started = time.time()
        try:
            proc = subprocess.Popen(cmd, env=env)
        except OSError as e:
            raise UserError(f"{cmd[0]}: cannot run: {e.strerror}") from e
        proc.wait()
        rep = report.replace("%p", str(proc.pid)) if "%p" in report else report
        if Path(rep).exists():
            print(summary(rep), file=sys.stderr)
            if args.report:
                print(f"tierwise run: report {rep}", file=sys.stderr)
            others = other_reports(rep, started) if "%p" not in report else []
            if others:
                print(f"tierwise run: {others_line(rep, others)}", file=sys.stderr)
        else:
            print(
                f"tierwise run: no run report at {rep} (killed, or the "
                "command does not exit normally)",
                file=sys.stderr,
            )
        return proc.returncode if proc.returncode >= 0 else 128 - proc.returncode
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
