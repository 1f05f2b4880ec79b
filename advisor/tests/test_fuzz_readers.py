# SPDX-License-Identifier: MIT
"""Fuzz (Hypothesis) of the Python readers (issue 36 item 3): a placement
(formats.placement.load, which `tierwise run` calls before it execs the
program, so not in-process here), a profile directory (through `tierwise
advise`) and a run report (formats.report.read, which `tierwise run` prints
from), made from valid files with one field replaced by a hostile value, a
byte garbled or deep nesting. Property: no traceback - the reader returns
or raises ValueError in one line naming the file (cli.main prints that as
`tierwise VERB: error: ...`, exit 2); advise ends with exit 0, or exit 2
and one `error:` line naming the file."""

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tierwise import cli
from tierwise.formats import placement as placement_format
from tierwise.formats import report as report_format

INPUTS = Path(__file__).resolve().parents[2] / "test" / "advisor" / "Inputs" / "pr-small"
PLACEMENT = {
    "format": "tierwise-placement",
    "version": 1,
    "default_tier": "dram",
    "depth": 6,
    "sites": [{"stack": "a+0x1;b+0x2", "tier": "pmem", "bytes": 4096, "dram_bytes": 4096}],
}
# values that broke a reader once (issue 36) and their kin
hostile = st.one_of(
    st.sampled_from(["1e26", "1e400", "-1", "nan", "inf", "0x10", "", " ", "1.5", "abc",
                     "99999999999999999999999999", "\x00", "\udcff"[:0] + "\xff"]),
    st.text(max_size=8),
    st.integers(-(2**70), 2**70).map(str),
    st.floats().map(repr),
)
json_hostile = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**80), 2**80), st.floats(),
    st.text(max_size=8), st.lists(st.integers(), max_size=3), st.just({"a": 1}),
)
SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def one_error_line(err: str, path: Path) -> None:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert "Traceback" not in err
    errors = [ln for ln in lines if "error:" in ln]
    assert len(errors) == 1, err
    assert str(path) in errors[0] or path.name in errors[0], err


def load_or_one_line(path: Path) -> None:
    try:
        placement_format.load(path)
    except ValueError as e:
        assert str(path) in str(e) and "\n" not in str(e), str(e)


def run_cli(argv, capsys):
    try:
        rc = cli.main(argv)
    except SystemExit as e:  # argparse
        rc = e.code
    out = capsys.readouterr()
    return rc, out.err


@SETTINGS
@given(field=st.sampled_from(["version", "depth", "default_tier", "sites", "stack", "tier",
                              "bytes", "dram_bytes", "rank", "planned_bytes", "planned_live"]),
       value=json_hostile)
def test_placement_field(tmp_path, capsys, field, value):
    doc = json.loads(json.dumps(PLACEMENT))
    (doc if field in ("version", "depth", "default_tier", "sites") else doc["sites"][0])[field] = value
    path = tmp_path / "p.json"
    try:
        path.write_text(json.dumps(doc))
    except ValueError:  # nan/inf: not JSON
        return
    load_or_one_line(path)


@SETTINGS
@given(data=st.binary(max_size=64), depth=st.integers(0, 200000))
def test_placement_bytes_and_nesting(tmp_path, capsys, data, depth):
    path = tmp_path / "p.json"
    path.write_bytes(b"[" * depth + data)
    load_or_one_line(path)


def _profile(tmp_path) -> Path:
    d = tmp_path / "prof"
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(INPUTS, d)
    return d


@SETTINGS
@given(name=st.sampled_from(["sites.csv", "objects.csv", "modules.csv"]),
       row=st.integers(1, 3), col=st.integers(0, 10), value=hostile)
def test_profile_csv_field(tmp_path, capsys, name, row, col, value):
    d = _profile(tmp_path)
    path = d / name
    lines = path.read_text().splitlines()
    cells = lines[min(row, len(lines) - 1)].split(",")
    cells[col % len(cells)] = value.replace(",", "").replace("\n", "")
    lines[min(row, len(lines) - 1)] = ",".join(cells)
    path.write_text("\n".join(lines) + "\n", errors="surrogateescape")
    rc, err = run_cli(["advise", str(d), "--dram-budget", "20%", "-o", str(tmp_path / "o.json")], capsys)
    assert rc in (0, 2), err
    if rc == 2:
        one_error_line(err, path)


@SETTINGS
@given(name=st.sampled_from(["sites.csv", "objects.csv", "modules.csv", "meta.json"]),
       at=st.integers(0, 400), data=st.binary(min_size=1, max_size=16))
def test_profile_garbled_bytes(tmp_path, capsys, name, at, data):
    d = _profile(tmp_path)
    path = d / name
    raw = path.read_bytes()
    at %= len(raw)
    path.write_bytes(raw[:at] + data + raw[at + len(data):])
    rc, err = run_cli(["advise", str(d), "--dram-budget", "20%", "-o", str(tmp_path / "o.json")], capsys)
    assert rc in (0, 2), err
    if rc == 2:
        one_error_line(err, path)


@SETTINGS
@given(key=st.sampled_from(["format", "version", "sites", "totals", "dram_limit", "warnings"]),
       value=json_hostile, data=st.binary(max_size=24))
def test_report(tmp_path, key, value, data):
    path = tmp_path / "r.json"
    doc = {"format": "tierwise-run-report", "version": 1, "sites": [], key: value}
    try:
        text = json.dumps(doc).encode()
    except ValueError:
        return
    for body in (text, text[: len(text) // 2] + data):
        path.write_bytes(body)
        try:
            report_format.read(path)
        except ValueError as e:
            assert str(path) in str(e) and "\n" not in str(e)


def test_deep_placement_is_one_line(tmp_path, capsys):
    # issue 36: 100,000 nested [ was a RecursionError traceback
    path = tmp_path / "deep.json"
    path.write_text("[" * 100000)
    with pytest.raises(ValueError, match=f"^{path}: not valid JSON"):
        placement_format.load(path)


@pytest.mark.parametrize("value", ["1e26", "1e400", "99999999999999999999999999"])
def test_huge_count_is_one_line(tmp_path, capsys, value):
    # issue 36: a sites.csv value of 1e26 or 1e400 was a pandas TypeError
    d = _profile(tmp_path)
    lines = (d / "sites.csv").read_text().splitlines()
    cells = lines[1].split(",")
    cells[6] = value  # loads
    lines[1] = ",".join(cells)
    (d / "sites.csv").write_text("\n".join(lines) + "\n")
    rc, err = run_cli(["advise", str(d), "--dram-budget", "20%", "-o", str(tmp_path / "o.json")], capsys)
    assert rc == 2 and err.count("\n") == 1
    assert f"{d / 'sites.csv'}: column 'loads' row 2" in err


def test_binary_sites_csv_names_the_file(tmp_path, capsys):
    d = _profile(tmp_path)
    (d / "sites.csv").write_bytes(b"site,stack\n\xff\xfe\x00garbage\x80\n")
    rc, err = run_cli(["advise", str(d), "--dram-budget", "20%", "-o", str(tmp_path / "o.json")], capsys)
    assert rc == 2 and err.count("\n") == 1 and str(d / "sites.csv") in err
