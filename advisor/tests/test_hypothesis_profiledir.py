# SPDX-License-Identifier: MIT
"""Property tests (Hypothesis) of the profile-directory reader and writer
(tierwise/formats/profile.py): raw backend output with arbitrary stacks (commas,
quotes, newlines, non-ASCII, pseudo-sites) and counts becomes a profile whose
sites.csv reads back with the same stacks and counts; meta.json says
complete exactly when the program exited and sites.csv exists; a sites.csv
with the wrong columns is a ValueError naming the file."""

import csv
import json
from datetime import datetime, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tierwise.formats import profile as profile_format

# Module names: any text but a lone carriage return, which neither the
# runtime's CSV writer (tw_csv_field) nor csv with lineterminator "\n"
# quotes (known limitation: README of test/reliability).
names = st.text(
    st.characters(blacklist_characters="\r", blacklist_categories=("Cs",)),
    min_size=1,
    max_size=10,
)
frame = st.one_of(
    st.builds(lambda m, o: f"{m}+0x{o:x}", names, st.integers(0, 2**48)),
    st.sampled_from(["[anon]+0x7f00", "[static]", "[stack]", "[unknown]"]),
)
stacks = st.lists(frame, min_size=1, max_size=4).map(";".join)
counts = st.integers(0, 2**62)
rows = st.lists(
    st.tuples(stacks, counts, counts, counts),
    min_size=0,
    max_size=6,
    unique_by=lambda r: r[0],
)
NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)


def write_raw(d, sites):
    with open(d / "sites.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(profile_format.REQUIRED_SITE_COLUMNS)
        for i, (stack, a, b, p) in enumerate(sites):
            w.writerow([i, stack, "", a, b, p, "", "", "", "", ""])
    (d / "modules.csv").write_text("module,path,build_id\n")
    (d / "backend.json").write_text(json.dumps({"depth": 6, "clock": "ns"}))


@settings(max_examples=60, deadline=None)
@given(rows, st.one_of(st.none(), st.integers(-9, 255)))
def test_finish_profile_round_trip(tmp_path_factory, sites, status):
    d = tmp_path_factory.mktemp("prof")
    write_raw(d, sites)
    meta = profile_format.finish_profile(
        d, ["prog", "a,b"], "alloc", {"exit_status": status}, NOW, NOW
    )
    back = list(csv.DictReader(open(d / "sites.csv", newline="")))
    assert [
        (r["stack"], int(r["allocs"]), int(r["bytes_allocated"]), int(r["peak_bytes"]))
        for r in back
    ] == list(sites)
    on_disk = json.loads((d / "meta.json").read_text())
    assert on_disk["format"] == "tierwise-profile" and on_disk["version"] == 1
    killed = status is None or status < 0
    assert on_disk["complete"] is (not killed)
    assert on_disk["exit_status"] == (None if killed else status)
    assert meta["n_sites"] == len(sites)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=5))
def test_wrong_columns_is_valueerror(tmp_path_factory, columns):
    if columns[: len(profile_format.REQUIRED_SITE_COLUMNS)] == profile_format.REQUIRED_SITE_COLUMNS:
        return
    d = tmp_path_factory.mktemp("bad")
    with open(d / "sites.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(columns)
        w.writerow(["1"] * len(columns))
    with pytest.raises(ValueError, match="sites.csv"):
        profile_format.finish_profile(d, ["prog"], "alloc", {"exit_status": 0}, NOW, NOW)


def test_missing_sites_is_incomplete(tmp_path):
    """A run that wrote nothing (killed before exit) is an incomplete profile."""
    meta = profile_format.finish_profile(
        tmp_path, ["prog"], "alloc", {"exit_status": 0}, NOW, NOW
    )
    assert meta["complete"] is False
