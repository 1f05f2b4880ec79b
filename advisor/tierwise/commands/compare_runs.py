# SPDX-License-Identifier: MIT
"""`tierwise compare-runs A.json B.json`: per site, the bytes per tier of two
run reports side by side - `tierwise run`'s report of the original program
and the report of the program rebuilt from `tierwise rewrite`'s patch (its
tierwise.h calls, `unmatched` with "api": true), matched by symbolized
location (tierwise/compare_runs.py). Exit status 0 when every location
either run placed outside DRAM has the same bytes per tier in both, 1 when
one differs, 2 on bad input."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from tierwise.cli import VERBS, UserError


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "compare-runs",
        help=VERBS["compare-runs"],
        description="Compare two run reports site by site: each allocation stack of "
        "either (A's `sites`, and both reports' `unmatched` entries, such as a "
        "rebuilt program's tierwise.h calls) is symbolized and keyed by its first "
        "user frames (function, file, line; inline frames expanded), so the "
        "rewritten program's calls meet the original's sites. With --patch, B's "
        "lines are mapped back through the rewrite's patch. Prints one row per "
        "location, placed ones first; exit status 1 when a location either run "
        "placed outside DRAM differs.",
    )
    p.add_argument("a", metavar="A.json", help="run report of the original (tierwise run --report)")
    p.add_argument("b", metavar="B.json", help="run report of the rebuilt program (TIERWISE_REPORT)")
    p.add_argument(
        "--binary-a",
        action="append",
        default=[],
        metavar="PATH",
        help="a module of A's program (or a directory of them); repeatable "
        "(default: the program of A's `command`)",
    )
    p.add_argument(
        "--binary-b",
        action="append",
        default=[],
        metavar="PATH",
        help="the same for B (default: the program of B's `command`)",
    )
    p.add_argument(
        "--patch",
        metavar="PATCH",
        help="the patch B was rebuilt from: B's lines are mapped back to A's",
    )
    p.add_argument(
        "--depth",
        type=int,
        default=3,
        metavar="N",
        help="user frames per key: the allocation's and its callers' (default 3)",
    )
    p.add_argument("--all", action="store_true", help="also list locations only in DRAM")
    return p


def run(args: argparse.Namespace) -> int:
    from tierwise import compare_runs
    from tierwise.formats import report as report_format
    from tierwise.symbolize import Symbolizer

    if args.depth < 1:
        raise UserError(f"--depth {args.depth}: give at least 1 frame")
    reports, syms = [], []
    for path, binaries, flag in ((args.a, args.binary_a, "--binary-a"), (args.b, args.binary_b, "--binary-b")):
        rep = report_format.read(path)
        modules = compare_runs.modules_for(rep, binaries)
        if not modules:
            raise UserError(
                f"{path}: no program to symbolize its stacks with (its command names "
                f"none that exists here): give {flag} PATH"
            )
        sym = Symbolizer(modules)
        if not sym.tool:
            raise UserError("llvm-symbolizer not found: install llvm-19 (Debian package llvm-19)")
        reports.append(rep)
        syms.append(sym)
    lines = None
    if args.patch:
        try:
            lines = compare_runs.patch_line_map(Path(args.patch).read_text())
        except OSError as e:
            raise UserError(f"--patch {args.patch}: cannot read it ({e.strerror})") from None
    a = compare_runs.bytes_by_site(reports[0], syms[0], args.depth)
    b = compare_runs.bytes_by_site(reports[1], syms[1], args.depth, lines)
    rows = compare_runs.compare(a, b)
    shown = [r for r in rows if r.placed or args.all]
    tiers = sorted({t for r in shown for t in (*r.a, *r.b)}, key=lambda t: (t != "dram", t))

    def cells(d: dict) -> list:
        return [str(d.get(t, 0)) for t in tiers]

    head = ["location"] + [f"A {t}" for t in tiers] + [f"B {t}" for t in tiers] + [""]
    body = [[r.location()] + cells(r.a) + cells(r.b) + ["same" if r.same else "DIFFERS"] for r in shown]
    widths = [max(len(row[i]) for row in [head] + body) for i in range(len(head))]
    for row in [head] + body:
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip())
    placed = [r for r in rows if r.placed]
    differ = [r for r in placed if not r.same]
    print(
        f"{len(placed) - len(differ)} of {len(placed)} placed locations have the same bytes per "
        f"tier in both runs" + (f"; {len(differ)} differ" if differ else "")
    )
    return 1 if differ else 0
