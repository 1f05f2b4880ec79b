# SPDX-License-Identifier: MIT
"""advise says which sites could use a budget left unused and why they did
not get it (issue 36 item 6: a hot site whose objects are live at the same
time got no head, 4.5 KiB of a 12.8 MiB budget was used, nothing said)."""

from advisor_profiles import site_row, write_profile

from tierwise import cli

MIB = 1 << 20


def hot_together(tmp_path):
    """One small site and one hot 16 MiB site of two 8 MiB objects live
    together (no head: a head is per object, one at a time)."""
    rows = [
        site_row(0, "app+0x10;app+0x1", 8 * MIB, 4000000, 0, 2000000, 0, 0,
                 location="kernel k.c:10", allocs=2),
        site_row(1, "app+0x20;app+0x1", 4096, 1000, 0, 100, location="small s.c:5"),
    ]
    objs = [(0, 8 * MIB, 0, 10), (0, 8 * MIB, 1, 10), (1, 4096, 2, None)]
    return write_profile(tmp_path / "p", rows, objs)


def advise(d, tmp_path, capsys, *extra):
    rc = cli.main(["advise", str(d), "--dram-budget", "4M", "-o", str(tmp_path / "o.json"),
                   *extra])
    assert rc == 0
    return [ln for ln in capsys.readouterr().out.splitlines() if "budget unused" in ln]


def test_objects_live_together_are_named(tmp_path, capsys):
    lines = advise(hot_together(tmp_path), tmp_path, capsys)
    assert len(lines) == 1
    line = lines[0]
    assert line.startswith("note: 4.0 MiB of the 4.0 MiB budget unused; site 0 (kernel k.c:10")
    assert "too large to go whole (8.0 MiB)" in line
    assert "its objects are live at the same time" in line
    assert "a --dram-budget of 8.0 MiB would place it whole" in line


def test_whole_sites_is_the_reason_given(tmp_path, capsys):
    lines = advise(hot_together(tmp_path), tmp_path, capsys, "--whole-sites")
    assert "no DRAM head asked for (--whole-sites)" in lines[0]


def test_a_used_budget_says_nothing(tmp_path, capsys):
    d = hot_together(tmp_path)
    rc = cli.main(["advise", str(d), "--dram-budget", "16M", "-o", str(tmp_path / "o.json")])
    assert rc == 0
    assert "budget unused" not in capsys.readouterr().out
