# SPDX-License-Identifier: MIT
"""Property tests (Hypothesis) of the placement reader
(tierwise/placement.py): any JSON value is either accepted as a valid
placement or rejected with ValueError (never another exception); what it
accepts, the C runtime's parser accepts too (same grammar: JSON booleans
are not numbers); the size grammar (FORMATS.md "Sizes") against an
independent exact reference (fractions); write/load round-trips."""

import json
import math
import re
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tierwise.formats import placement
from tierwise.sizes import parse_size

# The size grammar of advisor/FORMATS.md and runtime/src/tw_out.c.
# The size grammar (advisor/FORMATS.md "Sizes"), written out independently
SIZE_RE = re.compile(r"([0-9]+(?:\.[0-9]{1,18})?)(?: *([kKmMgGtT])(?:[iI]?[bB])?| *[bB])?", re.ASCII)
SHIFT = {"": 0, "k": 10, "m": 20, "g": 30, "t": 40}

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
tiers = st.sampled_from(
    ["dram", "pmem", "kmem", "hbw", "numa:0", "numa:12", "fast", "", "numa:", "PMEM"]
)
site = st.fixed_dictionaries(
    {"stack": st.text(max_size=30), "tier": tiers | json_values},
    optional={"location": st.text(max_size=20), "bytes": st.integers(0, 2**40)},
)
docs = st.fixed_dictionaries(
    {
        "format": st.sampled_from(["tierwise-placement", "tierwise-profile"])
        | json_values,
        "version": st.sampled_from([1, 2, 1.0, True, "1"]) | json_values,
        "default_tier": tiers | json_values,
        "sites": st.lists(site, max_size=4) | json_values,
    },
    optional={"depth": st.integers(-2, 70) | json_values},
)


def runtime_accepts_number(v, lo, hi):
    """A JSON number (not a boolean) in an integer range, as tw_placement.c
    checks (its reader's number kind, then tw_int)."""
    return (
        not isinstance(v, bool) and isinstance(v, (int, float)) and lo <= int(v) <= hi
    )


@settings(max_examples=200, deadline=None)
@given(docs | json_values)
def test_accepts_or_valueerror_and_runtime_agrees(doc):
    try:
        placement.validate(doc)
    except ValueError as e:
        assert str(e).startswith("placement: ")
        return
    # Accepted: the runtime's parser must accept it as well.
    assert doc["format"] == "tierwise-placement"
    assert runtime_accepts_number(doc["version"], 1, 1), doc["version"]
    if "depth" in doc:  # null too: the runtime's reader says null is no number
        assert runtime_accepts_number(doc["depth"], 1, 64), doc["depth"]
    for s in doc["sites"]:
        assert isinstance(s["stack"], str) and s["stack"]
        assert placement.valid_tier(s["tier"])


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=14) | st.from_regex(SIZE_RE, fullmatch=True))
def test_parse_size_is_the_grammar(text):
    m = SIZE_RE.fullmatch(text)
    expect = None
    if m:
        v = math.floor(Fraction(m[1]) * 2 ** SHIFT[(m[2] or "").lower()])
        expect = v if v < 2**64 else None
    if expect is None:
        with pytest.raises(ValueError):
            parse_size(text)
    else:
        assert parse_size(text) == expect


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "stack": st.text(min_size=1, max_size=30),
                "tier": st.sampled_from(placement.TIERS),
                "location": st.text(max_size=20),
            }
        ),
        max_size=5,
        unique_by=lambda s: s["stack"],  # one stack in two tiers is refused
    ),
    st.sampled_from(placement.TIERS),
    st.none() | st.integers(1, 64),
)
def test_write_load_round_trip(tmp_path_factory, sites, default_tier, depth):
    path = tmp_path_factory.mktemp("p") / "placement.json"
    doc = placement.make(sites, default_tier=default_tier, depth=depth)
    placement.write(doc, path)
    assert placement.load(path) == json.loads(json.dumps(doc))
