# SPDX-License-Identifier: MIT
"""The `alloc` backend of `tierwise profile`: the allocation census. Runs the
command with the tierwise runtime preloaded in census mode
(TIERWISE_CENSUS=DIR): exact per-site allocation counts, bytes and peaks,
and the timeline of objects of at least --objects-min bytes, at near native
speed. No access counts (those columns stay empty)."""

import os
import subprocess
import sys
from pathlib import Path

from tierwise.paths import artifact, runtime_preload
from tierwise.preload import preload_blocker
from tierwise.sizes import parse_size

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
        default="4096",
        metavar="SIZE",
        help="objects of at least SIZE bytes go into objects.csv (default 4096)",
    )


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
    objects_min = parse_size(getattr(args, "objects_min", "4096"), "--objects-min")
    env = census_env(outdir, args.depth, objects_min)
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
        "params": {"objects_min_bytes": objects_min},
        "clock": "ns",
        "estimated": False,
        "pid": proc.pid,
    }
