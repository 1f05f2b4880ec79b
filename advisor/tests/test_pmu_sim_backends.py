# SPDX-License-Identifier: MIT
"""Backends sim and pmu: size parsing, host cache geometry from sysfs,
geometry validation, and libpfm4 event encoding through the probe."""

import argparse
import json
import os

import pytest

from tierwise import paths
from tierwise.backends import pmu, sim


def test_parse_size():
    # sysfs writes cache sizes as '32768K'; the sim backend reads them with
    # the one size grammar
    assert sim.parse_size("1M") == 1 << 20
    assert sim.parse_size("32768K") == 32 << 20
    assert sim.parse_size("4096") == 4096
    with pytest.raises(ValueError, match="size 'lots'"):
        sim.parse_size("lots")


def _cache(root, idx, level, kind, size, ways, line=64):
    d = root / f"index{idx}"
    d.mkdir(parents=True)
    for name, val in [
        ("level", level),
        ("type", kind),
        ("size", size),
        ("ways_of_associativity", ways),
        ("coherency_line_size", line),
    ]:
        (d / name).write_text(f"{val}\n")


def test_host_cache_geometry_picks_l1d_and_last_level(tmp_path):
    _cache(tmp_path, 0, 1, "Data", "48K", 12)
    _cache(tmp_path, 1, 1, "Instruction", "32K", 8)
    _cache(tmp_path, 2, 2, "Unified", "1280K", 10)
    _cache(tmp_path, 3, 3, "Unified", "30720K", 15)
    geo = sim.host_cache_geometry(tmp_path)
    assert geo == {
        "l1_size": 48 << 10,
        "l1_ways": 12,
        "llc_size": 30 << 20,
        "llc_ways": 15,
        "line_size": 64,
    }


def test_geometry_options_override_and_validate():
    args = argparse.Namespace(
        llc_size="1M", llc_ways=16, l1_size=None, l1_ways=None, line_size=None
    )
    geo = sim.geometry(args)
    assert geo["llc_size"] == 1 << 20 and geo["llc_ways"] == 16 and geo["source"] == "options"
    bad = argparse.Namespace(llc_size="1000", llc_ways=16, l1_size=None, l1_ways=None, line_size=64)
    with pytest.raises(ValueError, match="not a whole number of sets"):
        sim.geometry(bad)


def test_geometry_size_alone_keeps_whole_sets(monkeypatch):
    """A size given without ways on a host whose ways do not divide it (a
    15-way L3, as on a Xeon with 105 MiB of L3): the nearest way count
    that does. Ways given explicitly are checked as given."""
    monkeypatch.setattr(
        sim,
        "host_cache_geometry",
        lambda: {"l1_size": 48 << 10, "l1_ways": 12, "llc_size": 105 << 20, "llc_ways": 15},
    )
    args = argparse.Namespace(llc_size="256K", llc_ways=None, l1_size=None, l1_ways=None, line_size=None)
    geo = sim.geometry(args)
    assert (geo["llc_size"], geo["llc_ways"], geo["l1_ways"]) == (256 << 10, 16, 12)
    args = argparse.Namespace(llc_size="96K", llc_ways=None, l1_size=None, l1_ways=None, line_size=None)
    assert sim.geometry(args)["llc_ways"] == 16  # 1536 lines: 16 divides, 15 does not
    explicit = argparse.Namespace(llc_size="256K", llc_ways=15, l1_size=None, l1_ways=None, line_size=None)
    with pytest.raises(ValueError, match="not a whole number of sets"):
        sim.geometry(explicit)


needs_probe = pytest.mark.skipif(not (paths.build_dir() / pmu.PROBE).exists(), reason="not built")


@needs_probe
def test_intel_events_encode_precise_with_addresses():
    ok, text = pmu.probe("encode", 5003, env=dict(os.environ, LIBPFM_FORCE_PMU="icl"))
    assert ok, text
    ev = [json.loads(line) for line in text.splitlines()]
    assert [e["name"] for e in ev] == [
        "icl::MEM_LOAD_RETIRED:L3_MISS",
        "icl::MEM_INST_RETIRED:ALL_STORES",
    ]
    assert all(e["type"] == 4 and e["precise_ip"] == 2 and e["sample_period"] == 5003 for e in ev)
    assert ev[0]["config"] & 0xFFFF == 0x20D1 and ev[1]["config"] & 0xFFFF == 0x82D0
    addr_bit = 1 << 3
    assert all(e["sample_type"] & addr_bit for e in ev)


@needs_probe
def test_amd_without_ibs_says_why(tmp_path):
    env = dict(os.environ, LIBPFM_FORCE_PMU="amd64_fam19h_zen3", TW_PMU_SYSFS=str(tmp_path))
    ok, text = pmu.probe("encode", env=env)
    assert not ok and "ibs_op/type: no ibs_op PMU" in text
