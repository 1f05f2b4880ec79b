# SPDX-License-Identifier: MIT
"""The size grammar of tierwise (advisor/FORMATS.md "Sizes"): every size a
user writes - CLI options, TOML tier files, placement budgets - goes through
parse_size; the runtime's TIERWISE_* variables through its C twin
(runtime/common/tw_size.c). Both are checked against the same vectors
(test/runtime/Inputs/size-vectors.txt). Standard library only (used by
`tierwise run`, cli.FAST_VERBS)."""

from __future__ import annotations

import re

MAX_DECIMALS = 18
_SIZE = re.compile(
    r"([0-9]+)(?:\.([0-9]{1,%d}))?(?: *([kmgt])(?:i?b)?| *b)?" % MAX_DECIMALS,
    re.ASCII | re.IGNORECASE,
)
GRAMMAR = "a number of bytes with an optional unit, e.g. 4096, 512M, 1.5GiB, 32.0 MiB"


def parse_size(text: object, what: str = "size") -> int:
    """'512M', '1.5 GiB', '4096', '2KB' -> bytes. K/M/G/T, KiB..TiB and
    KB..TB are all powers of 1024, letters in any case; decimals are rounded
    down to a whole byte. ValueError naming `what` and the text otherwise."""
    m = _SIZE.fullmatch(str(text))
    if m:
        frac = m[2] or ""
        mult = 1 << 10 * " kmgt".index((m[3] or " ").lower())
        scale = 10 ** len(frac)
        v = (int(m[1]) * scale + int(frac or 0)) * mult // scale
        if v < 2**64:
            return v
    raise ValueError(f"{what} {str(text)!r}: not a size ({GRAMMAR}; advisor/FORMATS.md \"Sizes\")")



def format_size(n: float) -> str:
    """Bytes as the tool prints them (`512 B`, `32.0 MiB`); parse_size reads
    the printed form back (to its precision)."""
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"
