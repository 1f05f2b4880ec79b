# SPDX-License-Identifier: MIT
"""`tierwise simulate`: the modelled time of a placement as it is actually
applied by the runtime (fallbacks included), with per-tier loads, misses and
writebacks. See tierwise/simulation.py for where the per-tier counts come
from."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from tierwise import tiers
from tierwise.cli import UserError, VERBS
from tierwise.formats import placement as placement_format
from tierwise.backends.sim import LLC_SIZE
from tierwise.pipeline import simulate


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "simulate",
        help=VERBS["simulate"],
        description="Run CMD with the runtime applying the placement and report "
        "per-tier loads, LLC misses, writebacks and the modelled time of the "
        "placement actually applied (fallbacks included). Counts come from the sim "
        "backend: a placed sim profile when the tool records tiers, else the "
        "unplaced sim profile split by the bytes per tier of the run report.",
    )
    p.add_argument("--placement", required=True, metavar="FILE", help="placement.json")
    p.add_argument(
        "--tiers",
        metavar="PRESET|FILE",
        help=f"tier model: a preset, {tiers.NAMED_SLOW}, {tiers.AUTO} or a TOML file "
        f"(default: the placement's tier_model, else {tiers.DEFAULT_PRESET})",
    )
    p.add_argument("--profile", metavar="DIR", help="reuse this unplaced sim profile of CMD")
    p.add_argument("-o", "--output", metavar="DIR", help="work directory (default simulate.<pid>)")
    p.add_argument("--json", metavar="FILE", help="also write the result as JSON")
    p.add_argument(
        "--llc-size",
        type=LLC_SIZE,
        metavar="SIZE",
        help="simulated LLC (default: the geometry of the placement's profile)",
    )
    p.add_argument(
        "--pmem-dir",
        metavar="DIR",
        help="directory for the pmem file kind (default DIR/pmem in the work directory)",
    )
    p.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- CMD ARGS...")
    return p


def run(args: argparse.Namespace) -> int:
    cmd = list(args.cmd)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        raise UserError("no command given: tierwise simulate --placement P -- CMD ARGS...")
    pl = Path(args.placement)
    if not pl.exists():
        raise UserError(f"--placement {pl}: no such file")
    spec = args.tiers or placement_format.load(pl).get("tier_model")
    model = tiers.load(spec)
    work = Path(args.output or f"simulate.{os.getpid()}")
    res = simulate(pl, model, cmd, work, args.profile, args.llc_size, args.pmem_dir)
    print(f"counts from: {res.source}")
    from tierwise.formats.report import others_line

    others = others_line(res.named_report, [Path(q) for q in res.other_processes])
    if others:
        print(f"{cmd[0]} only: {others}")
    print(
        f"{'tier':<8} {'loads':>14} {'stores':>14} {'llc misses':>12} {'writebacks':>12} {'seconds':>10}"
    )
    for t, c in res.per_tier.items():
        print(
            f"{t:<8} {c['loads']:>14,} {c['stores']:>14,} "
            f"{c['llc_load_misses'] + c['llc_store_misses']:>12,} {c['writebacks']:>12,} "
            f"{c['seconds']:>10.4g}"
        )
    print(
        f"modelled time {res.seconds:.4g} s (compute baseline {res.baseline:.4g} s) = "
        f"{res.ratio_to_dram:.3f}x all-{model.fast.name}"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(res.to_json(), indent=1) + "\n")
    return 0
