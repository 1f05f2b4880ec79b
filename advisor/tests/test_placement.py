# SPDX-License-Identifier: MIT
"""tierwise.placement: the placement.json grammar (FORMATS.md) and sizes."""

import json

import pytest

from tierwise import placement
from tierwise.sizes import parse_size


def minimal(**over):
    doc = {
        "format": "tierwise-placement",
        "version": 1,
        "default_tier": "dram",
        "sites": [{"stack": "bfs+0x1a2b;bfs+0x3c", "tier": "pmem"}],
    }
    doc.update(over)
    return doc


def test_minimal_hand_written_file_loads(tmp_path):
    p = tmp_path / "p.json"
    p.write_text(json.dumps(minimal()))
    doc = placement.load(p)
    assert doc["sites"][0]["tier"] == "pmem"


@pytest.mark.parametrize(
    "field,value,needle",
    [
        ("format", "other", "format = 'other'"),
        ("version", 2, "version = 2"),
        ("default_tier", "fast", "default_tier = 'fast'"),
        ("depth", 0, "depth = 0"),
        ("sites", {}, "sites = {}"),
    ],
)
def test_bad_fields_name_field_and_value(tmp_path, field, value, needle):
    p = tmp_path / "p.json"
    p.write_text(json.dumps(minimal(**{field: value})))
    with pytest.raises(ValueError) as e:
        placement.load(p)
    assert str(p) in str(e.value) and needle in str(e.value)


def test_bad_site_tier_is_indexed(tmp_path):
    p = tmp_path / "p.json"
    doc = minimal()
    doc["sites"].append({"stack": "x+0x1", "tier": "ssd"})
    p.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"sites\[1\]\.tier = 'ssd'"):
        placement.load(p)


def test_numa_tier_and_make_write_roundtrip(tmp_path):
    doc = placement.make(
        [{"stack": "a+0x1", "tier": "numa:1", "bytes": 10}],
        default_tier="dram",
        depth=6,
        modules=[{"module": "a", "build_id": "ab"}],
        policy="cost",
    )
    p = tmp_path / "out.json"
    placement.write(doc, p)
    back = placement.load(p)
    assert back["sites"][0]["tier"] == "numa:1" and back["depth"] == 6
    assert back["modules"] == [{"module": "a", "build_id": "ab"}]


def test_not_json_and_missing(tmp_path):
    p = tmp_path / "p.json"
    p.write_text("{")
    with pytest.raises(ValueError, match="not JSON"):
        placement.load(p)
    with pytest.raises(ValueError, match="not found"):
        placement.load(tmp_path / "nope.json")


@pytest.mark.parametrize(
    "text,value",
    [
        ("0", 0),
        ("64", 64),
        ("4K", 4096),
        ("3m", 3 << 20),
        ("2G", 2 << 30),
        ("1TB", 1 << 40),
    ],
)
def test_parse_size(text, value):
    # the one size grammar (tierwise/sizes.py; vectors in test_sizes.py)
    assert parse_size(text) == value


def test_parse_size_rejects_junk():
    with pytest.raises(ValueError, match="'12Q'"):
        parse_size("12Q")


def test_dram_head_is_accepted(tmp_path):
    p = tmp_path / "p.json"
    doc = minimal()
    doc["sites"][0]["dram_bytes"] = 2 << 20
    p.write_text(json.dumps(doc))
    assert placement.load(p)["sites"][0]["dram_bytes"] == 2 << 20


@pytest.mark.parametrize(
    "value,tier,needle",
    [
        (-4096, "pmem", "sites[0].dram_bytes = -4096: must be a positive multiple of 4096"),
        (0, "pmem", "sites[0].dram_bytes = 0: must be a positive"),
        ("8K", "pmem", "sites[0].dram_bytes = '8K': must be a positive"),
        (8192.0, "pmem", "sites[0].dram_bytes = 8192.0: must be a positive"),
        (True, "pmem", "sites[0].dram_bytes = True: must be a positive"),
        (6000, "pmem", "sites[0].dram_bytes = 6000: must be a positive multiple of 4096"),
        (8192, "dram", "sites[0].dram_bytes = 8192: only for a site whose tier is not dram"),
    ],
)
def test_bad_dram_head(tmp_path, value, tier, needle):
    p = tmp_path / "p.json"
    doc = minimal()
    doc["sites"][0].update(tier=tier, dram_bytes=value)
    p.write_text(json.dumps(doc))
    with pytest.raises(ValueError) as e:
        placement.load(p)
    assert str(p) in str(e.value) and needle in str(e.value)
    assert "\n" not in str(e.value)
