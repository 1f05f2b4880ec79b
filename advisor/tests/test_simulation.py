# SPDX-License-Identifier: MIT
"""Per-site per-tier counts from a run report, and their modelled time."""

import json

import pytest

from advisor_profiles import site_row, write_profile
from tierwise import cost, reader, simulation, tiers
from tierwise.formats import report as report_format


@pytest.fixture
def prof(tmp_path):
    rows = [
        site_row(0, "x+0x10;x+0x99", 1000, 100, 10, 1000, 0, 0),
        site_row(1, "x+0x20", 3000, 300, 30, 3000, 300, 600),
        site_row(2, "x+0x30", 50, 8, 0, 8, 0, 0),
        "3,[stack],[stack],,,,40,40,4,0,0",
    ]
    return reader.read_profile(write_profile(tmp_path / "p", rows))


def test_counts_split_by_bytes_per_tier(prof):
    m = tiers.load("optane-appdirect")
    report = {
        "format": "tierwise-run-report",
        "version": 1,
        "totals": {"dram": 1750, "pmem": 2250},
        "sites": [
            # placed in DRAM, a quarter fell back to PMem (DRAM limit)
            {
                "stack": "x+0x10",
                "tier": "dram",
                "bytes": {"dram": 750, "pmem": 250},
                "fallback_bytes": 250,
            },
            {
                "stack": "x+0x20",
                "tier": "pmem",
                "bytes": {"dram": 0, "pmem": 3000},
                "fallback_bytes": 0,
            },
        ],
        "unmatched": [],
    }
    placement = {"default_tier": "dram"}
    c = simulation.counts_from_report(prof, report, placement, m)
    by = c.groupby(["site", "tier"])["llc_load_misses"].sum()
    assert by[(0, "dram")] == pytest.approx(750)  # prefix match: x+0x10 names x+0x10;x+0x99
    assert by[(0, "pmem")] == pytest.approx(250)
    assert by[(1, "pmem")] == pytest.approx(3000) and (1, "dram") not in by
    assert by[(2, "dram")] == pytest.approx(8)  # not in the report: default tier
    assert by[(3, "dram")] == pytest.approx(4)  # pseudo-site: system memory
    res = cost.modelled_time(c, m)
    assert res["per_tier"]["pmem"]["llc_load_misses"] == 3250
    assert res["per_tier"]["pmem"]["writebacks"] == 600
    # equals the cost model's placement time with the same fractions
    costs = cost.site_costs(prof.sites, m)
    expect = cost.placement_seconds(prof.sites, costs, m, {0: 0.75, 1: 0.0, 2: 1.0})
    assert res["seconds"] == pytest.approx(expect)


def test_read_site_tiers(tmp_path, prof):
    d = prof.paths[0]
    (d / "sites_by_tier.csv").write_text(
        "site,tier,allocs,bytes_allocated,loads,stores,llc_load_misses,llc_store_misses,"
        "writebacks\n0,dram,1,1000,100,10,1000,0,0\n1,pmem,1,3000,300,30,3000,300,600\n"
        "3,default,0,0,40,40,4,0,0\n"
    )
    df = simulation.read_site_tiers(d, prof)
    assert df["stack"].tolist() == ["x+0x10;x+0x99", "x+0x20", "[stack]"]
    m = tiers.load("optane-appdirect")
    res = cost.modelled_time(simulation.resolve_default_tier(df, m), m)
    assert set(res["per_tier"]) == {"dram", "pmem"}
    assert res["per_tier"]["dram"]["llc_load_misses"] == 1004
    (d / "sites_by_tier.csv").write_text("site,tier,loads\n0,dram,1\n")
    with pytest.raises(ValueError, match="missing column 'stores'"):
        simulation.read_site_tiers(d, prof)
    (d / "sites_by_tier.csv").unlink()
    assert simulation.read_site_tiers(d, prof) is None


def test_bad_report(tmp_path):
    p = tmp_path / "r.json"
    p.write_text(json.dumps({"format": "tierwise-placement", "sites": []}))
    with pytest.raises(ValueError, match="not a tierwise run report"):
        report_format.read(p)
