# SPDX-License-Identifier: MIT
"""`tierwise report`: tables and plots of a profile - per site size, LLC
misses per KiB, write share, modelled benefit of DRAM - and how much of the
accesses the placeable sites cover."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pandas as pd

from tierwise.cli import VERBS
from tierwise.sizes import count_option
from tierwise import tiers


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "report",
        help=VERBS["report"],
        description="Summarise a profile: per allocation site its peak size, LLC "
        "misses per KiB, the share of them that continue a sweep (seq: what a "
        "prefetcher covers; '-' where not counted), the memory-level parallelism its "
        "misses are charged with (mlp: measured by the sim backend's interval model, "
        "else the tier model's constant; '-' without misses), write share and modelled benefit "
        "of the fast tier; with -o, "
        "write report.csv (the table) and sites.png (misses/KiB against write "
        "share, and the largest sites) into DIR.",
    )
    p.add_argument("profiles", nargs="+", metavar="PROFILE", help="profile directory")
    p.add_argument("-o", "--output", metavar="DIR", help="write report.csv and sites.png here")
    p.add_argument(
        "--tiers",
        metavar="PRESET|FILE",
        help=f"tier model: a preset, {tiers.NAMED_SLOW}, {tiers.AUTO} or a TOML file "
        f"(default {tiers.DEFAULT_PRESET})",
    )
    p.add_argument("--top", type=count_option(0), default=20, metavar="N", help="table rows (default 20)")
    return p


def run(args: argparse.Namespace) -> int:
    from tierwise import pipeline
    from tierwise.advice import format_size, location_column
    from tierwise.plot import plot_sites

    rep = pipeline.report(args.profiles, args.tiers)
    profile, model, table = rep.profile, rep.model, rep.table
    meta = profile.meta[0]
    total = table["bytes"].sum()
    print(
        f"profile {', '.join(map(str, profile.paths))}: {' '.join(meta.get('command', []))} "
        f"[{meta.get('backend', '?')} backend{', estimated counts' if meta.get('estimated') else ''}]"
    )
    allm = sum(rep.coverage.values()) or 1
    print(
        f"{len(table)} heap sites, {format_size(total)} in their peaks, "
        f"{format_size(rep.footprint)} peak live footprint; LLC misses: "
        + ", ".join(f"{k} {v / allm:.1%}" for k, v in rep.coverage.items())
    )
    print(
        "sites by modelled benefit of DRAM (then size)"
        if rep.measured
        else "sites by peak bytes (an allocation census: no access counts to model benefit from)"
    )
    rows = table.head(args.top)
    w, locs = location_column(rows["location"])
    print(
        f"{'site':>4}  {'location':<{w}} {'size':>10} {'miss/KiB':>9} {'seq':>5} {'mlp':>5} "
        f"{'writes':>6} "
        f"{'benefit':>10}  regime"
    )
    for loc, (_, r) in zip(locs, rows.iterrows()):
        seq = "-" if pd.isna(r["sequential_share"]) else f"{r['sequential_share']:.0%}"
        mlp = "-" if pd.isna(r["mlp"]) else "inf" if r["mlp"] > 1e4 else f"{r['mlp']:.1f}"
        print(
            f"{r['site']:>4}  {loc:<{w}} {format_size(r['bytes']):>10} {r['misses_per_kib']:>9.1f} "
            f"{seq:>5} {mlp:>5} {r['write_share']:>6.0%} {r['benefit_s'] * 1e3:>8.3f}ms  {r['regime']}"
        )
    if args.output:
        out = Path(args.output)
        out.mkdir(parents=True, exist_ok=True)
        table.drop(columns=["tier"]).to_csv(out / "report.csv", index=False, float_format="%.6g")
        plot_sites(table, out / "sites.png", f"{', '.join(map(str, profile.paths))} ({model.name})")
        print(f"wrote {out / 'report.csv'} and {out / 'sites.png'}")
    return 0
