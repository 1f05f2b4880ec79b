# SPDX-License-Identifier: MIT
"""tierwise.messages.listed and the messages that list processes, modules
or report files with it: one bounded line however many there are (issue
36: a warning line of 6,102 characters)."""

from tierwise.formats.report import others_line
from tierwise.messages import listed


def test_listed_names_a_few():
    assert listed(["a", "b", "a"]) == "a; b"
    assert listed(f"f{i}" for i in range(1000)) == "f0; f1; f2; f3 and 996 more"
    assert len(listed(f"fn_{i} x.cc:{i}" for i in range(5000))) < 80


def test_listed_keeps_equal_items_when_they_are_distinct():
    # two processes of one program with as many sites are two processes
    assert listed(["3 sites of true"] * 6, sep=", ", unique=False) == (
        "3 sites of true, 3 sites of true, 3 sites of true, 3 sites of true and 2 more"
    )


def test_others_line_of_812_processes_is_one_short_line(tmp_path):
    rep = tmp_path / "r.json"
    others = [tmp_path / f"r.json.{'seq' if i == 0 else 'true'}.{4000 + i}" for i in range(812)]
    line = others_line(rep, others)
    assert line.startswith("812 other processes ran under the runtime (seq, true); their reports: ")
    assert line.endswith(f"r.json.true.4003 and 808 more, each {rep}.PROGRAM.PID")
    assert len(line) < 300 + 5 * len(str(tmp_path))


def test_others_line_of_one_names_it(tmp_path):
    q = tmp_path / "r.json.orted.17"
    assert others_line(tmp_path / "r.json", [q]) == (
        f"1 other process ran under the runtime (orted); its report: {q}"
    )
