# SPDX-License-Identifier: MIT
"""Which compile_commands.json entry built the object that ended up in a
binary, for `tierwise rewrite -p` on sources compiled several times with
different flags (a framework building one app per graph type from one
file).

The binary's DWARF names each compile unit's file (DW_AT_name, relative to
DW_AT_comp_dir) and the compiler's flags (DW_AT_producer). GCC records the
code-generation flags there (-O, -std, -f, -m; -grecord-gcc-switches, its
default) but never -D, -U or -I; Clang records the whole command line only
with -grecord-command-line. So an entry is kept when its -O and -std (and
its -D/-U where the producer records them) agree with a compile unit of its
file, and, for a CMake build, when its object is in the binary's target
directory (CMakeFiles/<binary>.dir/), and, for a Makefile's, when its object
is named after the binary (pr-push.o) or is the binary. Where that still
leaves several entries, all are kept and tierwise-rewrite parses each,
whatever their order, reports where they disagree and rewrites the
allocations of each (a configuration that does not parse is named, and the
file rewritten from the others)."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from pathlib import Path
from typing import Any, Iterable

DWARFDUMP = ["llvm-dwarfdump-19", "/usr/lib/llvm-19/bin/llvm-dwarfdump", "llvm-dwarfdump"]


def compile_units(binary: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """[(source path, producer)] of the binary's compile units."""
    for tool in DWARFDUMP:
        try:
            out = subprocess.run(
                [tool, "--debug-info", "--recurse-depth=0", str(binary)],
                capture_output=True,
                text=True,
            ).stdout
            break
        except FileNotFoundError:
            continue
    else:
        return []
    units = []
    for block in out.split("DW_TAG_compile_unit")[1:]:
        attr = dict(re.findall(r'(DW_AT_\w+)\s+\("(.*)"\)', block))
        name, cdir = attr.get("DW_AT_name", ""), attr.get("DW_AT_comp_dir", "")
        if name:
            units.append((os.path.normpath(os.path.join(cdir, name)), attr.get("DW_AT_producer", "")))
    return units


def _args(entry):
    if "arguments" in entry:
        return list(entry["arguments"])
    return shlex.split(entry.get("command", ""))


def _file(entry):
    return os.path.normpath(os.path.join(entry.get("directory", ""), entry["file"]))


def defines(args: list[str]) -> set[str]:
    """The -D/-U flags of a command line, as a set of "-DNAME=V" / "-UNAME"."""
    out: set[str] = set()
    it = iter(args)
    for a in it:
        for flag in ("-D", "-U"):
            if a == flag:
                out.add(flag + next(it, ""))
            elif a.startswith(flag):
                out.add(a)
    return out


def _last(args, prefix, default=None):
    vals = [a for a in args if a.startswith(prefix)]
    return vals[-1] if vals else default


def _agrees(args, producer):
    """False when the producer's recorded flags contradict the command's."""
    p = producer.split()
    if _last(p, "-O") is not None and _last(p, "-O") != _last(args, "-O", "-O0"):
        return False
    if _last(p, "-std=") and _last(args, "-std=") and _last(p, "-std=") != _last(args, "-std="):
        return False
    # Clang with -grecord-command-line records -D/-U (as "-D NAME" too).
    if any(t in ("-D", "-U") or re.match(r"-[DU]\w", t) for t in p):
        if defines(p) != defines(args):
            return False
    return True


def _output(entry, args):
    if entry.get("output"):
        return entry["output"]
    return next((args[i + 1] for i, a in enumerate(args[:-1]) if a == "-o"), "")


def _object_of(entry, names, reals):
    """Whether the entry's output is the binary or named after it (its
    name up to the first dot, `pr-push.o`, `pr-push.c.o`)."""
    out = _output(entry, _args(entry))
    if not out:
        return False
    path = os.path.realpath(os.path.join(entry.get("directory", ""), out))
    return path in reals or Path(out).name.split(".", 1)[0] in names


def _describe(entry, others):
    """The flags that tell an entry apart from the others: its -O and the
    -D/-U flags not all of them have."""
    args = _args(entry)
    mine = defines(args)
    common = set.intersection(*[defines(_args(e)) for e in others]) if others else set()
    return " ".join([_last(args, "-O", "-O0")] + sorted(mine - common))


def select(
    db_entries: list[dict[str, Any]],
    files: Iterable[str],
    binaries: Iterable[str | os.PathLike[str]],
) -> tuple[list[dict[str, Any]], list[str]]:
    """(entries to keep, notes). Entries of FILES compiled more than once are
    narrowed to those whose object is in one of BINARIES, where the DWARF
    (or the CMake target directory) tells; the others are kept as they are."""
    units = [u for b in binaries for u in compile_units(b)]
    names = {Path(b).name for b in binaries}
    reals = {os.path.realpath(b) for b in binaries}
    wanted = {os.path.realpath(f) for f in files}
    by_file: dict[str, list] = {}
    for e in db_entries:
        by_file.setdefault(os.path.realpath(_file(e)), []).append(e)
    keep, notes = [], []
    for real, entries in by_file.items():
        if real not in wanted or len(entries) < 2:
            keep += entries
            continue
        producers = [p for path, p in units if os.path.realpath(path) == real]
        why: list[str] = []
        chosen = entries
        if producers:
            agree = [e for e in chosen if any(_agrees(_args(e), p) for p in producers)]
            if agree and len(agree) < len(chosen):
                chosen, why = agree, why + ["its flags agree with the binary's DW_AT_producer"]
        in_target = [
            e
            for e in chosen
            if any(f"/{n}.dir/" in "/" + _output(e, _args(e)) for n in names)
        ]
        if in_target and len(in_target) < len(chosen):
            chosen, why = in_target, why + ["its object is in the binary's CMake target directory"]
        # A Makefile's: the object named after the binary (pr-push.o for
        # pr-push), or the binary itself (compiled and linked in one step).
        own = [e for e in chosen if _object_of(e, names, reals)]
        if own and len(own) < len(chosen):
            chosen, why = own, why + ["its object is named after the binary"]
        base = Path(real).name
        if len(chosen) < len(entries):
            picked = "; ".join(_describe(e, entries) for e in chosen)
            notes.append(
                f"{base}: {len(entries)} compile commands; using the one built with "
                f"{picked} ({', '.join(why)})"
            )
        else:
            notes.append(
                f"{base}: {len(entries)} compile commands, and the binary does not tell which "
                f"built it ({'no compile unit of it in ' + ', '.join(sorted(names)) if not producers else 'its DW_AT_producer records no -D (GCC never does)'}): "
                f"tierwise-rewrite parses each and reports where they disagree"
            )
        keep += chosen
    return keep, notes


def filtered_database(
    build_dir: str,
    files: Iterable[str],
    binaries: Iterable[str | os.PathLike[str]],
    tmpdir: str | os.PathLike[str],
) -> tuple[str, list[str]]:
    """A directory with a compile_commands.json narrowed by select(), or
    BUILD_DIR itself when nothing was narrowed; and the notes."""
    path = Path(build_dir) / "compile_commands.json"
    try:
        entries = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return build_dir, []  # tierwise-rewrite says what is wrong with it
    keep, notes = select(entries, files, binaries)
    if len(keep) == len(entries):
        return build_dir, notes
    out = Path(tmpdir) / "compile_commands.json"
    out.write_text(json.dumps(keep, indent=1))
    return str(tmpdir), notes
