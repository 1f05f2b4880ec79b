# SPDX-License-Identifier: MIT
"""`tierwise rewrite`: apply a placement as a reviewable source patch.

A thin wrapper over build/bin/tierwise-rewrite (rewriter/README.md). What it
adds: sites of the placement without a `frames` list get one by symbolizing
their `stack` (module+offset frames, inline frames expanded, with columns)
with llvm-symbolizer, so the tool can see through inlined wrappers and tell
two allocations on one line apart. Modules are looked up in --binary paths,
`modules[].path` of the placement, build/examples and the working directory;
a module whose build-id differs from the placement's is not used, and a user
module (not a system library) that is not found stops the rewrite with one
line saying why, before any site is reported."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterable

from tierwise import compiledb, paths
from tierwise.cli import UserError
from tierwise.formats import placement as placement_format
from tierwise.symbolize import Symbolizer, build_id

def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "rewrite",
        help="apply a placement as a source patch (Clang rewriter)",
        description="Rewrite the allocation expressions of the sites a "
        "placement puts outside the default tier into libtierwise calls "
        "(tw_malloc(TW_TIER_PMEM, n), new (tw::pmem) T[n]; a site with a DRAM "
        "head, dram_bytes N: tw_malloc_head(TW_TIER_PMEM, N, n) for malloc and "
        "calloc only). A macro whose uses need different tiers is expanded at "
        "each placed use; a wrapper (function, constructor) serving several tiers "
        "gains a tier parameter that its placed callers pass. Stacks are "
        "symbolized against the placement's modules[].path (or --binary); with "
        "-p, a source compiled several times is parsed with the configuration "
        "in the binary. Prints a unified "
        "diff; -i edits in place, -o writes the patch. Exit status 0: all "
        "placed sites rewritten, 1: some were not (listed), 2: bad arguments.",
    )
    p.add_argument("--placement", required=True, metavar="FILE", help="placement.json")
    p.add_argument(
        "-p", dest="build_path", metavar="BUILD_DIR", help="directory with compile_commands.json"
    )
    g = p.add_mutually_exclusive_group()
    g.add_argument("-i", dest="in_place", action="store_true", help="edit the files in place")
    g.add_argument("-o", dest="patch", metavar="PATCH", help="write the diff to PATCH")
    p.add_argument(
        "--binary",
        action="append",
        default=[],
        metavar="PATH",
        help="a module (or a directory of modules) to symbolize stacks with; repeatable",
    )
    p.add_argument(
        "files",
        nargs=argparse.REMAINDER,
        metavar="FILES... [-- COMPILER ARGS]",
        help="sources to rewrite; compiler flags after -- replace -p",
    )
    return p


SYSTEM_DIRS = ("/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/")


def _is_system_library(mod, path):
    """A shared library of the system (libgomp, libstdc++): its frames are
    library code, not a user file, whether or not it is found."""
    if path:
        return str(path).startswith(SYSTEM_DIRS)
    return bool(re.match(r"(lib|ld-).*\.so(\.|$)", mod))


def find_modules(
    placement: dict, binaries: Iterable[str], placed_only: bool = True
) -> tuple[dict[str, Path], list[tuple[str, str]]]:
    """(module basename -> path, one line per user module not found) for the
    modules the placement's stacks name. A module is looked up in --binary
    paths, its placement `modules[].path`, build/examples and the working
    directory, and used only if its build-id is the placement's."""
    default = placement.get("default_tier", "dram")
    wanted = {
        f.split("+", 1)[0]
        for s in placement.get("sites", [])
        if not placed_only or s.get("tier") != default
        for f in str(s.get("stack", "")).split(";")
        if "+" in f
    }
    recorded = {m.get("module"): m for m in placement.get("modules", [])}
    found, missing = {}, []
    candidates = [Path(b) for b in binaries]
    candidates += [Path(m["path"]) for m in placement.get("modules", []) if m.get("path")]
    candidates += [paths.build_dir() / "examples", Path.cwd()]
    for mod in sorted(wanted):
        want = recorded.get(mod, {}).get("build_id")
        why = []
        tried = set()
        for c in candidates:
            path = (c / mod if c.is_dir() else c).resolve()
            if path.name != mod or not path.is_file() or path in tried:
                continue
            tried.add(path)
            if want and build_id(path) != want:
                why.append(f"{path} has another build-id (rebuilt since profiling?)")
                continue
            found[mod] = path
            break
        if mod in found:
            continue
        where = recorded.get(mod, {}).get("path", "")
        if _is_system_library(mod, where):
            continue
        if not why:
            why.append(f"no file at {where}" if where else "the placement records no path for it")
        missing.append((mod, f"module {mod}: " + "; ".join(why)))
    return found, missing


