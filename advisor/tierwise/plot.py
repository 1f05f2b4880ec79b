# SPDX-License-Identifier: MIT
"""Modelled time against DRAM budget for each policy, and the plots of it
(matplotlib, Agg backend: PNG files, no display needed)."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from tierwise import cost  # noqa: E402
from tierwise.select import POLICIES, select, split_supported  # noqa: E402

DEFAULT_FRACTIONS = [0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0]


def budget_curve(
    profile,
    costs,
    model,
    fractions=DEFAULT_FRACTIONS,
    policies=POLICIES,
    lifetime=True,
    partial=True,
) -> pd.DataFrame:
    """Rows: policy, budget_fraction, budget_bytes, modelled_seconds,
    ratio_to_dram (to the all-fast-tier placement), fast_bytes. `partial`:
    the cost policy may give one large site a DRAM head (select.split_fill)."""
    from tierwise.select import peak_footprint

    total = peak_footprint(profile)
    placeable = set(costs.index[costs["placeable"]])
    t_fast = cost.placement_seconds(profile.sites, costs, model, placeable)
    split = partial and split_supported(model)
    rows = []
    for pol in policies:
        for f in fractions:
            sel = select(profile, costs, int(total * f), pol, lifetime=lifetime, partial=split)
            t = cost.placement_seconds(profile.sites, costs, model, sel.fractions(costs))
            rows.append(
                {
                    "policy": pol,
                    "budget_fraction": f,
                    "budget_bytes": int(total * f),
                    "modelled_seconds": t,
                    "ratio_to_dram": t / t_fast if t_fast else float("nan"),
                    "fast_bytes": sel.used_bytes,
                }
            )
    return pd.DataFrame(rows)


def plot_curve(df: pd.DataFrame, path, title: str, ylabel="modelled time (s)"):
    """One line per policy: modelled_seconds against budget_fraction; the
    all-fast / all-slow baselines (policy 'all-*') are horizontal lines."""
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for pol, d in df.groupby("policy", sort=False):
        d = d.sort_values("budget_fraction")
        if pol.startswith("all-"):
            ax.axhline(
                d["modelled_seconds"].iloc[0],
                linestyle="--",
                linewidth=1,
                label=pol,
                color="black" if d["budget_fraction"].iloc[0] == 1 else "grey",
            )
        else:
            ax.plot(d["budget_fraction"] * 100, d["modelled_seconds"], marker="o", label=pol)
    ax.set_xlabel("DRAM budget (% of peak live footprint)")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_sites(table: pd.DataFrame, path, title: str):
    """Per site: misses/KiB against write share, marker area by size."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4.2))
    size = table["bytes"].astype("float64")
    area = 20 + 400 * size / max(size.max(), 1)
    a.scatter(table["write_share"] * 100, table["misses_per_kib"], s=area, alpha=0.6)
    for _, r in table.head(12).iterrows():
        a.annotate(str(r["site"]), (r["write_share"] * 100, r["misses_per_kib"]), fontsize=7)
    a.set_xlabel("write share (% of accesses that are stores)")
    a.set_ylabel("LLC misses per KiB")
    a.set_yscale("symlog")
    a.set_title("sites (area ~ peak bytes)", fontsize=10)
    top = table.sort_values("bytes", ascending=False).head(15)
    b.barh([str(s) for s in top["site"]], top["bytes"] / 2**20)
    b.invert_yaxis()
    b.set_xlabel("peak MiB")
    b.set_ylabel("site")
    b.set_title("largest sites", fontsize=10)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
