# SPDX-License-Identifier: MIT
"""`tierwise compare`: profile a command once (sim backend) and compare
all-DRAM, all-slow-tier, first-fit, a memtier-style static ratio, every
advisor policy and optionally the oracle at several DRAM budgets; writes
DIR/compare.csv and DIR/compare.png."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from tierwise import pipeline, tiers
from tierwise.cli import UserError, VERBS, add_whole_sites
from tierwise.formats import compare as compare_format


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "compare",
        help=VERBS["compare"],
        description="Profile CMD with the sim backend (or reuse --profile DIR) and "
        "model every placement strategy at several DRAM budgets: all-DRAM, "
        "all-slow-tier, first-fit, static ratio (memkind memtier), the advisor "
        "policies and, with --oracle, the best subset of sites. Writes "
        "DIR/compare.csv and DIR/compare.png.",
    )
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="output directory")
    p.add_argument(
        "--budgets",
        default="5,10,20,30,50",
        metavar="P,P,...",
        help="DRAM budgets in %% of the peak live footprint (default 5,10,20,30,50)",
    )
    p.add_argument(
        "--tiers",
        metavar="PRESET|FILE",
        help=f"tier model: a preset, {tiers.NAMED_SLOW}, {tiers.AUTO} or a TOML file "
        f"(default {tiers.DEFAULT_PRESET})",
    )
    p.add_argument(
        "--oracle",
        action="store_true",
        help=f"also try every subset of sites (at most {20} sites with a benefit)",
    )
    p.add_argument(
        "--profile",
        metavar="DIR",
        action="append",
        help="use this existing profile instead of profiling CMD (repeatable)",
    )
    p.add_argument(
        "--simulate",
        action="store_true",
        help="also simulate the cost policy's placement at each budget with the runtime "
        "applying it (rows with source 'simulated')",
    )
    p.add_argument(
        "--no-lifetime", action="store_true", help="cost policy: pack by peak bytes only"
    )
    add_whole_sites(p)
    from tierwise.backends import sim

    group = p.add_argument_group(
        "profiling CMD (tierwise profile --backend sim's options; simulated runs use the "
        "profile's region and cache)"
    )
    sim.add_arguments(group)
    p.set_defaults(profile_options=list(group._group_actions))
    p.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- CMD ARGS...")
    return p


def parse_budgets(text: str) -> list[float]:
    try:
        vals = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UserError(
            f"--budgets {text}: expected percentages separated by commas, e.g. 5,10,20"
        ) from None
    if not vals or any(not 0 <= v <= 100 for v in vals):
        raise UserError(f"--budgets {text}: each budget must be between 0 and 100 (percent)")
    return [v / 100 for v in vals]


def profile_options(args: argparse.Namespace) -> list[str]:
    """The sim backend options given to compare, as `tierwise profile`
    arguments (those left at their default are left out)."""
    out = []
    for a in getattr(args, "profile_options", []):
        value = getattr(args, a.dest, a.default)
        if value == a.default or value is None:
            continue
        out += [a.option_strings[0]] if a.nargs == 0 else [a.option_strings[0], str(value)]
    return out


def run(args: argparse.Namespace) -> int:
    from tierwise.comparison import summary
    from tierwise.plot import plot_curve

    fractions = parse_budgets(args.budgets)
    cmd = list(args.cmd)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd and not args.profile:
        raise UserError(
            "no command given: tierwise compare -o DIR [options] -- CMD ARGS... "
            "(or --profile DIR)"
        )
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    model = tiers.load(args.tiers)
    res = pipeline.compare(
        out,
        fractions,
        model,
        cmd,
        args.profile or (),
        profile_options(args),
        oracle=args.oracle,
        simulate_cost=args.simulate,
        lifetime=not args.no_lifetime,
        partial=not args.whole_sites,
    )
    df = res.table
    compare_format.write(df, out / "compare.csv")
    what = " ".join(cmd) if cmd else ", ".join(map(str, res.profiles))
    plot_curve(df, out / "compare.png", f"{what} ({model.name})")
    mid = min(fractions, key=lambda f: abs(f - 0.2))
    print(summary(df, mid))
    for n in res.notes:
        print(f"note: {n}")
    print(f"wrote {out / 'compare.csv'} and {out / 'compare.png'}")
    return 0
