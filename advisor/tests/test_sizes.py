# SPDX-License-Identifier: MIT
"""The size grammar (tierwise/sizes.py) against the vectors it shares with
the runtime's C parser (test/runtime/Inputs/size-vectors.txt), and the
tool's printed sizes read back."""

from pathlib import Path

import pytest

from tierwise.sizes import format_size, parse_size

VECTORS = Path(__file__).resolve().parents[2] / "test" / "runtime" / "Inputs" / "size-vectors.txt"


def vectors():
    for line in VECTORS.read_text().splitlines():
        if line.startswith("#") or "\t" not in line:
            continue
        text, want = line.rsplit("\t", 1)
        yield text, want


@pytest.mark.parametrize("text,want", list(vectors()))
def test_vector(text, want):
    if want == "error":
        with pytest.raises(ValueError, match="not a size"):
            parse_size(text, "--x")
    else:
        assert parse_size(text) == int(want)


@pytest.mark.parametrize("n", [0, 1, 1023, 4096, 3 << 20, 32 << 20, 5 << 30, 7 << 40])
def test_printed_sizes_read_back(n):
    # sizes the tool prints exactly ("3.0 MiB", "1023 B") read back exactly
    assert parse_size(format_size(n)) == n
    # and rounded ones to the printed precision
    assert abs(parse_size(format_size(n + n // 1000)) - (n + n // 1000)) <= (n + n // 1000) / 20


def test_error_names_the_option():
    with pytest.raises(ValueError, match=r"--dram-limit '1 XB': not a size"):
        parse_size("1 XB", "--dram-limit")
