# SPDX-License-Identifier: MIT
"""Post-processing a raw profile into a profile (formats.profile.finish_profile,
issue 38).
On recorded raw profiles (tests/data/postprocess/, README.md there) the
sites, locations and counts are those the previous implementation (main at
410378c, which compared every pair of alike sites) wrote; the program's and
its child processes' frames are symbolized once; progress is said while it
runs."""

import csv
import json
import re
import shutil
import time
from datetime import datetime, timezone
from io import StringIO
from pathlib import Path

import pytest

from tierwise.formats import profile as profile_format
from tierwise.progress import Progress
from tierwise.symbolize import Symbolizer

DATA = Path(__file__).parent / "data" / "postprocess"
CASES = ["mpi-singleton", "fw-locations", "synthetic"]
T = datetime(2026, 11, 28, tzinfo=timezone.utc)


def processes(d):
    """The program's raw profile directory and its children's."""
    return [d] + sorted((d / "children").glob("*"))


def known_frames(d, children=True):
    """{(module path, offset): chain} from the symbols.json of `d` (and of
    its children): what llvm-symbolizer said when they were recorded."""
    known = {}
    for p in processes(d) if children else [d]:
        for path, frames in json.loads((p / "symbols.json").read_text()).items():
            for off, chain in frames.items():
                known[(path, int(off, 16))] = [tuple(x) for x in chain]
    return known


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def raw_copy(case, tmp_path):
    """The raw profile of `case` alone (no expected output, no symbols)."""
    out = tmp_path / case
    shutil.copytree(DATA / case, out,
                    ignore=shutil.ignore_patterns("expected-locations.csv", "symbols.json"))
    return out


@pytest.mark.parametrize("case", CASES)
def test_sites_locations_and_counts_are_the_previous_implementations(case, tmp_path):
    out = raw_copy(case, tmp_path)
    info = {"exit_status": 0,
            "params": json.loads((out / "backend.json").read_text())}
    meta = profile_format.finish_profile(out, ["prog"], "sim", info, T, T,
                                         known=known_frames(DATA / case))
    assert meta["processes"][0] == ("prog", len(rows(DATA / case / "sites.csv")))
    for src in processes(DATA / case):
        got = rows(out / src.relative_to(DATA / case) / "sites.csv")
        want = rows(src / "sites.csv")
        for r, e in zip(want, rows(src / "expected-locations.csv")):
            assert r["site"] == e["site"]
            r["location"] = e["location"]
        assert got == want  # every column, row and order
        # the case tells alike sites apart (not a profile of distinct lines)
        assert any(" <- " in r["location"] for r in got)
    if case == "mpi-singleton":  # orted's profile, finished as a child process
        assert meta["processes"] == [("prog", 120), ("orted", 103)]
        kid = json.loads(next((out / "children").glob("*/meta.json")).read_text())
        assert kid["command"][0] == "/usr/bin/orted" and kid["complete"] is True


def test_a_child_reuses_the_frames_its_program_symbolized(tmp_path):
    """orted's frames in the libraries mpi-pagerank loaded too are the
    program's answers: a Symbolizer sharing `known` resolves them without
    running llvm-symbolizer (tool None: it would resolve nothing)."""
    d = DATA / "mpi-singleton"
    kid = next((d / "children").glob("*"))
    prog_known = known_frames(d, children=False)
    mods = {r["module"]: r["path"] for r in rows(kid / "modules.csv")}
    sym = Symbolizer(mods, tool="/nonexistent/llvm-symbolizer", known=prog_known)
    stacks = [r["stack"] for r in rows(kid / "sites.csv") if not r["stack"].startswith("[")]
    sym.resolve([f for s in stacks for f in s.split(";")])
    shared = [f for f, chain in sym.cache.items() if chain]
    assert len(shared) >= 50  # libopen-pal's, libpmix's, libc's ... frames
    # the same answers as when orted's own frames were recorded
    own = known_frames(d)
    for f in shared:
        mod, off = f.split("+0x")
        assert sym.cache[f] == own[(mods[mod], int(off, 16))]


def test_progress_says_what_it_does_and_how_far():
    out = StringIO()
    with Progress("tierwise profile: post-processing", every=0.01, stream=out) as p:
        p.who = "prog"
        p.doing("locating sites", 11890)
        p.advance(4000)
        deadline = time.monotonic() + 5
        while p.lines == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
    assert re.match(
        r"tierwise profile: post-processing prog: locating sites, 4,000 of 11,890 \(\d+ s\)$",
        out.getvalue().splitlines()[0],
    )


def test_finish_profile_reports_progress_of_each_part(tmp_path):
    """Every line printed names a part of the work and, where it counts,
    N of the case's M sites or frames."""
    out = raw_copy("synthetic", tmp_path)
    stream = StringIO()
    with Progress("pp", every=0.0005, stream=stream) as p:
        profile_format.finish_profile(out, ["prog"], "sim", {"exit_status": 0}, T, T,
                                      known=known_frames(DATA / "synthetic"), progress=p)
        time.sleep(0.01)  # the last part's line
    lines = stream.getvalue().splitlines()
    assert lines
    for line in lines:
        m = re.fullmatch(r"pp prog: (reading the raw profile|locating sites|telling alike "
                         r"sites apart|writing the profile)(?:, ([\d,]+) of ([\d,]+))? \(\d+ s\)",
                         line)
        assert m, line
        if m[2]:
            assert int(m[2].replace(",", "")) <= int(m[3].replace(",", "")) == 400
