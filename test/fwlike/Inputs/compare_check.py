# SPDX-License-Identifier: MIT
"""compare.test: checks the simulated rows of a compare.csv: the run did more
work than the profile (instructions), its ratio_to_dram is its own modelled
seconds over its own all-DRAM seconds (within 1e-4: the csv has 6 digits), and lies between 1 and
the profile's modelled all-slow-tier ratio (what any placement of the same
work is bounded by, with 5% for the model's non-linearity).

usage: compare_check.py compare.csv
"""

import sys

import pandas as pd

df = pd.read_csv(sys.argv[1])
slow = float(df.loc[df["policy"] == "all-pmem", "ratio_to_dram"].iloc[0])
for _, r in df[df["source"] == "simulated"].iterrows():
    more = r["instructions"] > r["profile_instructions"]
    own = abs(r["ratio_to_dram"] / (r["modelled_seconds"] / r["all_dram_seconds"]) - 1) < 1e-4
    bounded = 1.0 <= r["ratio_to_dram"] <= slow * 1.05
    if not (more and own and bounded):
        sys.exit(f"bad simulated row: {r.to_dict()} (all-pmem {slow})")
    print(
        f"simulated {r['policy']} {r['budget_fraction']:.0%}: more work than the profile, "
        "ratio = own seconds / own all-dram seconds, 1 <= ratio <= all-pmem ratio"
    )
