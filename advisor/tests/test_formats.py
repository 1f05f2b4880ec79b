# SPDX-License-Identifier: MIT
"""tierwise.formats: compare.csv and the run report, read back as written,
and one clear error line naming the file, field and value of a bad one;
the symbolizer's frames carry lines and columns."""

import json
import shutil
import subprocess

import pandas as pd
import pytest

from tierwise.formats import compare, report
from tierwise.formats.profile import count
from tierwise.symbolize import Symbolizer, build_id


def rows():
    return pd.DataFrame(
        [
            ["all-dram", 1.0, 1000, 1000, 2.5, 1.0, "model"],
            ["cost", 0.2, 200, 192, 3.0, 1.2, "model"],
        ],
        columns=compare.COLUMNS,
    )


def test_compare_round_trip(tmp_path):
    p = tmp_path / "compare.csv"
    compare.write(rows(), p)
    back = compare.read(p)
    assert list(back.columns) == compare.COLUMNS
    assert back["fast_bytes"].tolist() == [1000, 192]
    assert back["ratio_to_dram"].tolist() == [1.0, 1.2]


def test_compare_bad_value_names_column_row_value(tmp_path):
    df = rows()
    df.loc[1, "modelled_seconds"] = -1.0
    with pytest.raises(ValueError, match=r"compare.csv: column 'modelled_seconds' row 3: value '-1.0'"):
        compare.write(df, tmp_path / "compare.csv")
    assert not (tmp_path / "compare.csv").exists()
    with pytest.raises(ValueError, match=r"missing column 'source'"):
        compare.write(rows().drop(columns="source"), tmp_path / "compare.csv")


def test_report_read(tmp_path):
    p = tmp_path / "r.json"
    p.write_text(json.dumps({"format": "tierwise-run-report", "version": 1, "sites": []}))
    assert report.read(p)["sites"] == []
    p.write_text(json.dumps({"format": "tierwise-run-report", "version": 2, "sites": []}))
    with pytest.raises(ValueError, match=r"r.json: field 'version' is 2"):
        report.read(p)
    p.write_text("[1]")
    with pytest.raises(ValueError, match=r"r.json: not a tierwise run report"):
        report.read(p)
    with pytest.raises(ValueError, match=r"gone.json: cannot read the run report"):
        report.read(tmp_path / "gone.json")


def test_count_cells():
    s = pd.Series([3, None], dtype="Int64")
    assert count(s.iloc[0]) == 3.0
    assert pd.isna(count(s.iloc[1]))


SRC = r"""
#include <stdlib.h>
static inline void *wrap(size_t n) { return malloc(n); }
int main(void) { void *p = wrap(16); return p == 0; }
"""


def test_frames_have_lines_columns_and_inline_chain(tmp_path):
    """What `tierwise rewrite` puts in placement.json `frames`: the inlined
    wrapper first (inlined: true) with its column, then its caller."""
    if not shutil.which("cc") or not shutil.which("objdump"):
        pytest.skip("no C compiler or objdump")
    (tmp_path / "p.c").write_text(SRC)
    prog = tmp_path / "prog"
    subprocess.run(["cc", "-g", "-O2", "-o", str(prog), str(tmp_path / "p.c")], check=True)
    dis = subprocess.run(["objdump", "-d", str(prog)], capture_output=True, text=True).stdout
    main = dis[dis.index("<main>:") :].split("\n\n")[0].splitlines()
    call = next(l for l in main if "call" in l and "malloc" in l)
    off = int(call.split(":")[0], 16)
    sym = Symbolizer({"prog": str(prog)})
    if not sym.tool:
        pytest.skip("no llvm-symbolizer")
    frames = sym.frames(f"prog+0x{off:x};other+0x10")
    assert frames[0]["function"] == "wrap" and frames[0]["line"] == 3
    assert frames[0]["column"] > 0 and frames[0]["inlined"] is True
    assert frames[1]["function"] == "main" and frames[1]["line"] == 4
    assert frames[1]["inlined"] is False
    assert frames[2] == {"function": "??", "file": "", "line": 0}
    notes = subprocess.run(["readelf", "-n", str(prog)], capture_output=True, text=True).stdout
    want = notes.split("Build ID:")[1].split()[0] if "Build ID:" in notes else ""
    assert build_id(prog) == want  # readelf as the independent reading
    assert build_id(tmp_path / "p.c") == ""  # not ELF
