# SPDX-License-Identifier: MIT
"""Profile small, run big (tierwise/transfer.py, `advise --target`): counts
carried from small profiles to a target census, by bytes with one profile
and by a fitted power law with several; sites in only one input listed;
the budget of the target's footprint; ranks, planned bytes and heads as
fractions in the placement."""

import json

import pytest
from advisor_profiles import site_row, write_profile

from tierwise import cli, reader, transfer
from tierwise.formats import placement

CENSUS = {"backend": "alloc"}


def sim_meta(llc):
    return {"backend_params": {"cache": {"llc_size": llc}}}


def census_row(site, stack, peak, allocs=1):
    return f"{site},{stack},f{site} x.c:{site + 1},{allocs},{peak},{peak},,,,,"


@pytest.fixture
def runs(tmp_path):
    """Two small runs (x1 and x2 of a unit size) and a target census at x16:
    site a grows with the input and is swept (counts ~ bytes), site b grows
    and is accessed randomly (misses ~ bytes^1.5), site c is only in the
    small runs, site d only in the target."""
    small = []
    for k, n in ((1, 1 << 20), (2, 2 << 20)):
        rows = [
            site_row(0, "x+0xa", n, loads=n // 8, lm=n // 64),
            site_row(1, "x+0xb", n // 2, loads=n, lm=int(50000 * (n / 2**20) ** 1.5)),
            site_row(4, "x+0xe", n // 8, loads=n // 64, lm=n // 512),
            site_row(2, "x+0xc", 4096, loads=10),
            "3,[stack],[stack],,,,100,100,1,1,0",
        ]
        small.append(write_profile(tmp_path / f"s{k}", rows, meta=sim_meta(k << 18)))
    census = write_profile(
        tmp_path / "target",
        [
            census_row(0, "x+0xa", 16 << 20),
            census_row(1, "x+0xb", 8 << 20),
            census_row(2, "x+0xd", 1 << 20),
            census_row(3, "x+0xe", 2 << 20),
        ],
        objects=[(0, 16 << 20, 1, None), (1, 8 << 20, 2, None), (2, 1 << 20, 3, 4), (3, 2 << 20, 5, None)],
        meta=CENSUS,
    )
    return small, census


def by_stack(t, stack, col):
    s = t.profile.sites
    return int(s.loc[s["stack"] == stack, col].iloc[0])


def test_one_profile_scales_by_bytes(runs):
    small, census = runs
    t = transfer.read([small[1]], census)
    assert t.method == "scale-by-bytes"
    # site a: 2 MiB -> 16 MiB, x8; site b: 1 MiB -> 8 MiB, x8
    assert by_stack(t, "x+0xa", "loads") == (2 << 20) // 8 * 8
    assert by_stack(t, "x+0xb", "llc_load_misses") == int(50000 * 2**1.5) * 8
    assert "scaled by each site's bytes" in t.notes()[0]


def test_two_profiles_fit_growth(runs):
    small, census = runs
    t = transfer.read(small, census)
    assert t.method == "fit"
    # a: loads ~ bytes^1 -> 16 MiB / 8; b: misses ~ bytes^1.5 -> 50000 * 16^1.5
    assert by_stack(t, "x+0xa", "loads") == pytest.approx((16 << 20) // 8, rel=1e-9)
    assert by_stack(t, "x+0xb", "llc_load_misses") == pytest.approx(50000 * 16**1.5, rel=1e-4)
    b = t.profile.sites.index[t.profile.sites["stack"] == "x+0xb"][0]
    assert t.fits.at[b, "b_llc_load_misses"] == pytest.approx(1.5, abs=1e-4)
    assert t.fits.at[b, "b_loads"] == pytest.approx(1.0)
    # pseudo-sites scale with the run's footprint; they keep their counts' growth (none)
    assert by_stack(t, "[stack]", "loads") == 100
    notes = "\n".join(t.notes())
    assert "only in the small profiles, dropped: f2 x.c:3" in notes
    assert "only in the target census (1048576 bytes)" in notes
    # the target's footprint: a, b and e live at once (d freed before e)
    assert t.target_footprint == 26 << 20


def test_cache_that_does_not_scale_is_named(runs):
    small, census = runs
    # s1 simulated 256 KiB for 1.625 MiB; the target has 4 MiB for 26 MiB:
    # ratios 0.154 and 0.154; s2 512 KiB for 3.25 MiB (the same)
    t = transfer.read(small, census, target_llc=4 << 20)
    assert not t.cache_notes and not t.outgrows_llc
    # with the small runs' own 512 KiB at the target, both are off
    t = transfer.read(small, census)
    assert len(t.cache_notes) == 2
    assert "profile it with --llc-size 32K" in t.cache_notes[0]
    assert [loc for loc, *_ in t.outgrows_llc] == ["f3 x.c:4"]


def test_advise_target_writes_ranks_and_fractions(runs, tmp_path, capsys):
    small, census = runs
    out = tmp_path / "p.json"
    rc = cli.main(
        [
            "advise",
            *map(str, small),
            "--target",
            str(census),
            "--target-llc",
            "4M",
            "--dram-budget",
            "40%",
            "-o",
            str(out),
        ]
    )
    assert rc == 0
    text = capsys.readouterr().out
    assert "transfer to the target (26.0 MiB" in text
    assert "budget 10.4 MiB of 26.0 MiB" in text
    doc = placement.load(out)
    assert doc["target"]["method"] == "fit" and doc["target"]["footprint_bytes"] == 26 << 20
    ranked = sorted((s for s in doc["sites"] if "rank" in s), key=lambda s: s["rank"])
    assert [s["rank"] for s in ranked] == list(range(1, len(ranked) + 1))
    # b has more benefit per byte (random misses) than the swept a: rank 1, whole
    assert ranked[0]["stack"] == "x+0xb" and ranked[0]["planned_bytes"] == 8 << 20
    # a gets the rest as a head, stated as a fraction of its 16 MiB object
    a = next(s for s in doc["sites"] if s["stack"] == "x+0xa")
    assert a["tier"] == "pmem" and a["dram_fraction"] == a["dram_bytes"] / (16 << 20)
    assert a["planned_bytes"] == a["dram_bytes"] and a["rank"] == 2
    assert sum(s["planned_bytes"] for s in ranked) <= int(10.4 * 2**20)


def test_target_needs_counted_small_profiles(runs):
    small, census = runs
    with pytest.raises(ValueError, match="has no access counts"):
        transfer.read([census], census)
    assert cli.main(["advise", str(small[0]), "--target-llc", "1M", "--dram-budget", "1M"]) == 2


@pytest.mark.parametrize(
    "field,value,msg",
    [
        ("dram_fraction", 0, "must be a number in (0, 1]"),
        ("dram_fraction", 1.5, "must be a number in (0, 1]"),
        ("dram_fraction", "half", "must be a number in (0, 1]"),
        ("rank", 0, "must be a positive integer"),
        ("planned_bytes", -1, "must be an integer >= 0"),
        ("planned_live", [], "must be a list of 1 to 64"),
        ("planned_live", [1, "2"], "must be a list of 1 to 64"),
        ("planned_live", [4097], "must be a list of 1 to 64"),  # over planned_bytes
    ],
)
def test_placement_fields_validated(field, value, msg):
    doc = {
        "format": "tierwise-placement",
        "version": 1,
        "default_tier": "dram",
        "sites": [{"stack": "x+0x1", "tier": "pmem", "planned_bytes": 4096, field: value}],
    }
    with pytest.raises(ValueError, match=f"sites\\[0\\].{field} = .*{msg[:20]}"):
        placement.validate(doc)


def test_planned_live_is_as_long_on_every_site():
    doc = {
        "format": "tierwise-placement",
        "version": 1,
        "default_tier": "dram",
        "sites": [
            {"stack": "x+0x1", "tier": "dram", "rank": 1, "planned_bytes": 8, "planned_live": [8, 0]},
            {"stack": "x+0x2", "tier": "dram", "rank": 2, "planned_bytes": 8, "planned_live": [8]},
        ],
    }
    with pytest.raises(ValueError, match=r"sites\[1\].planned_live = '\(a list of 1\)'"):
        placement.validate(doc)
    doc["sites"][1]["planned_live"] = [0, 8]
    placement.validate(doc)


def test_advise_target_plans_dram_shared_over_time(runs, tmp_path):
    """Two sites of the target never live together share the same DRAM
    bytes in the plan: planned_live says so, per instant, and the largest
    instant total is what the plan uses (what the runtime reserves)."""
    small, _ = runs
    census = write_profile(
        tmp_path / "phases",
        [census_row(0, "x+0xa", 4 << 20), census_row(1, "x+0xb", 8 << 20), census_row(2, "x+0xe", 8 << 20)],
        objects=[(0, 4 << 20, 1, None), (1, 8 << 20, 2, 3), (2, 8 << 20, 4, 5)],
        meta=CENSUS,
    )
    out = tmp_path / "p.json"
    assert cli.main(["advise", *map(str, small), "--target", str(census), "--dram-budget", "12M",
                     "--whole-sites", "-o", str(out)]) == 0
    doc = placement.load(out)
    live = {s["stack"]: s["planned_live"] for s in doc["sites"] if "planned_live" in s}
    assert set(live) == {"x+0xa", "x+0xb", "x+0xe"}
    assert sorted(zip(live["x+0xa"], live["x+0xb"], live["x+0xe"])) == [
        (4 << 20, 0, 8 << 20),
        (4 << 20, 8 << 20, 0),
    ]
    assert sum(s["planned_bytes"] for s in doc["sites"] if "rank" in s) == 20 << 20  # over 12M


def test_simulate_takes_region_and_cache_of_a_target_placement(runs, tmp_path):
    """simulate of a placement for a target run: the census comes first in
    `profiles`; the region is the small profiles', the cache the target's."""
    from tierwise.pipeline import sim_args

    small, census = runs
    meta = json.loads((small[0] / "meta.json").read_text())
    meta["backend_params"]["roi"] = {"mode": "markers"}
    (small[0] / "meta.json").write_text(json.dumps(meta))
    pl = {"profiles": [str(census), str(small[0])], "target": {"llc_bytes": 4 << 20}}
    assert sim_args(pl) == ["--roi", "markers", "--llc-size", str(4 << 20)]
    assert sim_args(pl, "1M") == ["--roi", "markers", "--llc-size", "1M"]
