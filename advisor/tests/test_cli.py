# SPDX-License-Identifier: MIT
"""The CLI parser: every verb has --help and bad verbs fail."""
import pytest

from tierwise import cli


def test_unknown_verb_exits_nonzero():
    with pytest.raises(SystemExit) as e:
        cli.main(["no-such-verb"])
    assert e.value.code != 0


def test_every_verb_loads_and_has_help(capsys):
    parser = cli.build_parser()
    sub = [a for a in parser._actions if a.dest == "verb"][0]
    # every verb the CLI lists is registered: a verb whose module is missing
    # or fails to import must fail this test, not vanish from --help
    assert list(sub.choices) == list(cli.VERBS)
    for verb in cli.VERBS:
        with pytest.raises(SystemExit) as e:
            cli.main([verb, "--help"])
        assert e.value.code == 0
        assert "usage: tierwise " + verb in capsys.readouterr().out
