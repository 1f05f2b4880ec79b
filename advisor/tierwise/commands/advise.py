# SPDX-License-Identifier: MIT
"""`tierwise advise`: read profiles, model each site's cost on each tier,
choose the DRAM set under a budget, write placement.json and print a table."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from tierwise import tiers
from tierwise.formats import placement as placement_format
from tierwise.cli import VERBS, add_whole_sites
from tierwise.select import POLICIES
from tierwise.sizes import count_option, share_option, size_option


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "advise",
        help=VERBS["advise"],
        description="Read one or more profile directories (merged by site), model "
        "each site's memory time on the fast and slow tier, choose the sites to "
        "keep in DRAM under --dram-budget and write placement.json.",
    )
    p.add_argument("profiles", nargs="+", metavar="PROFILE", help="profile directory")
    p.add_argument(
        "--dram-budget",
        required=True,
        type=share_option("--dram-budget"),
        metavar="SIZE|N%",
        help="fast-tier bytes (512M, 2G) or N%% of the peak live footprint (the most "
        "placeable bytes live at once; with --target, the target run's)",
    )
    t = p.add_argument_group(
        "profile small, run big",
        "Advise for a bigger run than the profiled ones: PROFILEs are counted profiles "
        "(sim or pmu) of small inputs, CENSUS an allocation census of the target run "
        "(`tierwise profile --backend alloc -o CENSUS -- CMD BIG-ARGS`, native speed). "
        "Sites are matched by stack; one PROFILE: each site's counts scaled by its bytes; "
        "two or more: a power law fitted per site. Heads become fractions of their "
        "objects, and every DRAM site carries its rank and planned bytes at the target "
        "(for `tierwise run --dram-limit`). Assumptions: advisor/README.md.",
    )
    t.add_argument(
        "--target",
        metavar="CENSUS",
        help="allocation census of the target run: its sizes, lifetimes and footprint",
    )
    t.add_argument(
        "--target-llc",
        type=size_option(1),
        metavar="SIZE",
        help="LLC of the machine that runs the target (default: the LLC the PROFILEs "
        "simulated); miss rates carry over when each PROFILE simulated this cache scaled "
        "by its footprint over the target's (advise says which --llc-size to use)",
    )
    p.add_argument(
        "--tiers",
        metavar="PRESET|FILE",
        help=f"tier model: {', '.join(tiers.presets())}, {tiers.NAMED_SLOW} (the "
        f"{tiers.NAMED_SLOW_BASE} preset's numbers with that slow tier), {tiers.AUTO} (this "
        "machine: NUMA distances and HMAT latencies/bandwidths, else the nearest preset) or "
        f"a TOML file (default {tiers.DEFAULT_PRESET}); cxl and numa-remote name this "
        "machine's memory-only / nearest other node",
    )
    p.add_argument(
        "--policy",
        choices=POLICIES,
        default="cost",
        help="cost: exact knapsack on modelled benefit (default); "
        "write-intensity, misses, size: greedy rankings",
    )
    p.add_argument(
        "--no-lifetime",
        action="store_true",
        help="cost policy: ignore the objects timeline (pack by peak bytes only)",
    )
    add_whole_sites(p)
    p.add_argument(
        "-o",
        "--output",
        default="placement.json",
        metavar="FILE",
        help="placement file to write (default placement.json)",
    )
    p.add_argument(
        "--plot",
        metavar="FILE.png",
        help="also plot modelled time against DRAM budget for every policy",
    )
    p.add_argument(
        "--mixed-programs",
        action="store_true",
        help="merge profiles of different programs into one placement (processes of one "
        "profiled job merge without it); stacks name their modules, so each program's "
        "sites stay its own",
    )
    p.add_argument("--top", type=count_option(0), default=30, metavar="N", help="table rows (default 30)")
    return p


def _advise(pipeline: Any, args: argparse.Namespace) -> Any:
    return pipeline.advise(
        args.profiles,
        args.dram_budget,
        args.tiers,
        args.policy,
        lifetime=not args.no_lifetime,
        partial=not args.whole_sites,
        target=args.target,
        target_llc=args.target_llc,
        mixed_programs=args.mixed_programs,
    )


def run(args: argparse.Namespace) -> int:
    from tierwise import pipeline
    from tierwise.advice import format_partial, format_size, format_table
    from tierwise.progress import Progress

    with Progress("tierwise advise") as progress:
        progress.doing("reading the profiles and choosing the DRAM sites")
        adv = _advise(pipeline, args)
    if adv.warning:
        print(f"tierwise advise: warning: {adv.warning}", file=sys.stderr)
    placement, table, sel, model = adv.placement, adv.table, adv.selection, adv.model
    if adv.transfer is not None:
        from tierwise.transfer import format_fits

        print(format_fits(adv.transfer, args.top))
    out = Path(args.output)
    placement_format.write(placement, out)
    ms = placement["modelled_seconds"]
    print(
        f"tier model {model.name}: {model.fast.name} (fast) / {model.slow.name} (slow); "
        f"policy {args.policy}; budget {format_size(sel.budget)} of "
        f"{format_size(placement['footprint_bytes'])} peak live footprint"
    )
    print(format_table(table, args.top))
    for line in format_partial(table, sel, model):
        print(line)
    summary = f"{model.fast.name}: {format_size(sel.used_bytes)} in {len(sel.fast)} sites"
    n = len(sel.partial)
    summary += f" and {n} head{'s' if n > 1 else ''}; " if n else "; "
    if ms["all_fast"] > 0:
        summary += (
            f"modelled time {ms['placement']:.4g} s = {ms['placement'] / ms['all_fast']:.3f}x all-"
            f"{model.fast.name}, all-{model.slow.name} {ms['all_slow'] / ms['all_fast']:.3f}x"
        )
    else:  # an allocation census has no access counts to model time from
        summary += "no modelled time: the profile has no access counts (alloc census?)"
    print(summary)
    for note in placement["notes"]:
        print(f"note: {note}")
    print(f"wrote {out}")
    if args.plot:
        from tierwise.plot import plot_curve

        df = pipeline.budget_curve(adv)
        plot_curve(df, args.plot, f"{', '.join(str(p) for p in adv.profile.paths)} ({model.name})")
        print(f"wrote {args.plot}")
    sys.stdout.flush()
    return 0
