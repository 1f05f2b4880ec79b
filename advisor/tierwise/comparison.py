# SPDX-License-Identifier: MIT
"""The budget sweep: modelled time of each advisor policy at several DRAM
budgets from one profile, for `tierwise compare` beside all-fast, all-slow,
first-fit, static ratio and (optionally) the oracle (the rows of
compare.csv: formats.compare), and for the curve of `tierwise advise --plot`."""

from typing import Optional, Sequence

import pandas as pd

from tierwise import baselines as _baselines
from tierwise import cost
from tierwise.formats.compare import COLUMNS
from tierwise.reader import Profile
from tierwise.select import POLICIES, peak_footprint, select, split_supported
from tierwise.tiers import TierModel

DEFAULT_FRACTIONS = [0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0]


def compare_table(
    profile: Profile,
    model: TierModel,
    fractions: Sequence[float] = DEFAULT_FRACTIONS,
    policies: Sequence[str] = POLICIES,
    with_oracle: bool = False,
    lifetime: bool = True,
    partial: bool = True,
    costs: Optional[pd.DataFrame] = None,
    baselines: bool = True,
) -> tuple[pd.DataFrame, list]:
    """The budget sweep: rows of compare.csv and notes. Each policy at each
    budget fraction, and with `baselines` all-fast, all-slow, first-fit,
    static ratio and (`with_oracle`) the oracle; without them the curve of
    `advise --plot`. With `partial` the cost policy may give sites DRAM
    heads (its rows count the heads' accesses as served by DRAM and their
    bytes in fast_bytes), and the oracle searches whole subsets beside one
    split site too, then adds heads as the cost policy does. `costs`:
    cost.site_costs of the profile, if known."""
    if costs is None:
        costs = cost.site_costs(profile.sites, model)
    total = peak_footprint(profile)
    placeable = costs.index[costs["placeable"]]
    secs = lambda fast: cost.placement_seconds(profile.sites, costs, model, fast)
    t_fast = secs(set(placeable))
    split = partial and split_supported(model)
    rows: list = []
    notes: list = []

    def row(policy, f, fast, used):
        t = secs(fast)
        rows.append(
            {
                "policy": policy,
                "budget_fraction": f,
                "budget_bytes": int(total * f),
                "fast_bytes": int(used),
                "modelled_seconds": t,
                "ratio_to_dram": t / t_fast if t_fast else float("nan"),
                "source": "model",
            }
        )

    if baselines:
        row(f"all-{model.fast.name}", 1.0, set(placeable), total)
        row(f"all-{model.slow.name}", 0.0, set(), 0)
    for f in fractions:
        budget = int(total * f)
        if baselines:
            ff, ff_used = _baselines.first_fit(profile, costs, budget)
            row("first-fit", f, ff, ff_used)
            row("static-ratio", f, _baselines.static_ratio(costs, f), budget)
        for pol in policies:
            sel = select(profile, costs, budget, pol, lifetime=lifetime, partial=split)
            row(pol, f, sel.fractions(costs), sel.used_bytes)
        if with_oracle and baselines:
            best, used = _baselines.oracle(profile, costs, budget, partial=split)
            if best is None:
                notes.append(used)
                with_oracle = False
                continue
            row("oracle", f, best, used)
    return pd.DataFrame(rows, columns=COLUMNS), notes


def summary(df: pd.DataFrame, fraction: float) -> str:
    """One line per policy at one budget: time and ratio to all-DRAM."""
    at = df[(df["budget_fraction"] - fraction).abs() < 1e-9]
    flat = df[df["policy"].str.startswith("all-")]
    lines = [f"at a {fraction:.0%} DRAM budget (modelled time, ratio to all-fast):"]
    for _, r in pd.concat([flat, at[~at["policy"].str.startswith("all-")]]).iterrows():
        # a simulated run's ratio is to its own all-DRAM time (its work may differ)
        sim = r.get("source") == "simulated"
        name = f"{r['policy']} (simulated)" if sim else r["policy"]
        own = f"  (own all-fast {r['all_dram_seconds']:.4g} s)" if sim and "all_dram_seconds" in r else ""
        lines.append(
            f"  {name:<16} {r['modelled_seconds']:>10.4g} s  {r['ratio_to_dram']:6.3f}x{own}"
        )
    return "\n".join(lines)
