# SPDX-License-Identifier: MIT
"""Per-site bytes per tier of two run reports (`tierwise compare-runs`):
typically `tierwise run`'s report of the original program (its `sites`)
and the report of the program rebuilt from `tierwise rewrite`'s patch,
which lists each tierwise.h call under `unmatched` with `"api": true`
(advisor/FORMATS.md "Run report").

Entries are matched by symbolized location, not by stack: the two programs
are different binaries. An entry's key is its first DEPTH frames in user
files (inline frames expanded; tierwise.h's own frames left out), each
(function, file basename, line), the function without namespace, template
arguments, parameters, clone suffix or the `_tier` suffix a rewritten C
wrapper's variant has, consecutive frames of one function as one (GCC
inlines a function's outlined part back into it); enough callers to tell apart the sites that share a
wrapper's line. The second report's lines can be mapped back through the
patch (`patch_line_map`), so a line the patch moved still matches. Bytes of
entries with one key are summed. Pure functions; the verb is
commands/compare_runs.py."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from tierwise.symbolize import Symbolizer, short_function

Key = Tuple[Tuple[str, str, int], ...]
LineMap = Callable[[str, int], Optional[int]]


def base_function(func: str) -> str:
    """`void ns::f<T>(unsigned long) [clone .isra.0]` -> `f`; `g_tier` -> `g`:
    an inline frame names a function unqualified, the same one out of line
    qualified, and a wrapper that gained a tier parameter (C: a NAME_tier
    variant) is the same function."""
    name = short_function(func or "")
    depth, start, cut = 0, 0, len(name)
    for i, c in enumerate(name):
        if c == "<":
            depth += 1
            cut = min(cut, i) if depth == 1 and i > start else cut
        elif c == ">":
            depth -= 1
        elif depth == 0 and name.startswith("::", i):
            start, cut = i + 2, len(name)
    name = name[start:cut]
    return name[: -len("_tier")] if name.endswith("_tier") else name


def patch_line_map(text: str) -> LineMap:
    """(file basename, line in the patched file) -> its line before the
    patch, or None for a line the patch added; lines of files the patch does
    not touch map to themselves. A run of removed lines followed by as many
    added ones is a one-for-one replacement (a rewritten allocation)."""
    files: Dict[str, Tuple[Dict[int, Optional[int]], List[Tuple[int, int, int]]]] = {}
    pairs: Dict[int, Optional[int]] = {}
    hunks: List[Tuple[int, int, int]] = []  # (new start, new end, delta after)
    old = new = rem_old = rem_new = 0  # rem_*: lines left in the hunk
    minus: List[int] = []
    plus: List[int] = []

    def flush():
        for k, n in enumerate(plus):
            pairs[n] = minus[k] if len(minus) == len(plus) else None
        minus.clear()
        plus.clear()

    for line in text.splitlines():
        if rem_old or rem_new:  # inside a hunk: a line of the file
            if line.startswith("-"):
                if plus:
                    flush()
                minus.append(old)
                old, rem_old = old + 1, rem_old - 1
            elif line.startswith("+"):
                plus.append(new)
                new, rem_new = new + 1, rem_new - 1
            elif not line.startswith("\\"):  # "\ No newline at end of file"
                flush()
                pairs[new] = old
                old, new, rem_old, rem_new = old + 1, new + 1, rem_old - 1, rem_new - 1
            continue
        flush()
        if line.startswith("+++ "):
            pairs, hunks = {}, []
            files[os.path.basename(line[4:].split("\t")[0])] = (pairs, hunks)
            continue
        m = re.match(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", line)
        if m:
            old, new = int(m[1]), int(m[3])
            rem_old = int(m[2]) if m[2] is not None else 1
            rem_new = int(m[4]) if m[4] is not None else 1
            hunks.append((new, new + rem_new, (new + rem_new) - (old + rem_old)))
    flush()

    def lookup(base: str, line: int) -> Optional[int]:
        if base not in files:
            return line
        p, hs = files[base]
        if line in p:
            return p[line]
        delta = 0
        for start, end, after in hs:
            if start <= line < end:
                return None
            if line >= end:
                delta = after
        return line - delta

    return lookup


def site_key(
    sym: Symbolizer, stack: str, depth: int = 3, lines: Optional[LineMap] = None
) -> Key:
    """A stack's first `depth` user frames (see the module docstring), lines
    mapped by `lines` (an unmapped line stays, marked negative)."""
    out = []
    last = None
    for func, file, line in sym.user_frames(stack):
        base = os.path.basename(file)
        if base == "tierwise.h" or (func, file) == last:
            continue  # tierwise.h's; GCC's function inlined into itself
        last = (func, file)
        name = base_function(func)
        if lines is not None:
            mapped = lines(base, line)
            line = mapped if mapped is not None else -line
        out.append((name, base, line))
        if len(out) == depth:
            break
    return tuple(out)


def bytes_by_site(
    report: dict, sym: Symbolizer, depth: int = 3, lines: Optional[LineMap] = None
) -> Dict[Key, Dict[str, int]]:
    """Key -> bytes per tier (zeros left out) over the report's `sites`
    (`bytes`) and `unmatched` entries (`tier_bytes`)."""
    entries = [(s["stack"], s.get("bytes") or {}) for s in report.get("sites", [])]
    entries += [(u["stack"], u.get("tier_bytes") or {}) for u in report.get("unmatched", [])]
    sym.resolve(f for stack, _ in entries for f in stack.split(";") if f)
    acc: Dict[Key, Dict[str, int]] = {}
    for stack, per_tier in entries:
        d = acc.setdefault(site_key(sym, stack, depth, lines), {})
        for tier, n in per_tier.items():
            d[tier] = d.get(tier, 0) + int(n)
    return {k: {t: n for t, n in d.items() if n} for k, d in acc.items()}


@dataclass
class Row:
    key: Key
    a: Dict[str, int]
    b: Dict[str, int]

    @property
    def placed(self) -> bool:
        """Either run put bytes here outside DRAM."""
        return any(t != "dram" for t in (*self.a, *self.b))

    @property
    def same(self) -> bool:
        return self.a == self.b

    def location(self) -> str:
        if not self.key:
            return "(no user frame)"
        (func, file, line), callers = self.key[0], self.key[1:]
        return f"{func} {file}:{line}" + "".join(f" <- {f}:{n}" for _, f, n in callers)


def compare(a: Dict[Key, Dict[str, int]], b: Dict[Key, Dict[str, int]]) -> List[Row]:
    """One row per key of either side, placed rows first, then by bytes."""
    rows = [Row(k, a.get(k, {}), b.get(k, {})) for k in {**a, **b}]
    rows.sort(key=lambda r: (not r.placed, -sum(r.a.values()) - sum(r.b.values()), r.location()))
    return rows


def modules_for(report: dict, binaries: Sequence[str]) -> Dict[str, str]:
    """{module basename: path} to symbolize a report with: the BINARIES
    (files, or directories of modules), else the report's command's program."""
    found: Dict[str, str] = {}
    paths = list(binaries)
    if not paths:
        cmd = report.get("command")
        prog = (cmd.split()[0] if isinstance(cmd, str) else (cmd or [""])[0]) if cmd else ""
        paths = [prog] if prog else []
    for p in paths:
        if os.path.isdir(p):
            for name in os.listdir(p):
                full = os.path.join(p, name)
                if os.path.isfile(full):
                    found.setdefault(name, os.path.realpath(full))
        elif os.path.isfile(p):
            found.setdefault(os.path.basename(p), os.path.realpath(p))
    return found
