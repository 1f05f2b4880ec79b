# SPDX-License-Identifier: MIT
"""The plots of modelled time against DRAM budget (comparison.compare_table's
rows) and of the site table (matplotlib, Agg backend: PNG files, no display
needed)."""

from __future__ import annotations

import os
from typing import Union

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

PathLike = Union[str, "os.PathLike[str]"]


def plot_curve(
    df: pd.DataFrame, path: PathLike, title: str, ylabel: str = "modelled time (s)"
) -> PathLike:
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


def plot_sites(table: pd.DataFrame, path: PathLike, title: str) -> PathLike:
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
