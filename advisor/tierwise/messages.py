# SPDX-License-Identifier: MIT
"""Wording shared by the CLI's messages: a list in a warning or note names a
few items and counts the rest, so a job of 800 processes or a program of 300
modules still gets one readable line (issue 36: a warning line of 6,102
characters). Standard library only (imported by `tierwise run`'s summary)."""

from typing import Iterable

MOST = 4  # items a message names


def listed(items: Iterable[str], most: int = MOST, sep: str = "; ", unique: bool = True) -> str:
    """The first `most` of `items` joined by `sep`, then "and N more";
    unique: duplicates dropped first (False where equal items are distinct
    things, as two processes of one program with the same count)."""
    items = list(dict.fromkeys(items)) if unique else list(items)
    more = f" and {len(items) - most} more" if len(items) > most else ""
    return sep.join(items[:most]) + more
