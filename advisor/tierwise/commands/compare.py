# SPDX-License-Identifier: MIT
"""`tierwise compare`: profile a command once (sim backend) and compare
all-DRAM, all-slow-tier, first-fit, a memtier-style static ratio, every
advisor policy and optionally the oracle at several DRAM budgets; writes
DIR/compare.csv and DIR/compare.png."""

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd

from tierwise import reader, tiers
from tierwise.cli import UserError, add_whole_sites
from tierwise.formats import compare as compare_format


def add_parser(sub):
    p = sub.add_parser(
        "compare",
        help="compare placements (baselines and advisor policies) across DRAM budgets",
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
        "--tiers", metavar="PRESET|FILE", help=f"tier model (default {tiers.DEFAULT_PRESET})"
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


def parse_budgets(text):
    try:
        vals = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UserError(
            f"--budgets {text}: expected percentages separated by commas, e.g. 5,10,20"
        ) from None
    if not vals or any(not 0 <= v <= 100 for v in vals):
        raise UserError(f"--budgets {text}: each budget must be between 0 and 100 (percent)")
    return [v / 100 for v in vals]


def profile_options(args) -> list:
    """The sim backend options given to compare, as `tierwise profile`
    arguments (those left at their default are left out)."""
    out = []
    for a in getattr(args, "profile_options", []):
        value = getattr(args, a.dest, a.default)
        if value == a.default or value is None:
            continue
        out += [a.option_strings[0]] if a.nargs == 0 else [a.option_strings[0], str(value)]
    return out


def profile_command(cmd, outdir: Path, options=()) -> Path:
    """Run `tierwise profile --backend sim [options]` on CMD; return the
    profile dir."""
    pdir = outdir / "profile"
    print(f"tierwise compare: profiling {' '.join(cmd)} (sim backend) -> {pdir}", file=sys.stderr)
    r = subprocess.run(
        [sys.executable, "-m", "tierwise", "profile", "--backend", "sim", "-o", str(pdir)]
        + list(options)
        + ["--"]
        + list(cmd)
    )
    if r.returncode != 0:
        raise UserError(
            f"profiling {cmd[0]} failed with exit status {r.returncode}; " f"see the messages above"
        )
    return pdir


def work_instructions(profile_dir) -> int:
    """Instructions the profiled run executed in the part its counts
    describe (the region of interest, else the whole run); 0 if unknown."""
    try:
        params = json.loads((Path(profile_dir) / "meta.json").read_text())["backend_params"]
    except (OSError, ValueError, KeyError, TypeError):
        return 0
    roi = params.get("roi") or {}
    n = roi.get("instructions") if roi.get("mode") not in (None, "all") else None
    return int(n if n is not None else params.get("instructions") or 0)


def simulated_rows(
    profile, model, fractions, cmd, out: Path, df, lifetime=True, partial=True
) -> pd.DataFrame:
    """The cost policy's placement at each budget, simulated for real
    (`tierwise simulate`): rows with source 'simulated'. Each run's ratio is
    to its own all-DRAM time (its counts with every site in the fast tier),
    so runs of unequal work (an asynchronous kernel converging in a
    different number of sweeps) are compared with like; a run whose work
    differs from the profile's by more than 1% is warned about."""
    from tierwise.advice import advise
    from tierwise.commands.simulate import simulate

    prof_insns = work_instructions(profile.paths[0])
    rows = []
    for f in fractions:
        placement, _, sel, _ = advise(
            profile, model, f"{f * 100:g}%", "cost", lifetime=lifetime, partial=partial
        )
        pl = out / "placements" / f"cost-{f * 100:g}.json"
        pl.parent.mkdir(parents=True, exist_ok=True)
        pl.write_text(json.dumps(placement, indent=1) + "\n")
        print(f"tierwise compare: simulating the cost placement at {f:.0%}", file=sys.stderr)
        res = simulate(pl, model, cmd, out / "simulate" / f"cost-{f * 100:g}")
        insns = work_instructions(res["profile"])
        if prof_insns and insns and abs(insns / prof_insns - 1) > 0.01:
            print(
                f"tierwise compare: warning: the simulated run at {f:.0%} executed "
                f"{insns:,} instructions, the profile {prof_insns:,} ({insns / prof_insns - 1:+.1%}): "
                "the program's work differs between runs (e.g. an asynchronous kernel's "
                "iterations); its ratio is to its own all-"
                f"{model.fast.name} time, not the profile's",
                file=sys.stderr,
            )
        rows.append(
            {
                "policy": "cost",
                "budget_fraction": f,
                "budget_bytes": sel.budget,
                "fast_bytes": sel.used_bytes,
                "modelled_seconds": res["seconds"],
                "ratio_to_dram": res["ratio_to_dram"],
                "source": "simulated",
                "all_dram_seconds": res["all_fast_seconds"],
                "instructions": insns,
                "profile_instructions": prof_insns,
            }
        )
    return pd.DataFrame(rows)


def run(args):
    from tierwise.comparison import compare_table, summary
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
    if args.profile and profile_options(args):
        raise UserError(
            f"{' '.join(profile_options(args))}: profiling options, but --profile reuses a "
            "profile; drop one"
        )
    paths = args.profile or [profile_command(cmd, out, profile_options(args))]
    profile = reader.read_profiles(paths)
    from tierwise.advice import llc_warning

    warn = llc_warning(profile)
    if warn:
        print(f"tierwise compare: warning: {warn}", file=sys.stderr)
    lifetime, partial = not args.no_lifetime, not args.whole_sites
    df, notes = compare_table(
        profile, model, fractions, with_oracle=args.oracle, lifetime=lifetime, partial=partial
    )
    if args.simulate:
        if not cmd:
            raise UserError("--simulate needs the command: tierwise compare ... -- CMD ARGS...")
        df = pd.concat(
            [df, simulated_rows(profile, model, fractions, cmd, out, df, lifetime, partial)],
            ignore_index=True,
        )
    compare_format.write(df, out / "compare.csv")
    what = " ".join(cmd) if cmd else ", ".join(map(str, paths))
    plot_curve(df, out / "compare.png", f"{what} ({model.name})")
    mid = min(fractions, key=lambda f: abs(f - 0.2))
    print(summary(df, mid))
    for n in notes:
        print(f"note: {n}")
    print(f"wrote {out / 'compare.csv'} and {out / 'compare.png'}")
    return 0
