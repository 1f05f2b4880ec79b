# SPDX-License-Identifier: MIT
"""The `alloc` backend of `tierwise profile`: the allocation census. Runs the
command with the tierwise runtime preloaded in census mode
(TIERWISE_CENSUS=DIR): exact per-site allocation counts, bytes and peaks,
and the timeline of objects of at least --objects-min bytes, at near native
speed. No access counts (those columns stay empty)."""

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

from tierwise.paths import artifact, runtime_preload

RAW = [
    "sites.csv",
    "objects.csv",
    "modules.csv",
    "backend.json",
    "meta.json",
    ".census-owner",
]


def add_arguments(group):
    group.add_argument(
        "--objects-min",
        type=int,
        default=4096,
        metavar="BYTES",
        help="objects at least this big go into objects.csv " "(default 4096)",
    )


def preload_blocker(program):
    """Why LD_PRELOAD cannot apply to `program` (a command name or path), or
    None: a statically linked ELF (no PT_INTERP: nothing loads the runtime)
    or a setuid/setgid one (the loader ignores LD_PRELOAD paths). Scripts
    and programs that cannot be read are not judged (None)."""
    path = shutil.which(program)
    if not path:
        return None
    try:
        with open(path, "rb") as f:
            if f.read(4) != b"\x7fELF":
                return None
            from elftools.elf.elffile import ELFFile

            f.seek(0)
            static = not any(s["p_type"] == "PT_INTERP" for s in ELFFile(f).iter_segments())
        mode = os.stat(path).st_mode
    except Exception:  # unreadable or not a valid ELF file: let it run
        return None
    if static:
        return f"{program} is statically linked (no PT_INTERP): LD_PRELOAD cannot apply"
    if mode & (stat.S_ISUID | stat.S_ISGID):
        return f"{program} is setuid/setgid: the loader ignores LD_PRELOAD"
    return None


def available(args):
    try:
        artifact("lib/libtierwise-runtime.so")
    except Exception as e:  # MissingBuildError
        return False, str(e)
    return True, ""


def census_env(outdir, depth, objects_min, env=None):
    """The environment that runs a command under the census."""
    env = dict(os.environ if env is None else env)
    env["LD_PRELOAD"] = runtime_preload(env)
    env["TIERWISE_CENSUS"] = str(Path(outdir).resolve())
    env["TIERWISE_DEPTH"] = str(depth)
    env["TIERWISE_OBJECTS_MIN"] = str(objects_min)
    for var in ("TIERWISE_PLACEMENT", "TIERWISE_REPORT"):
        env.pop(var, None)
    return env


def run(args, cmd, outdir):
    why = preload_blocker(cmd[0])
    if why:
        raise FileNotFoundError(f"{why}; the alloc census cannot see its "
                                "allocations (relink it dynamically)")
    outdir = Path(outdir)
    for name in RAW:  # a previous run's files must not pass for this one's
        (outdir / name).unlink(missing_ok=True)
    for old in outdir.glob("*.tmp.*"):
        old.unlink(missing_ok=True)
    env = census_env(outdir, args.depth, getattr(args, "objects_min", 4096))
    print(f"tierwise profile: alloc census of {' '.join(cmd)}", file=sys.stderr)
    try:
        proc = subprocess.Popen(cmd, env=env)
    except OSError as e:
        raise FileNotFoundError(f"{cmd[0]}: cannot run: {e.strerror}") from e
    status = proc.wait()
    if status < 0:
        print(
            f"tierwise profile: {cmd[0]} was killed by signal {-status}; "
            "the profile is incomplete",
            file=sys.stderr,
        )
    return {
        "exit_status": status if status >= 0 else None,
        "params": {"objects_min_bytes": getattr(args, "objects_min", 4096)},
        "clock": "ns",
        "estimated": False,
        "pid": proc.pid,
    }
