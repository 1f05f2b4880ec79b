# SPDX-License-Identifier: MIT
"""`tierwise run`: run a command with a placement applied by the LD_PRELOAD
runtime (build/lib/libtierwise-runtime.so), then print a one-line summary of
its run report. The command's exit status is passed through.

The process the user started stays the command's stand-in (issue 40): this
module checks and prepares, then execs tierwise-launch (runtime/launch/
tw_launch.c, same pid), which starts the command, passes on the signals
sent to it and waits, then execs the finish step (commands/run_finish.py:
the summary, removing the private directory, the command's exit status or
its signal). No Python is resident while the command runs. A program the
runtime cannot apply to is exec'ed in place of this process.

Start-up (cli.FAST_VERBS, issue 14): this module imports the standard
library's os, json, re, signal and time only (through placement, sizes,
preload, paths, formats.report): no subprocess, tempfile, shutil or
pathlib, whose imports alone cost more than the 50 ms this verb may add
(test/bench/run_startup.py)."""

from __future__ import annotations

import os
import signal
import sys
import time

from tierwise.formats import placement as placement_mod
from tierwise.cli import UserError, VERBS
from tierwise.commands.run_finish import remove_tree
from tierwise.paths import MissingBuildError, artifact_path
from tierwise.preload import RUN_UNSET, preload_blocker, runtime_vars
from tierwise.sizes import parse_share, share_option

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    import argparse
    from typing import Any, NoReturn


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "run",
        help=VERBS["run"],
        description="Run CMD with LD_PRELOAD=libtierwise-runtime.so: each "
        "allocation site named in the placement is served from its tier "
        "(memkind), the rest from the default tier. Signals sent to this "
        "process (SIGTERM, SIGINT, SIGHUP, SIGTSTP, ...) reach CMD; when CMD has "
        "ended it prints a summary of the run report and ends as CMD did (its exit "
        "status, or the same signal). Without the CLI: "
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
        "tier's file (an fsdax mount on real hardware; created with mode "
        "0700 if missing; default: a private temporary directory, removed "
        "afterwards)",
    )
    p.add_argument(
        "--dram-limit",
        type=share_option("--dram-limit", extra=("auto",)),
        metavar="SIZE|N%|auto",
        help="most bytes of live "
        "DRAM-placed data (e.g. 512M, 1.5GiB, '32.0 MiB': advisor/FORMATS.md "
        '"Sizes"; N%%: of the peak live footprint the placement was made for, its '
        "footprint_bytes; auto: the free memory of the DRAM node at start, as "
        "TIERWISE_DRAM_LIMIT=auto, divided by the job's processes on the node: for MPI ranks "
        "`mpirun -x TIERWISE_DRAM_LIMIT=auto ...`, each rank's share, counted from Open MPI's, "
        "MPICH's or MVAPICH2's local size or TIERWISE_LOCAL_RANKS); beyond it, allocations fall back to the slow tier. A placement "
        "that ranks its DRAM sites (rank, planned_bytes: tierwise advise writes them) "
        "has their planned bytes reserved in rank order, so a site allocated first "
        "cannot take the DRAM a better one allocated later needs; the run prints "
        "planned, got and fell back per site",
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


def _private_dir():
    """A new directory only this user can enter, as tempfile.mkdtemp makes
    it (mkdir with a random name, mode 0700, never an existing one) in the
    first usable of tempfile's candidates ($TMPDIR, $TEMP, $TMP, /tmp,
    /var/tmp, /usr/tmp, the working directory)."""
    env = [os.environ.get(v) for v in ("TMPDIR", "TEMP", "TMP")]
    for base in [d for d in env if d] + ["/tmp", "/var/tmp", "/usr/tmp", os.getcwd()]:
        for _ in range(100):
            path = os.path.join(base, f"tierwise-run.{os.urandom(6).hex()}")
            try:
                os.mkdir(path, 0o700)
                return path
            except FileExistsError:
                continue
            except OSError:
                break
    raise UserError("no writable temporary directory ($TMPDIR, /tmp, /var/tmp, .)")


def run(args: argparse.Namespace) -> int:
    cmd = [c for c in args.cmd]
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        raise UserError("no command given: tierwise run --placement P -- CMD ARGS...")
    placement = placement_mod.load(args.placement)  # one clear error before running
    limit = _dram_limit(args.dram_limit, placement, args.placement)
    why = preload_blocker(cmd[0])
    if why:  # never keep the user's program from running: run it unplaced
        unwritten = f" (no run report: {args.report} is not written)" if args.report else ""
        print(f"tierwise run: warning: {why}; running it unplaced{unwritten}", file=sys.stderr)
        _exec(cmd[0], cmd, dict(os.environ), path=True)
    try:
        launcher = artifact_path("bin/tierwise-launch")
    except MissingBuildError as e:
        raise UserError(str(e)) from None
    if args.pmem_dir:
        _pmem_dir(args.pmem_dir)
    tmp = _private_dir()
    try:
        pmem_dir = args.pmem_dir or os.path.join(tmp, "pmem")
        if not args.pmem_dir:
            os.mkdir(pmem_dir, 0o700)
        report = args.report or os.path.join(tmp, "report.json")
        argv = [launcher]
        for name, value in runtime_vars(args.placement, pmem_dir, report, limit).items():
            argv += ["-e", f"{name}={value}"]
        for name in RUN_UNSET:
            if name in os.environ:
                argv += ["-u", name]
        flags = ("r" if args.report else "") + ("d" if args.dram_limit else "")
        finish = _python() + _finish_step()
        finish += [tmp, report, flags or "-", repr(time.time()), cmd[0]]
        argv += ["-f", str(len(finish))] + finish + ["--"] + cmd
        _exec(launcher, argv, dict(os.environ))
    except BaseException:
        remove_tree(tmp)
        raise


def _dram_limit(text: str | None, placement: dict, path: str) -> str | None:
    """--dram-limit as TIERWISE_DRAM_LIMIT takes it: a size or `auto` as
    given, N% as the bytes of that share of the placement's footprint."""
    if not text or text == "auto":
        return text
    share = parse_share(text, "--dram-limit")
    if not isinstance(share, float):
        return text
    total = placement.get("footprint_bytes")
    if not isinstance(total, int) or isinstance(total, bool) or total <= 0:
        raise UserError(
            f"--dram-limit {text}: {path} has no footprint_bytes (tierwise advise writes "
            "it) to take a share of; give a size (512M) or auto"
        )
    return str(int(total * share / 100))


def _finish_step() -> list[str]:
    """How _python() starts commands/run_finish.py: through tierwise-boot.py
    beside the package (what bin/tierwise runs, under -E: PYTHONPATH does
    not find the package there), else as a module."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    boot = os.path.join(root, "tierwise-boot.py")
    if os.path.isfile(boot):
        return [boot, "__tierwise_run_finish__"]
    return ["-m", "tierwise.commands.run_finish"]


def _python() -> list[str]:
    """The command line that starts this Python as it was started (its
    flags that decide where `tierwise` is imported from)."""
    f = sys.flags
    opts = {"-S": f.no_site, "-E": f.ignore_environment, "-s": f.no_user_site, "-I": f.isolated}
    return [sys.executable or "python3"] + [o for o, on in opts.items() if on]


def _exec(program: str, argv: list[str], env: dict[str, str], path: bool = False) -> NoReturn:
    """Replace this process with `program` (searched on $PATH when `path`),
    so that the pid `tierwise run` started with is the one that ends with
    the program. SIGPIPE and SIGXFSZ, which Python ignores, are default
    again (as subprocess does); buffered output is written first."""
    for sig in (signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(sig, signal.SIG_DFL)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        if path:
            os.execvpe(program, argv, env)
        os.execve(program, argv, env)
    except OSError as e:
        raise UserError(f"{argv[0] if path else program}: cannot run: {e.strerror}") from e
    raise AssertionError("not reached")  # os.exec* returns only by raising


def _pmem_dir(path):
    """--pmem-dir: created (mode 0700, parents too, as mkdir -p) when it does
    not exist; anything else wrong with it is the runtime's to report (the
    pmem tier falls back to DRAM, a warning in the summary)."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
    except OSError as e:
        print(
            f"tierwise run: warning: --pmem-dir {path}: cannot create it "
            f"({e.strerror}); the pmem tier will fall back to dram",
            file=sys.stderr,
        )
