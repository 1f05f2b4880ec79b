# SPDX-License-Identifier: MIT
"""The CLI parser: every verb has --help and bad verbs fail."""
import pytest

from tierwise import cli


def test_unknown_verb_exits_nonzero():
    with pytest.raises(SystemExit) as e:
        cli.main(["no-such-verb"])
    assert e.value.code != 0


def test_every_loaded_verb_has_help(capsys):
    parser = cli.build_parser()
    sub = [a for a in parser._actions if a.dest == "verb"][0]
    assert sub.choices, "no verbs registered"
    for verb in sub.choices:
        with pytest.raises(SystemExit) as e:
            cli.main([verb, "--help"])
        assert e.value.code == 0
        assert "usage: tierwise " + verb in capsys.readouterr().out
