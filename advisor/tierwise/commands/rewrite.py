# SPDX-License-Identifier: MIT
"""`tierwise rewrite`: apply a placement as a reviewable source patch.

A thin wrapper over build/bin/tierwise-rewrite (rewriter/README.md), through
pipeline.rewrite. What it adds: sites of the placement without a `frames` list get one by symbolizing
their `stack` (module+offset frames, inline frames expanded, with columns)
with llvm-symbolizer, so the tool can see through inlined wrappers and tell
two allocations on one line apart. Modules are looked up in --binary paths,
`modules[].path` of the placement, build/examples and the working directory;
a module whose build-id differs from the placement's is not used, and a user
module (not a system library) that is not found stops the rewrite with one
line saying why, before any site is reported."""

from __future__ import annotations

import argparse
from typing import Any

from tierwise.cli import VERBS
from tierwise import pipeline

def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "rewrite",
        help=VERBS["rewrite"],
        description="Rewrite the allocation expressions of the sites a "
        "placement puts outside the default tier into libtierwise calls "
        "(tw_malloc(TW_TIER_PMEM, n), new (tw::pmem) T[n]; a site with a DRAM "
        "head, dram_bytes N: tw_malloc_head(TW_TIER_PMEM, N, n), ..., new "
        "(tw::head_tag{TW_TIER_PMEM, N}) T[n]). A macro whose uses need different tiers is expanded at "
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
        "--root",
        metavar="DIR",
        help="name the patch's files relative to DIR (default: the git work tree "
        "of the first file, else the compile database's directory when it holds "
        "the files, else the deepest directory holding them; never the working "
        "directory); apply there with `git apply` or `patch -p1`",
    )
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


def run(args: argparse.Namespace) -> int:
    files = list(args.files)
    extra: list[str] = []
    if "--" in files:
        k = files.index("--")
        files, extra = files[:k], files[k:]
    res = pipeline.rewrite(
        args.placement,
        files,
        extra,
        build_path=args.build_path,
        binaries=args.binary,
        in_place=args.in_place,
        patch=args.patch,
        root=args.root,
    )
    return res.returncode
