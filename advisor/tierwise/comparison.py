# SPDX-License-Identifier: MIT
"""The comparison table of `tierwise compare`: all-fast, all-slow, first-fit,
static ratio, each advisor policy and (optionally) the oracle at several DRAM
budgets, all by modelled time from one profile (the rows of compare.csv:
formats.compare)."""

import pandas as pd

from tierwise import baselines, cost
from tierwise.formats.compare import COLUMNS
from tierwise.select import peak_footprint
from tierwise.select import POLICIES, select, split_supported

def compare_table(
    profile,
    model,
    fractions,
    policies=POLICIES,
    with_oracle=False,
    lifetime=True,
    partial=True,
):
    """Rows of compare.csv and notes. With `partial` the cost policy may
    give one large site a DRAM head (its rows count the head's accesses as
    served by DRAM and its bytes in fast_bytes), and the oracle searches
    whole subsets beside one split site too."""
    costs = cost.site_costs(profile.sites, model)
    total = peak_footprint(profile)
    placeable = costs.index[costs["placeable"]]
    secs = lambda fast: cost.placement_seconds(profile.sites, costs, model, fast)
    t_fast = secs(set(placeable))
    split = partial and split_supported(model)
    rows, notes = [], []

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

    row(f"all-{model.fast.name}", 1.0, set(placeable), total)
    row(f"all-{model.slow.name}", 0.0, set(), 0)
    for f in fractions:
        budget = int(total * f)
        ff, ff_used = baselines.first_fit(profile, costs, budget)
        row("first-fit", f, ff, ff_used)
        row("static-ratio", f, baselines.static_ratio(costs, f), budget)
        for pol in policies:
            sel = select(profile, costs, budget, pol, lifetime=lifetime, partial=split)
            row(pol, f, sel.fractions(costs), sel.used_bytes)
        if with_oracle:
            best, used = baselines.oracle(profile, costs, budget, partial=split)
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
