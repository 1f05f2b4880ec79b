# SPDX-License-Identifier: MIT
"""The `tierwise` command line: one sub-command per module in
tierwise/commands/. Each module provides `add_parser(subparsers)` (returning
its parser) and `run(args) -> int`.

Start-up: main() imports the module of the verb it runs and no other; the
top-level --help and --version import none (each verb's one-line help is in
VERBS), so `tierwise --help`, `--version` and `doctor` take no pandas
(issue 36: at most 150 ms, test/bench/cli_startup.py). The verbs in
FAST_VERBS wrap a user's program (`run`) or a compiler command line
(`config`), so they must add only milliseconds: their modules import the
standard library only (no pandas, numpy, matplotlib, pyelftools) and
build/bin/tierwise starts Python without `site` (-S) for them
(test/cli/run-startup.test, test/bench/run_startup.py)."""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys

from tierwise import __version__

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from types import ModuleType
    from typing import NoReturn, Sequence

# verb (a module in tierwise.commands) -> its line in --help, in the order
# --help lists them; each module's add_parser passes VERBS[verb] as help.
VERBS = {
    "profile": "profile an unmodified command",
    "advise": "choose which allocation sites go to DRAM under a budget",
    "run": "run a command with a placement applied",
    "simulate": "modelled time of a placement as the runtime applies it",
    "compare": "compare placements (baselines and advisor policies) across DRAM budgets",
    "compare-runs": "per site bytes per tier of two run reports (original and rebuilt)",
    "rewrite": "apply a placement as a source patch (Clang rewriter)",
    "report": "tables and plots of a profile",
    "doctor": "what this machine offers and what tierwise will use",
    "config": "print compiler/linker flags for libtierwise",
    "demo": "run the whole pipeline on a bundled example",
}
FAST_VERBS = ("run", "config")


class UserError(Exception):
    """An error the user can fix; printed as one `error: ...` line."""


class Parser(argparse.ArgumentParser):
    """argparse, with two changes: a bad argument is one line, `tierwise
    VERB: error: ...` and a pointer to --help (not the usage, which for
    `profile` is 15 lines above the error), and a value that starts with
    `-` and a digit (`--dram-budget -5%`) is a value, which the option's
    type then refuses with its reason (argparse took it for an option:
    "expected one argument")."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = re.compile(r"^-[0-9.]")

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def add_whole_sites(p: argparse.ArgumentParser) -> None:
    """--whole-sites, shared by the verbs that run the cost policy."""
    p.add_argument(
        "--whole-sites",
        action="store_true",
        help="place whole allocations only (no DRAM head for a large site)",
    )


def _load(verb: str) -> ModuleType | None:
    try:
        return importlib.import_module(f"tierwise.commands.{verb.replace('-', '_')}")
    except ModuleNotFoundError as e:
        if e.name == f"tierwise.commands.{verb}":
            return None
        raise


def build_parser(verbs: Sequence[str] = tuple(VERBS)) -> argparse.ArgumentParser:
    """The parser with the full sub-parsers of `verbs` (their modules
    imported) and a one-line entry for every other verb."""
    parser = Parser(
        prog="tierwise",
        description="Profiling-guided data placement for tiered memory: "
        "profile an unmodified program, choose which allocation sites go to "
        "DRAM under a budget, and apply the placement.",
    )
    parser.add_argument("--version", action="version", version=f"tierwise {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="VERB")
    for verb in VERBS:
        mod = _load(verb) if verb in verbs else None
        if mod is None:
            sub.add_parser(verb, help=VERBS[verb], add_help=False)
            continue
        p = mod.add_parser(sub)
        p.set_defaults(_run=mod.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv[:1] if argv[:1] and argv[0] in VERBS else ())
    if argv[:1] == ["run"] and "--" not in argv:
        # `tierwise run --placement P prog -x`: argparse takes -x for an
        # option of its own and printed the top-level usage
        args, extra = parser.parse_known_args(argv)
        if extra:
            print(
                f"tierwise run: error: unrecognized arguments: {' '.join(extra)}; "
                "put the command after `--`: tierwise run --placement P -- CMD ARGS...",
                file=sys.stderr,
            )
            return 2
    else:
        args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    try:
        rc = int(args._run(args) or 0)
        sys.stdout.flush()  # a closed pipe fails here, where it is handled
        return rc
    except (UserError, ValueError, FileNotFoundError, PermissionError) as e:
        print(f"tierwise {args.verb}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"tierwise {args.verb}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader of stdout went away (`| head`): stop quietly, as cat
        # does; point stdout at /dev/null so the exit-time flush cannot fail
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