def symbolize(placement: dict, modules: dict[str, Path]) -> int:
    """Adds `frames` (symbolize.Symbolizer.frames) to the sites that lack
    them; returns how many got them."""
    sym = Symbolizer({mod: str(path) for mod, path in modules.items()})
    if not sym.tool:
        raise UserError("llvm-symbolizer not found: install llvm-19 (Debian package llvm-19)")
    todo = [
        s
        for s in placement.get("sites", [])
        if not s.get("frames") and not str(s.get("stack", "")).startswith("[")
    ]
    sym.resolve([f for s in todo for f in str(s.get("stack", "")).split(";")])
    done = 0
    for s in todo:
        frames = sym.frames(str(s.get("stack", "")))
        if any(fr["line"] for fr in frames):
            s["frames"] = frames
            done += 1
    return done


def run(args: argparse.Namespace) -> int:
    tool = paths.artifact("bin/tierwise-rewrite")
    files = list(args.files)
    extra = []
    if "--" in files:
        k = files.index("--")
        files, extra = files[:k], files[k:]
    if not files:
        raise UserError("no FILES given: tierwise rewrite --placement P -p BUILD_DIR FILES...")
    try:
        placement = placement_format.load(args.placement)
    except ValueError as e:
        raise UserError(str(e)) from None
    need = [
        s
        for s in placement.get("sites", [])
        if not s.get("frames") and not str(s.get("stack", "")).startswith("[")
    ]
    placement_path = args.placement
    tmp = None
    if need:
        modules, missing = find_modules(placement, args.binary)
        # A hand-written placement (modules[] does not name the module) whose
        # sites all have a location can do without: one frame per site.
        recorded = {m.get("module") for m in placement.get("modules", [])}
        unlocated = {
            f.split("+", 1)[0]
            for s in need
            if not s.get("location")
            for f in str(s.get("stack", "")).split(";")
        }
        fatal = [why for mod, why in missing if mod in recorded or mod in unlocated]
        if fatal:
            raise UserError(
                f"{args.placement}: cannot symbolize its stacks: {fatal[0]}"
                + (f" (and {len(fatal) - 1} more)" if len(fatal) > 1 else "")
                + "; give --binary PATH (the profiled program or a directory with it)"
            )
        for mod, why in missing:
            print(
                f"tierwise rewrite: note: {why}, and the placement's modules[] does not "
                f"name it: its sites are found by their `location` (--binary adds "
                f"inline frames and columns)",
                file=sys.stderr,
            )
        n = symbolize(placement, modules) if modules else 0
        if modules and not n:
            raise UserError(
                f"{args.placement}: no line information for its stacks in "
                + ", ".join(str(p) for p in modules.values())
                + ": rebuild with -g (the same build otherwise) and profile again"
            )
        print(
            f"tierwise rewrite: symbolized {n} of {len(need)} sites without frames "
            f"({', '.join(str(p) for p in modules.values())})",
            file=sys.stderr,
        )
        if n:
            tmp = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
            tmp.close()
            placement_format.write(placement, tmp.name)
            placement_path = tmp.name
    cmd = [str(tool), "--placement", placement_path]
    build_path = args.build_path
    dbdir = None
    if build_path and not extra:
        # Sources compiled more than once: the configuration in the binary.
        binaries = list(find_modules(placement, args.binary)[0].values())
        dbdir = tempfile.TemporaryDirectory(prefix="tierwise-rewrite-")
        build_path, notes = compiledb.filtered_database(build_path, files, binaries, dbdir.name)
        for note in notes:
            print(f"tierwise rewrite: note: {note}", file=sys.stderr)
    if build_path:
        cmd += ["-p", build_path]
    if args.in_place:
        cmd.append("-i")
    if args.patch:
        cmd += ["-o", args.patch]
    try:
        return subprocess.run(cmd + files + extra).returncode
    finally:
        if tmp:
            os.unlink(tmp.name)
        if dbdir:
            dbdir.cleanup()
