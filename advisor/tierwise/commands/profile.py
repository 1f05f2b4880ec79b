# SPDX-License-Identifier: MIT
"""`tierwise profile`: run a command unmodified under a profiling backend and
write a profile directory (advisor/FORMATS.md): pipeline.profile does it;
the backends are modules in tierwise/backends/ (pipeline.backend)."""

from __future__ import annotations
import argparse
import os
import re
import sys
from pathlib import Path
from typing import Any, Mapping

from tierwise.cli import UserError, VERBS
from tierwise.sizes import count_option
from tierwise.pipeline import BACKENDS, backend, choose_backend  # noqa: F401 (choose_backend: pmu-unavailable.test)

# Where MPI launchers put the process's rank, first present wins.
RANK_VARS = ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID")


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "profile",
        help=VERBS["profile"],
        description="Run CMD unmodified and write a profile directory: "
        "per allocation site counts of allocations, bytes, loads, stores, LLC "
        "misses and writebacks, and the allocation timeline.",
    )
    p.add_argument(
        "--backend",
        choices=["auto"] + BACKENDS,
        default="auto",
        help="sim: Valgrind cache simulation (exact, slow); pmu: hardware "
        "sampling (estimates, near native); sample: page-touch sampling "
        "(estimates, near native, no PMU, Valgrind or root); alloc: allocation "
        "census only; auto: pmu where its events open, else sim, else sample (default)",
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
    p.add_argument(
        "--force",
        action="store_true",
        help="replace the profile DIR already holds (without it, an existing "
        "profile is never overwritten)",
    )
    p.add_argument("--depth", type=count_option(1, 64), default=6, metavar="N",
                   help="user frames kept per allocation site (1-64, default 6)")
    for name in BACKENDS:
        try:
            mod = backend(name)
        except ModuleNotFoundError:
            continue
        if hasattr(mod, "add_arguments"):
            mod.add_arguments(p.add_argument_group(f"{name} backend"))
    p.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- CMD ARGS...")
    return p


def mpi_rank(environ: Mapping[str, str] | None = None) -> int | None:
    """The MPI rank from the launcher's environment (RANK_VARS), or None."""
    environ = os.environ if environ is None else environ
    for var in RANK_VARS:
        value = environ.get(var, "").strip()
        if value:
            if not value.isdigit():
                raise UserError(f"{var}={value!r}: not a rank number; unset it or fix the launcher")
            return int(value)
    return None


def expand_output(template: str, rank: int | None, pid: int) -> str:
    """-o DIR with %r (rank), %p (pid) and %% expanded."""

    def sub(m: re.Match[str]) -> str:
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


# What a profile directory holds (advisor/FORMATS.md "Profile directory").
PROFILE_FILES = ("meta.json", "sites.csv", "objects.csv", "modules.csv", "sites_by_tier.csv",
                 "backend.json", "pmu.json")


ASIDE = ".tierwise-replaced"  # DIR/ASIDE.PID: the profile --force replaces, until the new one is done


def _set_aside(outdir: Path, force: bool) -> Path | None:
    """Refuse to write over the profile `outdir` holds (its meta.json: the
    files would be mixed with the new run's), or with --force move it into
    DIR/.tierwise-replaced.PID, where it stays until the new profile is
    complete (a command that does not exist or a failed backend must not
    cost the user the old one: issue 36). A failed run's output (no
    meta.json) is written over."""
    held = [f for f in PROFILE_FILES if (outdir / f).exists()]
    if "meta.json" not in held:  # no profile there (raw or failed output)
        return None
    if not force:
        raise UserError(
            f"{outdir} already holds a profile ({held[0]}): pass --force to replace it, "
            "or choose another -o"
        )
    aside = outdir / f"{ASIDE}.{os.getpid()}"
    aside.mkdir()
    for f in held + (["children"] if (outdir / "children").exists() else []):
        os.rename(outdir / f, aside / f)
    return aside


def _put_back(outdir: Path, aside: Path) -> None:
    """The old profile back in place of what the failed run left."""
    import shutil

    for f in os.listdir(aside):
        new = outdir / f
        if new.is_dir() and not new.is_symlink():
            shutil.rmtree(new, ignore_errors=True)
        elif new.exists() or new.is_symlink():
            new.unlink()
        os.rename(aside / f, new)
    aside.rmdir()


def run(args: argparse.Namespace) -> int:
    from tierwise import pipeline

    cmd = list(args.cmd)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        raise UserError("no command given: tierwise profile [options] -- CMD ARGS...")
    rank = mpi_rank()
    if args.output:
        outdir = Path(expand_output(args.output, rank, os.getpid()))
    else:
        outdir = Path(f"tierwise-profile.{Path(cmd[0]).name}.{os.getpid()}")
    aside = _set_aside(outdir, args.force)
    try:
        res = pipeline.profile(cmd, outdir, args.backend, args, args.depth, rank)
    except BaseException:
        if aside:
            _put_back(outdir, aside)
            print(f"tierwise profile: {outdir}: the profile it held is kept", file=sys.stderr)
        raise
    if aside:
        import shutil

        shutil.rmtree(aside, ignore_errors=True)
    return res.returncode
