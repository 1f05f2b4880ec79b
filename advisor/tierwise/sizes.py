# SPDX-License-Identifier: MIT
"""The size grammar of tierwise (advisor/FORMATS.md "Sizes"): every size a
user writes - CLI options, TOML tier files, placement budgets - goes through
parse_size; the runtime's TIERWISE_* variables through its C twin
(runtime/common/tw_size.c). Both are checked against the same vectors
(test/runtime/Inputs/size-vectors.txt). Standard library only (used by
`tierwise run`, cli.FAST_VERBS).

Every numeric option of the CLI is checked here, before anything runs
(issue 36): `size_option`, `count_option` and `share_option` make the
argparse types (sizes with units, whole counts without, SIZE|N% shares),
each with the range the consumer (the Valgrind tool, the runtime) accepts."""

from __future__ import annotations

import argparse
import re

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Any, Callable

MAX_DECIMALS = 18
_SIZE = re.compile(
    r"([0-9]+)(?:\.([0-9]{1,%d}))?(?: *([kmgt])(?:i?b)?| *b)?" % MAX_DECIMALS,
    re.ASCII | re.IGNORECASE,
)
GRAMMAR = "a number of bytes with an optional unit, e.g. 4096, 512M, 1.5GiB, 32.0 MiB"


def _size(text: object) -> int | None:
    m = _SIZE.fullmatch(str(text))
    if m:
        frac = m[2] or ""
        mult = 1 << 10 * " kmgt".index((m[3] or " ").lower())
        scale = 10 ** len(frac)
        v = (int(m[1]) * scale + int(frac or 0)) * mult // scale
        if v < 2**64:
            return v
    return None


def parse_size(text: object, what: str = "size") -> int:
    """'512M', '1.5 GiB', '4096', '2KB' -> bytes. K/M/G/T, KiB..TiB and
    KB..TB are all powers of 1024, letters in any case; decimals are rounded
    down to a whole byte. ValueError naming `what` and the text otherwise."""
    v = _size(text)
    if v is None:
        raise ValueError(f"{what} {str(text)!r}: {NOT_A_SIZE}")
    return v


NOT_A_SIZE = f"not a size ({GRAMMAR}; advisor/FORMATS.md \"Sizes\")"
SHARE_GRAMMAR = "a size with a unit (512M, 2GiB, 4096B), 0, or N% (0-100, e.g. 20%)"


def parse_share(text: object, what: str) -> int | float:
    """A budget or limit: SIZE -> bytes (int), N% -> percent (float,
    0-100). A bare number other than 0 is refused: it would be bytes in the
    size grammar, and a DRAM budget of a few bytes is never meant."""
    s = str(text).strip()
    if s.endswith("%"):
        try:
            pct = float(s[:-1])
        except ValueError:
            doubled = "; the % is doubled, as a printf format or Makefile writes it"
            raise ValueError(
                f"{what} {s!r}: not a percentage (N% with N a number, e.g. 20%"
                + (doubled if s.endswith("%%") else "") + ")"
            ) from None
        if not 0 <= pct <= 100:  # also NaN
            raise ValueError(f"{what} {s!r}: a percentage must be between 0% and 100%")
        return pct
    if s.isdigit() and int(s):
        raise ValueError(
            f"{what} {s!r}: a number needs a unit here: {s}% of the peak footprint, "
            f"or a size such as {s}M, {s}GiB ({s}B for bytes)"
        )
    v = _size(s)
    if v is None:
        raise ValueError(f"{what} {s!r}: expected {SHARE_GRAMMAR}; advisor/FORMATS.md \"Sizes\"")
    return v


def _option(check: Callable[[str], Any], name: str) -> Callable[[str], Any]:
    """An argparse type from check(text) -> value: its ValueError becomes
    argparse's one-line error (`argument --X: MESSAGE`)."""

    def convert(text: str):
        try:
            return check(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    convert.__name__ = name
    return convert


def _bounded(v: int, text: str, lo: int, hi: int, show) -> int:
    if not lo <= v <= hi:
        raise ValueError(f"{text!r}: must be between {show(lo)} and {show(hi)}")
    return v


def size_option(lo: int = 0, hi: int = 2**64 - 1, power_of_two: bool = False) -> Callable[[str], int]:
    """argparse type of a size option: parse_size, then lo <= v <= hi."""

    def show(n):
        return str(n) if n < 1024 else f"{n} ({format_size(n)})"

    def check(text):
        v = _size(text)
        if v is None:
            raise ValueError(f"{text!r}: {NOT_A_SIZE}")
        if power_of_two and v & (v - 1):
            raise ValueError(f"{text!r}: must be a power of two")
        return _bounded(v, text, lo, hi, show)

    return _option(check, "size")


def count_option(lo: int = 0, hi: int = 2**63 - 1) -> Callable[[str], int]:
    """argparse type of a count option (ways, depth, rows, a period): a
    whole number without a unit, lo <= v <= hi."""

    def check(text):
        if not re.fullmatch(r"[0-9]+", text.strip(), re.ASCII):
            raise ValueError(f"{text!r}: not a whole number")
        return _bounded(int(text), text, lo, hi, str)

    return _option(check, "count")


def share_option(what: str, extra: tuple[str, ...] = ()) -> Callable[[str], str]:
    """argparse type of a SIZE|N% option (parse_share), keeping the text (its
    meaning needs the footprint); the words in `extra` (e.g. `auto`) pass."""

    def check(text):
        if text.strip() in extra:
            return text.strip()
        try:
            parse_share(text, what)
        except ValueError as e:  # argparse names the option already
            raise ValueError(str(e).removeprefix(f"{what} ")) from None
        return text.strip()

    return _option(check, "share")



def format_size(n: float) -> str:
    """Bytes as the tool prints them (`512 B`, `32.0 MiB`); parse_size reads
    the printed form back (to its precision)."""
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"
