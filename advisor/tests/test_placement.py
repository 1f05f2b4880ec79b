# SPDX-License-Identifier: MIT
"""tierwise.formats.placement: the placement.json grammar (FORMATS.md) and sizes,
and the vectors it shares with the runtime's reader
(test/runtime/Inputs/placement-vectors.txt)."""

import json
from pathlib import Path

import pytest

from tierwise.formats import placement
from tierwise.sizes import parse_size


VECTORS = Path(__file__).resolve().parents[2] / "test/runtime/Inputs/placement-vectors.txt"


def vectors():
    for line in VECTORS.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#") and "\t" in line:
            yield tuple(line.rsplit("\t", 1))


@pytest.mark.parametrize("text,want", list(vectors()))
def test_shared_vector(text, want):
    # placements.test runs the runtime on the same vectors
    if want == "ok":
        placement.validate(json.loads(text), "v.json")
    else:
        with pytest.raises(ValueError):  # json.JSONDecodeError is one
            placement.validate(json.loads(text), "v.json")


@pytest.mark.parametrize("tier", ["numa:16", "numa:01", "numa:-1", "numa:1x"])
def test_numa_beyond_the_tier_names_says_which_nodes(tier):
    with pytest.raises(ValueError, match=r"numa:N names nodes 0 to 15"):
        placement.validate(minimal(sites=[{"stack": "a+0x1", "tier": tier}]), "v.json")


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
    with pytest.raises(ValueError, match="not valid JSON"):
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
        (8192.5, "pmem", "sites[0].dram_bytes = 8192.5: must be a positive"),
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


def test_advise_records_each_modules_path_and_build_id(tmp_path):
    """`tierwise rewrite` finds the binary from the placement alone."""
    from advisor_profiles import site_row, write_profile
    from tierwise.cli import main

    d = write_profile(
        tmp_path / "p",
        [site_row(0, "prog+0x10", 1 << 20, lm=1000), site_row(1, "libm.so.6+0x20", 1 << 20)],
        modules=[("prog", "ab12"), ("libm.so.6", "cd34")],
    )
    out = tmp_path / "placement.json"
    assert main(["advise", str(d), "--dram-budget", "1M", "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["modules"] == [
        {"module": "prog", "path": "/bin/prog", "build_id": "ab12"},
        {"module": "libm.so.6", "path": "/bin/libm.so.6", "build_id": "cd34"},
    ]
    placement.validate(doc)
