# SPDX-License-Identifier: MIT
"""Baselines (first-fit, static ratio), the oracle against the cost policy,
and the comparison table."""

import numpy as np
import pytest

from advisor_profiles import site_row, write_profile
from tierwise import baselines, comparison, cost, reader, select, tiers


def test_first_fit_follows_allocation_order(tmp_path):
    # DRAM until full: a (60) in, b (60) gets the 40 left and spills 20, a freed
    # gives 60 back, c (60) takes it, d finds DRAM full
    rows = [
        site_row(0, "x+0xa", 60, 10, 0, 10),
        site_row(1, "x+0xb", 60, 10, 0, 10),
        site_row(2, "x+0xc", 60, 10, 0, 10),
        site_row(3, "x+0xd", 20, 1, 0, 1),
    ]
    objs = [(0, 60, 1, 5), (1, 60, 2, None), (2, 60, 6, None), (3, 20, 7, 8), (3, 20, 9, None)]
    p = reader.read_profile(write_profile(tmp_path / "p", rows, objs))
    c = cost.site_costs(p.sites, tiers.load(None))
    frac, peak = baselines.first_fit(p, c, 100)
    assert frac == pytest.approx({0: 1.0, 1: 40 / 60, 2: 1.0, 3: 0.0}) and peak == 100
    frac, peak = baselines.first_fit(p, c, 70)
    assert frac == pytest.approx({0: 1.0, 1: 10 / 60, 2: 1.0, 3: 0.0}) and peak == 70
    assert baselines.first_fit(p, c, 200)[0] == pytest.approx({0: 1.0, 1: 1.0, 2: 1.0, 3: 1.0})


def test_static_ratio():
    c = cost.site_costs(
        reader.pd.DataFrame({"stack": ["a", "[stack]"], "peak_bytes": [10, None]}), tiers.load(None)
    )
    assert baselines.static_ratio(c, 0.2) == {0: 0.2}


@pytest.mark.parametrize("seed", range(12))
def test_oracle_equals_cost_policy(tmp_path, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 9))
    rows, objs = [], []
    for i in range(n):
        size = int(rng.integers(1, 50)) * 4096
        rows.append(
            site_row(
                i,
                f"x+0x{i + 1:x}",
                size,
                int(rng.integers(0, 10**6)),
                int(rng.integers(0, 10**6)),
                int(rng.integers(0, 10**5)),
                int(rng.integers(0, 10**4)),
                int(rng.integers(0, 10**5)),
            )
        )
        a = int(rng.integers(0, 100))
        objs.append((i, size, a, a + int(rng.integers(1, 60)) if rng.random() < 0.6 else None))
    p = reader.read_profile(write_profile(tmp_path / "p", rows, objs))
    m = tiers.load(None)
    c = cost.site_costs(p.sites, m)
    budget = int(c["bytes"].sum() * rng.uniform(0.05, 0.6))
    best, used = baselines.oracle(p, c, budget)
    sel = select.select(p, c, budget, "cost", partial=False)
    t = lambda s: cost.placement_seconds(p.sites, c, m, s)
    assert t(sel.fast) == pytest.approx(t(best), rel=1e-12)
    assert used <= budget and sel.used_bytes <= budget
    # with heads (any site of more than a page may get one): the same
    # search space, never slower than whole sites
    split_best, split_used = baselines.oracle(p, c, budget, partial=True)
    split = select.select(p, c, budget, "cost")
    assert t(split.fractions(c)) == pytest.approx(t(split_best), rel=1e-12)
    assert t(split.fractions(c)) <= t(best) * (1 + 1e-12)
    assert split_used <= budget and split.used_bytes <= budget


def test_compare_table(tmp_path):
    rows = [site_row(0, "x+0xa", 1000, 10, 0, 1000), site_row(1, "x+0xb", 100, 10, 10, 100, 50, 90)]
    p = reader.read_profile(write_profile(tmp_path / "p", rows))
    df, notes = comparison.compare_table(p, tiers.load(None), [0.1, 0.5], with_oracle=True)
    assert list(df.columns[:4]) == ["policy", "budget_fraction", "budget_bytes", "fast_bytes"]
    assert {"modelled_seconds", "ratio_to_dram"} <= set(df.columns)
    r = df.set_index(["policy", "budget_fraction"])["ratio_to_dram"]
    assert r[("all-dram", 1.0)] == 1.0 and r[("all-pmem", 0.0)] > 1.0
    assert r[("cost", 0.1)] == pytest.approx(r[("oracle", 0.1)])  # site 1 fits at 10%
    assert r[("cost", 0.1)] < r[("static-ratio", 0.1)]
    assert r[("size", 0.5)] == pytest.approx(r[("cost", 0.1)])  # only site 1 fits
