# SPDX-License-Identifier: MIT
"""The profiling backends, a module each (sim, pmu, alloc: pipeline.BACKENDS),
and the options more than one of them takes, defined here once."""

from __future__ import annotations

from typing import Any

from tierwise.sizes import size_option

OBJECTS_MIN = size_option(0, 1 << 62)


def add_objects_min(group: Any) -> None:
    """--objects-min-bytes (sim and alloc; --objects-min, alloc's old name,
    still read), added once to a parser that holds both backends' options."""
    if "--objects-min-bytes" in group._option_string_actions:
        return
    group.add_argument(
        "--objects-min-bytes",
        "--objects-min",
        type=OBJECTS_MIN,
        default=4096,
        metavar="SIZE",
        help="objects.csv lists allocations of at least SIZE bytes (sim and alloc "
        "backends; default 4096)",
    )
