# SPDX-License-Identifier: MIT
"""compare.csv of `tierwise compare` (advisor/FORMATS.md "compare.csv"):
one row per policy and DRAM budget with its modelled time; its columns,
writer and reader."""

import os
from typing import List

import pandas as pd

# The columns of every row, in this order.
COLUMNS: List[str] = [
    "policy",
    "budget_fraction",
    "budget_bytes",
    "fast_bytes",
    "modelled_seconds",
    "ratio_to_dram",
    "source",
]
# The columns of a simulated row (source `simulated`, `compare --simulate`),
# empty in the others: its own all-DRAM time and the instructions its run
# and the profiled run executed.
SIMULATED_COLUMNS: List[str] = ["all_dram_seconds", "instructions", "profile_instructions"]
SOURCES = ("model", "simulated")


def validate(df: pd.DataFrame, source: str = "compare.csv") -> pd.DataFrame:
    """ValueError naming the column (and row, value) that breaks the schema."""
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(
            f"{source}: missing column '{missing[0]}' (expected columns: {','.join(COLUMNS)})"
        )
    unknown = [c for c in df.columns if c not in COLUMNS + SIMULATED_COLUMNS]
    if unknown:
        raise ValueError(f"{source}: unknown column '{unknown[0]}'")
    bad = ~df["source"].isin(SOURCES)
    if bad.any():
        i = int(bad.to_numpy().nonzero()[0][0])
        raise ValueError(
            f"{source}: column 'source' row {i + 2}: value '{df['source'].iloc[i]}' is not "
            f"{' or '.join(SOURCES)}"
        )
    for c in ("budget_fraction", "budget_bytes", "fast_bytes", "modelled_seconds"):
        num = pd.to_numeric(df[c], errors="coerce")
        bad = num.isna() | (num < 0)
        if bad.any():
            i = int(bad.to_numpy().nonzero()[0][0])
            raise ValueError(
                f"{source}: column '{c}' row {i + 2}: value '{df[c].iloc[i]}' is not a "
                "number >= 0"
            )
    return df


def write(df: pd.DataFrame, path: "os.PathLike[str] | str") -> None:
    """Validate the rows and write them (6 significant digits)."""
    validate(df, str(path))
    df.to_csv(path, index=False, float_format="%.6g")


def read(path: "os.PathLike[str] | str") -> pd.DataFrame:
    """The rows of a compare.csv, validated."""
    try:
        df = pd.read_csv(path)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as e:
        raise ValueError(f"{path}: cannot read compare.csv ({str(e).splitlines()[0]})") from None
    return validate(df, str(path))
