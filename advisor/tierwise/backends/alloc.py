# SPDX-License-Identifier: MIT
"""The `alloc` backend of `tierwise profile`: the allocation census. Runs the
command with the tierwise runtime preloaded in census mode
(TIERWISE_CENSUS=DIR): exact per-site allocation counts, bytes and peaks,
and the timeline of objects of at least --objects-min-bytes, at near native
speed. No access counts (those columns stay empty).

formats.profile (pandas) is imported where it is used: `tierwise doctor`
imports this module and must start in milliseconds (issue 36)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Mapping

from tierwise.paths import artifact, runtime_preload
from tierwise.preload import preload_blocker
from tierwise.backends import add_objects_min
from tierwise.sizes import parse_size

RAW = [
    "sites.csv",
    "objects.csv",
    "modules.csv",
    "backend.json",
    "meta.json",
    ".census-owner",
]


def add_arguments(group: Any) -> None:
    add_objects_min(group)


def _child_files(outdir):
    """The census files of processes other than the one the user named:
    NAME.PID.csv / backend.PID.json (runtime/src/tw_census.c)."""
    return [
        f
        for pattern in ("sites.*.csv", "objects.*.csv", "modules.*.csv", "backend.*.json")
        for f in outdir.glob(pattern)
        if f.name.split(".")[1].isdigit()
    ]


def _collect_children(outdir):
    """Each child process's census (fork or exec children: NAME.PID files)
    becomes a profile of its own in children/<command>.<pid>/, as the sim
    backend's (advisor/FORMATS.md); the list for backend_params.children.
    A child's census is written by its exit path, so it is complete, but its
    exit status is its parent's to know (null)."""
    pids = sorted({int(f.name.split(".")[1]) for f in _child_files(outdir)})
    kids = []
    for pid in pids:
        try:
            command = json.loads((outdir / f"backend.{pid}.json").read_text())["command"]
        except (OSError, ValueError, KeyError, TypeError):
            command = None
        from tierwise.formats import profile as profile_format
        rel = f"children/{profile_format.child_name(command)}.{pid}"
        dest = outdir / rel
        dest.mkdir(parents=True, exist_ok=True)
        for name in ("sites.csv", "objects.csv", "modules.csv", "backend.json"):
            base, ext = name.split(".")
            src = outdir / f"{base}.{pid}.{ext}"
            if src.exists():
                os.replace(src, dest / name)
        kids.append(
            {"pid": pid, "dir": rel, "exit_status": None, "command": command, "complete": True}
        )
    return kids


def available(args: argparse.Namespace | None) -> tuple[bool, str]:
    try:
        artifact("lib/libtierwise-runtime.so")
    except Exception as e:  # MissingBuildError
        return False, str(e)
    return True, ""


def census_env(
    outdir: str | os.PathLike[str],
    depth: int,
    objects_min: int,
    env: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment that runs a command under the census."""
    env = dict(os.environ if env is None else env)
    env["LD_PRELOAD"] = runtime_preload(env)
    env["TIERWISE_CENSUS"] = str(Path(outdir).resolve())
    env["TIERWISE_DEPTH"] = str(depth)
    env["TIERWISE_OBJECTS_MIN"] = str(objects_min)
    for var in ("TIERWISE_PLACEMENT", "TIERWISE_REPORT"):
        env.pop(var, None)
    return env


def run(args: argparse.Namespace, cmd: list[str], outdir: Path) -> dict[str, Any]:
    why = preload_blocker(cmd[0])
    if why:
        raise FileNotFoundError(f"{why}; the alloc census cannot see its "
                                "allocations (relink it dynamically)")
    outdir = Path(outdir)
    for name in RAW:  # a previous run's files must not pass for this one's
        (outdir / name).unlink(missing_ok=True)
    for old in outdir.glob("*.tmp.*"):
        old.unlink(missing_ok=True)
    for old in _child_files(outdir):
        old.unlink(missing_ok=True)
    objects_min = parse_size(getattr(args, "objects_min_bytes", 4096), "--objects-min-bytes")
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
    params = {"objects_min_bytes": objects_min}
    kids = _collect_children(outdir)
    if kids:
        params["children"] = kids
        print(
            f"tierwise profile: alloc: {len(kids)} child process profile(s) in "
            f"{outdir / 'children'}",
            file=sys.stderr,
        )
    return {
        "exit_status": status if status >= 0 else None,
        "signal": -status if status < 0 else None,
        "params": params,
        "clock": "ns",
        "estimated": False,
        "pid": proc.pid,
    }
