# SPDX-License-Identifier: MIT
"""`tierwise config`: print the flags that compile and link a program
against libtierwise (runtime/include/tierwise.h, build/lib/libtierwise.so;
PREFIX/include and PREFIX/lib when installed).
Standard library only (cli.FAST_VERBS): it runs inside compiler command
lines."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    import argparse
    from typing import Any

from tierwise.cli import UserError, VERBS
from tierwise.paths import artifact_path, include_path


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "config",
        help=VERBS["config"],
        description="Print the flags to compile (--cflags) and link (--libs) "
        "a program against libtierwise, e.g. "
        "cc prog.c $(tierwise config --cflags --libs); the --libs flags may "
        "come before the sources (libtierwise is linked --no-as-needed).",
    )
    p.add_argument("--cflags", action="store_true", help="include path of tierwise.h")
    p.add_argument("--libs", action="store_true", help="link flags for libtierwise.so")
    return p


def flags(cflags: bool = True, libs: bool = True) -> list[str]:
    out = []
    if cflags:
        out.append(f"-I{include_path()}")
    if libs:
        lib = os.path.dirname(artifact_path("lib/libtierwise.so"))
        # --push-state/--no-as-needed: under Debian's default --as-needed a
        # -ltierwise placed before the sources would be dropped as unneeded
        # (undefined tw_malloc); this keeps it wherever the user puts it.
        out += [
            f"-L{lib}",
            f"-Wl,-rpath,{lib}",
            "-Wl,--push-state,--no-as-needed",
            "-ltierwise",
            "-Wl,--pop-state",
        ]
    return out


def run(args: argparse.Namespace) -> int:
    if not (args.cflags or args.libs):
        raise UserError("say what to print: --cflags and/or --libs")
    print(" ".join(flags(args.cflags, args.libs)))
    return 0
