# SPDX-License-Identifier: MIT
"""tierwise.pipeline as a library: advise, report, compare and the budget
curve on written profiles, without the command line."""

import pytest

from advisor_profiles import site_row, write_profile
from tierwise import pipeline, select
from tierwise.cli import UserError
from tierwise.comparison import DEFAULT_FRACTIONS
from tierwise.formats import placement as placement_format

# site, stack, peak, loads, stores, load misses, store misses, writebacks
SITES = [
    (0, "x+0xa", 1 << 20, 10**6, 0, 10**5, 0, 0),  # 1 MiB, read misses
    (1, "x+0xb", 4 << 20, 10**6, 10**6, 2 * 10**5, 10**5, 10**5),  # 4 MiB, writes
    (2, "x+0xc", 8 << 20, 10**5, 0, 10**3, 0, 0),  # 8 MiB, cold
    (3, "[stack]", 0, 10**6, 10**6, 10, 10, 0),
]
ROWS = [site_row(*s) for s in SITES]


@pytest.fixture
def prof(tmp_path):
    return write_profile(tmp_path / "p", ROWS)


def test_advise_returns_a_valid_placement_and_the_selection(prof):
    adv = pipeline.advise([prof], "5M", policy="cost", partial=False)
    assert placement_format.validate(adv.placement) is not None
    assert adv.warning is None or isinstance(adv.warning, str)
    # the selection is select()'s for the same budget: the 4 MiB writer and
    # the 1 MiB reader fit 5 MiB, the cold 8 MiB site does not
    again = select.select(adv.profile, adv.costs, 5 << 20, "cost", partial=False)
    assert set(adv.selection.fast) == set(again.fast) == {0, 1}
    placed = {s["stack"]: s["tier"] for s in adv.placement["sites"]}
    assert placed.get("x+0xa") == placed.get("x+0xb") == "dram"
    assert placed.get("x+0xc", "pmem") != "dram"
    assert adv.placement["notes"][: len(adv.model.notes)] == list(adv.model.notes)


def test_target_llc_without_target_is_refused(prof):
    with pytest.raises(ValueError, match="--target-llc needs --target"):
        pipeline.advise([prof], "5M", target_llc="1M")


def test_budget_curve_is_the_compare_sweep_without_baselines(prof, tmp_path):
    """One budget sweep: advise --plot's curve and compare.csv's policy rows
    are the same rows of comparison.compare_table."""
    adv = pipeline.advise([prof], "20%")
    curve = pipeline.budget_curve(adv)
    assert not curve["policy"].str.startswith("all-").any()
    assert not curve["policy"].isin(["first-fit", "static-ratio", "oracle"]).any()
    assert sorted(set(curve["budget_fraction"])) == DEFAULT_FRACTIONS
    cmp = pipeline.compare(tmp_path / "out", DEFAULT_FRACTIONS, adv.model, profiles=[prof]).table
    key = ["policy", "budget_fraction"]
    policies = cmp[cmp["policy"].isin(curve["policy"].unique())]
    a = curve.sort_values(key).reset_index(drop=True)
    b = policies.sort_values(key).reset_index(drop=True)
    assert a[key + ["fast_bytes", "budget_bytes"]].equals(b[key + ["fast_bytes", "budget_bytes"]])
    assert a["modelled_seconds"].tolist() == pytest.approx(b["modelled_seconds"].tolist())
    # the all-fast row of compare is the curve's ratio 1 at a 100% budget
    cost_full = a[(a["policy"] == "cost") & (a["budget_fraction"] == 1.0)]
    assert cost_full["ratio_to_dram"].iloc[0] == pytest.approx(1.0)


def test_compare_refuses_profiling_options_with_profiles(prof, tmp_path):
    adv = pipeline.advise([prof], "20%")
    with pytest.raises(UserError, match="--llc-size 1M: profiling options"):
        pipeline.compare(
            tmp_path, [0.2], adv.model, profiles=[prof], profile_options=["--llc-size", "1M"]
        )


def test_report_coverage_splits_every_llc_miss(prof):
    rep = pipeline.report([prof])
    total = sum(s[5] + s[6] for s in SITES)
    assert sum(rep.coverage.values()) == total
    assert rep.coverage["[stack]"] == 20 and rep.coverage["heap"] == total - 20
    assert rep.measured and rep.footprint > 0
    assert set(rep.table["site"]) == {0, 1, 2}


def test_backend_options_are_the_backends_own(tmp_path):
    opts = pipeline.backend_options("sim", ["--llc-size", "256K", "--roi", "markers"])
    assert opts.llc_size == 256 << 10 and opts.roi == "markers" and opts.backend == "sim"
    assert pipeline.backend_options("sim").roi in (None, "all")
    with pytest.raises(UserError, match="--nope: not an option of the sim backend"):
        pipeline.backend_options("sim", ["--nope"])


def test_profile_refuses_an_empty_command_and_a_bad_depth(tmp_path):
    with pytest.raises(UserError, match="no command given"):
        pipeline.profile([], tmp_path / "p", "sim")
    with pytest.raises(UserError, match="--depth 0"):
        pipeline.profile(["true"], tmp_path / "p", "sim", depth=0)
