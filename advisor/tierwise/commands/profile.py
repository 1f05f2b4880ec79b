# SPDX-License-Identifier: MIT
"""`tierwise profile`: run a command unmodified under a profiling backend and
write a profile directory (advisor/FORMATS.md). Backends are modules in
tierwise/backends/ with `add_arguments(parser)` (optional), `available(args)
-> (bool, reason)` and `run(args, outdir) -> dict` returning
{"exit_status", "params", "clock", "estimated"}."""
import argparse
import importlib
import os
import re
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from tierwise.cli import UserError

BACKENDS = ["sim", "pmu", "alloc"]
# Where MPI launchers put the process's rank, first present wins.
RANK_VARS = ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID")


def _backend(name):
    return importlib.import_module(f"tierwise.backends.{name}")


def add_parser(sub):
    p = sub.add_parser(
        "profile",
        help="profile an unmodified command",
        description="Run CMD unmodified and write a profile directory: "
        "per allocation site counts of allocations, bytes, loads, stores, LLC "
        "misses and writebacks, and the allocation timeline.",
    )
    p.add_argument(
        "--backend",
        choices=["auto"] + BACKENDS,
        default="auto",
        help="sim: Valgrind cache simulation (exact, slow); pmu: hardware "
        "sampling (estimates, near native); alloc: allocation census only; "
        "auto: pmu where its events open, else sim (default)",
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="DIR",
        help="profile directory; %%r is replaced by the MPI rank, %%p by "
        "the pid of tierwise profile, %%%% by %% (default: "
        "tierwise-profile.<command>.<pid>). The rank "
        "comes from the first of " + ", ".join(RANK_VARS) + " that is set and "
        'is recorded as "rank" in meta.json, e.g. `mpirun -np 4 tierwise '
        "profile -o prof.%%r -- ./app`",
    )
    p.add_argument("--depth", type=int, default=6, metavar="N",
                   help="user frames kept per allocation site (default 6)")
    for name in BACKENDS:
        try:
            mod = _backend(name)
        except ModuleNotFoundError:
            continue
        if hasattr(mod, "add_arguments"):
            mod.add_arguments(p.add_argument_group(f"{name} backend"))
    p.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- CMD ARGS...")
    return p


def choose_backend(args):
    """Resolve --backend auto: pmu where its events open, else sim."""
    if args.backend != "auto":
        return args.backend
    ok, why = _backend("pmu").available(args)
    if ok:
        print("tierwise profile: using the pmu backend", file=sys.stderr)
        return "pmu"
    print(f"tierwise profile: pmu backend unavailable ({why}); using sim", file=sys.stderr)
    return "sim"


def mpi_rank(environ=None):
    """The MPI rank from the launcher's environment (RANK_VARS), or None."""
    environ = os.environ if environ is None else environ
    for var in RANK_VARS:
        value = environ.get(var, "").strip()
        if value:
            if not value.isdigit():
                raise UserError(f"{var}={value!r}: not a rank number; unset it or fix the launcher")
            return int(value)
    return None


def expand_output(template, rank, pid):
    """-o DIR with %r (rank), %p (pid) and %% expanded."""

    def sub(m):
        if m.group(1) == "%":
            return "%"
        if m.group(1) == "p":
            return str(pid)
        if rank is None:
            raise UserError(
                f"-o {template}: %r needs an MPI rank, but none of "
                + ", ".join(RANK_VARS)
                + " is set; run under mpirun/srun or drop %r"
            )
        return str(rank)

    return re.sub(r"%([rp%])", sub, template)


def run(args):
    cmd = list(args.cmd)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        raise UserError("no command given: tierwise profile [options] -- CMD ARGS...")
    if args.depth < 1 or args.depth > 64:
        raise UserError(f"--depth {args.depth}: must be between 1 and 64")
    name = choose_backend(args)
    if name != "sim" and getattr(args, "roi", "all") not in (None, "all"):
        raise UserError(
            f"--roi {args.roi}: only the sim backend counts a region of interest "
            f"(the {name} backend counts the whole run)"
        )
    pool_fns = (getattr(args, "alloc_fn", None) or []) + (getattr(args, "free_fn", None) or [])
    if name != "sim" and pool_fns:
        raise UserError(
            f"--alloc-fn/--free-fn {pool_fns[0]}: only the sim backend sees a pool's "
            f"hand-outs (the {name} backend sees malloc only)"
        )
    ok, why = _backend(name).available(args)
    if not ok:
        raise UserError(f"{name} backend unavailable: {why}")
    rank = mpi_rank()
    if args.output:
        outdir = Path(expand_output(args.output, rank, os.getpid()))
    else:
        outdir = Path(f"tierwise-profile.{Path(cmd[0]).name}.{os.getpid()}")
    outdir.mkdir(parents=True, exist_ok=True)
    if not os.access(outdir, os.W_OK):
        raise UserError(f"{outdir}: profile directory is not writable")
    from tierwise.formats import profile as profile_format

    start = datetime.now(timezone.utc)
    t0 = time.monotonic()
    info = _backend(name).run(args, cmd, outdir)
    end = datetime.now(timezone.utc)
    meta = profile_format.finish_profile(
        outdir, cmd, name, info, start, end, depth=args.depth, rank=rank
    )
    for child in (info.get("params") or {}).get("children", []):
        # One profile per process (sim follows fork/exec): finish each too,
        # with the child's own command line where the backend saw it.
        kid = dict(
            info,
            exit_status=child.get("exit_status"),
            pid=child["pid"],
            params={},
            complete=child.get("complete"),
        )
        profile_format.finish_profile(
            outdir / child["dir"],
            child.get("command") or cmd,
            name,
            kid,
            start,
            end,
            depth=args.depth,
            rank=rank,
        )
    status = info.get("exit_status")
    if name == "sim" and meta.get("complete", True):
        from tierwise import reader
        from tierwise.advice import llc_warning

        try:
            warn = llc_warning(reader.read_profiles([outdir]))
        except ValueError:  # no sites: nothing to compare
            warn = None
        if warn:
            print(f"tierwise profile: warning: {warn}", file=sys.stderr)
    print(
        f"tierwise profile: {name} backend, {time.monotonic() - t0:.1f} s, "
        f"{meta.get('n_sites', '?')} sites, exit status {status} -> {outdir}",
        file=sys.stderr,
    )
    return status if isinstance(status, int) and status >= 0 else 1
