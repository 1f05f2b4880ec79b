# SPDX-License-Identifier: MIT
"""progress.ticking (issue 36 item 7): a step longer than the interval
prints a line per interval; a step that ends, or whose process has ended,
prints no more."""

import time

from tierwise import progress


def test_long_step_ticks(monkeypatch, capsys):
    monkeypatch.setattr(progress, "INTERVAL_S", 0.05)
    with progress.ticking("compare", "modelling"):
        time.sleep(0.32)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) >= 3
    assert all(ln.startswith("tierwise compare: modelling: still running, ") for ln in lines)
    time.sleep(0.15)  # ended: nothing more
    assert capsys.readouterr().err == ""


def test_no_tick_once_the_process_has_ended(monkeypatch, capsys):
    monkeypatch.setattr(progress, "INTERVAL_S", 0.05)
    with progress.ticking("profile", "sim", alive=lambda: False):
        time.sleep(0.2)
    assert capsys.readouterr().err == ""


def test_short_step_is_quiet(capsys):
    with progress.ticking("advise", "x"):
        pass
    assert capsys.readouterr().err == ""
