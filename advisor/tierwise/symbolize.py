# SPDX-License-Identifier: MIT
"""Offline symbolization of site frames (`module+0xoffset`, advisor/FORMATS.md)
with llvm-symbolizer (JSON output), batched per module: one process per
module for all its frames. The one symbolizer of tierwise: `frames()` gives
each frame's inline chain with columns (placement.json `frames`, for
`tierwise rewrite`); `locations()` each site's location for the profile:
the frame that tells it apart from the other sites (through a shared
wrapper, macro-free allocation helper or container constructor), `function
file:line (via innermost-file:line)`; `short_location()` the form tables
print. `build_id()` is the one reader of a module's build-id."""

import json
import os
import re
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple

from tierwise.progress import Progress

# llvm-symbolizer of the LLVM the rewriter is built with (Debian llvm-19).
LLVM_SYMBOLIZER = ("llvm-symbolizer-19", "/usr/lib/llvm-19/bin/llvm-symbolizer", "llvm-symbolizer")
# GCC's clone suffixes, as the symbol table has them (f.isra.0, f.part.1,
# demangled `f(int) (.constprop.0)`): a location names the source function.
CLONE_RE = re.compile(r"( \((\.(isra|part|constprop|cold|lto_priv|localalias)(\.\d+)?)+\))+$"
                      r"|(\.(isra|part|constprop|cold|lto_priv|localalias)(\.\d+)?)+$")

def build_id(path: "os.PathLike[str] | str") -> str:
    """The GNU build-id of the ELF file at `path` (lowercase hex), or ""
    (not ELF, no build-id note, gone). The one build-id reader of the
    advisor (pyelftools); `tierwise run` does without (preload.py)."""
    try:
        from elftools.elf.elffile import ELFFile
        from elftools.elf.sections import NoteSection

        with open(path, "rb") as f:
            elf = ELFFile(f)
            for sec in elf.iter_sections():
                if not isinstance(sec, NoteSection):  # SHT_NOTE
                    continue
                for note in sec.iter_notes():
                    if note["n_type"] == "NT_GNU_BUILD_ID":
                        return str(note["n_desc"]).lower()
    except Exception:  # not ELF (ELFError), unreadable, gone
        return ""
    return ""


FRAME_RE = re.compile(r"^(?P<module>.+)\+0x(?P<offset>[0-9a-f]+)$")
# Source files of the toolchain and libraries, not the user's code: a
# location names the innermost frame outside these.
SYSTEM_PREFIXES = ("/usr/include/", "/usr/lib/gcc/", "/usr/lib/llvm", "/usr/src/")


def parse_frame(frame: str) -> Optional[Tuple[str, int]]:
    """`bfs+0x1a2b` -> ("bfs", 0x1a2b); None for `[anon]` or malformed."""
    m = FRAME_RE.match(frame)
    if not m or m["module"].startswith("["):
        return None
    return m["module"], int(m["offset"], 16)


def find_llvm_symbolizer() -> Optional[str]:
    """The llvm-symbolizer to run, or None when none is installed."""
    for s in LLVM_SYMBOLIZER:
        if shutil.which(s) or os.access(s, os.X_OK):
            return s
    return None


# One resolved frame: (function, file, line, column); "" / 0 where unknown.
Frame = Tuple[str, str, int, int]


class _Node:
    """A node of _outer_frame's trie: a file:line sequence's prefix."""

    __slots__ = ("children", "ends", "first")

    def __init__(self, first: int) -> None:
        self.children: Dict[Tuple[str, int], "_Node"] = {}
        self.ends: List[int] = []  # sites whose sequence ends here
        self.first = first  # the order of the first site through here


class Symbolizer:
    """Resolves frames of modules whose paths it is given; caches results.
    `modules`: {basename: path}. Without an llvm-symbolizer every frame
    resolves to nothing (locations stay empty). `known`: what is already
    resolved, {(module path, offset): chain}, filled as frames resolve; the
    symbolizers of a program and of its child processes share one, so the
    libraries they share are symbolized once."""

    def __init__(
        self,
        modules: Dict[str, str],
        tool: Optional[str] = None,
        known: Optional[Dict[Tuple[str, int], List[Frame]]] = None,
    ) -> None:
        self.modules = dict(modules)
        self.tool = tool or find_llvm_symbolizer()
        self.cache: Dict[str, List[Frame]] = {}
        self.known = {} if known is None else known

    def resolve(self, frames: Iterable[str], progress: Optional[Progress] = None) -> None:
        """Symbolize `frames` (strings) in one llvm-symbolizer run, whatever
        their modules (a run per module took 25 ms each: 1.6 s for the 60
        libraries of an Open MPI program, 0.1 s in one run); `progress`
        counts the frames done."""
        todo: List[Tuple[str, str, int]] = []  # (frame, module path, offset)
        for f in set(frames):
            if f in self.cache:
                continue
            p = parse_frame(f)
            path = self.modules.get(p[0]) if p else None
            if p and path and (path, p[1]) in self.known:
                self.cache[f] = self.known[(path, p[1])]
            elif not p or not path or not Path(path).is_file():
                self.cache[f] = []
            else:
                todo.append((f, path, p[1]))
        if not todo:
            return
        todo.sort(key=lambda t: t[1:])
        if progress:
            progress.doing("symbolizing frames", len(todo))
        # a path the input line cannot quote: a run of its own (--obj)
        odd = {path for _, path, _ in todo if '"' in path or "\n" in path}
        runs: List[Tuple[Optional[str], List[Tuple[str, str, int]]]] = [
            (None, [t for t in todo if t[1] not in odd])
        ]
        runs += [(path, [t for t in todo if t[1] == path]) for path in sorted(odd)]
        for obj, items in runs:
            chains = self._run([(path, off) for _, path, off in items], obj, progress)
            for (f, path, off), chain in zip(items, chains):
                self.cache[f] = self.known[(path, off)] = chain

    def _run(
        self, items: List[Tuple[str, int]], obj: Optional[str], progress: Optional[Progress]
    ) -> List[List[Frame]]:
        """The inline chain of each (module path, offset) of `items` from
        one llvm-symbolizer process, which reads `"PATH" 0xOFFSET` lines (or
        `0xOFFSET` of module `obj`) and answers one JSON line each, read as
        they come for `progress`; [] for each it does not answer."""
        if not self.tool or not items:
            return [[] for _ in items]
        cmd = [self.tool, "--output-style=JSON", "--demangle", "--inlines"]
        lines = [f"0x{o:x}\n" if obj else f'"{p}" 0x{o:x}\n' for p, o in items]
        try:
            proc = subprocess.Popen(
                cmd + (["--obj", obj] if obj else []), stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            )
        except OSError:
            return [[] for _ in items]

        def feed() -> None:
            try:
                assert proc.stdin is not None
                proc.stdin.write("".join(lines))
                proc.stdin.close()
            except OSError:  # it ended early
                pass

        threading.Thread(target=feed, daemon=True).start()
        timer = threading.Timer(600, proc.kill)  # a hung symbolizer
        timer.start()
        entries: List[dict] = []
        try:
            assert proc.stdout is not None
            for line in proc.stdout:  # one JSON object per input line
                if line.strip():
                    got = json.loads(line)
                    entries += got if isinstance(got, list) else [got]
                    if progress:
                        progress.done += 1
        except ValueError:  # not JSON: keep the answers before it
            proc.kill()
        finally:
            timer.cancel()
            proc.wait()
        chains = []
        for entry in entries[: len(items)]:
            chain = []
            for y in entry.get("Symbol", []) if isinstance(entry, dict) else []:
                func = CLONE_RE.sub("", str(y.get("FunctionName") or ""))
                file = str(y.get("FileName") or "")
                if func in ("", "??") and file in ("", "??"):
                    continue
                chain.append((func, file, int(y.get("Line") or 0), int(y.get("Column") or 0)))
            chains.append(chain)
        return chains + [[] for _ in range(len(items) - len(chains))]

    def inline_chain(self, frame: str) -> List[Tuple[str, str, int]]:
        """[(function, file, line), ...] innermost first: the inlined
        functions at `frame`, then the function that contains them."""
        self.resolve([frame])
        return [f[:3] for f in self.cache.get(frame, [])]

    def frames(self, stack: str) -> List[dict]:
        """The symbolized `stack`, innermost first with inline frames
        expanded, as placement.json `frames` (FORMATS.md): function, file,
        line, column and `inlined` (inlined into the next frame); a frame
        that does not resolve is `{"function": "??", "file": "", "line": 0}`."""
        frames = [f for f in stack.split(";") if f]
        self.resolve(frames)
        out: List[dict] = []
        for f in frames:
            chain = self.cache.get(f, [])
            out += [
                {"function": func or "??", "file": file, "line": line, "column": col,
                 "inlined": i + 1 < len(chain)}
                for i, (func, file, line, col) in enumerate(chain)
            ] or [{"function": "??", "file": "", "line": 0}]
        return out

    def _chain(self, stack):
        """(user frames, fallback) of `stack`: the resolved frames with a
        line outside the toolchain/system headers, innermost first, inlined
        ones included, as (function, file, line); fallback is the location
        when there is none: the innermost resolved frame, else for frames in
        stripped libraries (no line table) the innermost named function as
        `function MODULE` (e.g. `GB_malloc_memory libgraphblas.so.7.4.0`),
        else ""."""
        frames = [f for f in stack.split(";") if f]
        self.resolve(frames)
        user, first, named = [], None, None
        for f in frames:
            for func, file, line, _ in self.cache.get(f, []):
                if file in ("??", "") or line == 0:
                    if not named and func not in ("??", ""):
                        pf = parse_frame(f)  # resolved: it parsed
                        named = f"{func} {pf[0] if pf else f}"
                    continue
                first = first or f"{func} {file}:{line}"
                if not file.startswith(SYSTEM_PREFIXES):
                    user.append((func, file, line))
        return user, first or named or ""

    def user_frames(self, stack: str) -> List[Tuple[str, str, int]]:
        """The frames of `stack` in user files (not the toolchain's or the
        system's headers), innermost first, inline frames included, as
        (function, file, line)."""
        return self._chain(stack)[0]

    def _entries(self, stack: str) -> List[Tuple[str, int, int, str]]:
        """Every frame of `stack` innermost first, inlined ones included, as
        (file, line, column, raw frame); a frame that does not resolve to a
        line is (raw frame, 0, 0, raw frame)."""
        out: List[Tuple[str, int, int, str]] = []
        for f in (f for f in stack.split(";") if f):
            chain = [(file, line, col) for _, file, line, col in self.cache.get(f, [])
                     if file not in ("??", "") and line]
            out += [(file, line, col, f) for file, line, col in chain] or [(f, 0, 0, f)]
        return out

    def _outer_frame(self, stacks: List[str], group: List[int]) -> Dict[int, str]:
        """For sites `group` (indices into `stacks`) whose locations print
        alike: per site the outer frames that tell it from each other one,
        ` <- FILE:LINE` (basename) each, innermost first: where two stacks
        first differ in file:line; where they differ only in the call
        instruction (two calls on one line, a macro's expansion), the
        column where that tells them apart, else the line and `#K`, the
        K-th of the calls on that line in address order. Each other site
        gives one frame; where several give one at the same depth, the
        first in `group` says how it is written.

        Linear in the group's frames (groups of thousands: Open MPI's
        sites through mca_base_var_register): a trie of the sites'
        file:line sequences finds, per depth of a site, whether another site
        parts from it there and the first that does; only sites alike in
        every file:line (calls on one line: few) are compared pairwise."""
        ent = {i: self._entries(stacks[i]) for i in group}
        order = {i: n for n, i in enumerate(group)}
        root = _Node(0)
        paths: Dict[int, List[_Node]] = {}
        for i in group:  # in group order: a node's first site is its earliest
            node, path = root, [root]
            for file, line, _, _ in ent[i]:
                child = node.children.get((file, line))
                if child is None:
                    child = node.children[(file, line)] = _Node(order[i])
                node = child
                path.append(node)
            node.ends.append(i)
            paths[i] = path
        calls: Dict[Tuple[int, str, int], List[str]] = {}
        out = {}
        for a in group:
            ea, path = ent[a], paths[a]
            best: Dict[int, Tuple[int, str]] = {}  # depth -> (first site's order, token)
            for j in range(len(ea)):
                # sites sharing a's first j file:lines that end there or go
                # on elsewhere (children in order of their first site)
                node, first = path[j], len(group)
                if node.ends:
                    first = order[node.ends[0]]
                for child in node.children.values():
                    if child is not path[j + 1]:
                        first = min(first, child.first)
                        break
                if first < len(group):
                    best[j] = (first, f"{os.path.basename(ea[j][0])}:{ea[j][1]}")
            for b in path[-1].ends:  # alike in every file:line
                if b == a or stacks[b] == stacks[a]:
                    continue
                k, token = self._call_token(ea, ent[b], group, ent, calls)
                if k not in best or order[b] < best[k][0]:
                    best[k] = (order[b], token)
            out[a] = "".join(f" <- {t}" for _, (_, t) in sorted(best.items()))
        return out

    @staticmethod
    def _call_token(ea, eb, group, ent, calls):
        """(depth, token) that tells entries `ea` from `eb`, alike in every
        file:line: the first raw frame that differs, then the column where
        one of its lines differs, else its outermost line (the call's) and
        `#K`; `calls` caches the calls per (depth, file, line) of the group
        in address order."""
        j = next(k for k, (x, y) in enumerate(zip(ea, eb)) if x[3] != y[3])
        same = [k for k in range(j, len(ea)) if ea[k][3] == ea[j][3]]
        col = next((k for k in same if ea[k][2] != eb[k][2]), None)
        if col is not None:
            file, line, c, _ = ea[col]
            return col, f"{os.path.basename(file)}:{line}:{c}"
        k = same[-1]  # the frame's outermost line: the call's
        if not calls:
            raws: Dict[Tuple[int, str, int], set] = {}
            for i in group:
                for d, (file, line, _, raw) in enumerate(ent[i]):
                    raws.setdefault((d, file, line), set()).add(raw)
            calls.update({key: sorted(r, key=_frame_order) for key, r in raws.items()})
        at = calls[(k, ea[k][0], ea[k][1])]
        return k, f"{os.path.basename(ea[k][0])}:{ea[k][1]} #{at.index(ea[k][3]) + 1}"

    def locations(self, stacks: List[str], progress: Optional[Progress] = None) -> List[str]:
        """The location of each of `stacks` (one site each), told apart from
        the others: the first user frame (inlined ones included) that no
        other of these sites has, `function file:line`, followed by
        ` (via FILE:LINE)` (basename) of the innermost user frame when that
        is shared (a wrapper, an inlined helper, a container's constructor),
        e.g. `Compute<V>(...) /src/pagerank.cc:45 (via array.h:18)`. Frames
        in the innermost frame's own file (a container constructor that
        delegates to another) give way to a caller outside it that tells the
        site apart as well. A site with no frame of its own gets the frame
        that the fewest others share, or its innermost user frame
        (`function file:line`, as a site whose innermost frame is its own);
        "" if nothing resolves. Sites whose locations would still print
        alike (short_location()) get the outer frame that tells them apart,
        ` <- FILE:LINE` (_outer_frame()), e.g. `buffer<float>::buffer
        segment.h:185 <- spmv.cc:40`. `progress` says how many sites of how
        many are located."""
        self.resolve([f for st in stacks for f in st.split(";") if f], progress)
        if progress:
            progress.doing("locating sites", len(stacks))
        chains = []
        for st in stacks:
            chains.append(self._chain(st))
            if progress:
                progress.done += 1
        count: Dict[Tuple[str, int], int] = {}
        for user, _ in chains:
            for fr in {(file, line) for _, file, line in user}:
                count[fr] = count.get(fr, 0) + 1
        out = []
        for user, fallback in chains:
            if not user:
                out.append(fallback)
                continue
            n = [count[(file, line)] for _, file, line in user]
            best = n.index(min(n))
            outside = [k for k in range(1, len(user)) if user[k][1] != user[0][1] and n[k] < n[0]]
            if user[best][1] == user[0][1] and outside:
                best = min(outside, key=lambda k: (n[k], k))
            func, file, line = user[best]
            loc = f"{func} {file}:{line}"
            if best > 0 and n[best] < n[0]:
                loc += f" (via {os.path.basename(user[0][1])}:{user[0][2]})"
            else:
                loc = "{} {}:{}".format(*user[0])
            out.append(loc)
        alike: Dict[str, List[int]] = {}
        for i, loc in enumerate(out):
            if loc:
                alike.setdefault(short_location(loc), []).append(i)
        if progress:
            progress.doing("telling alike sites apart", len(stacks))
        for group in alike.values():
            if len({stacks[i] for i in group}) > 1:
                for i, outer in self._outer_frame(stacks, group).items():
                    out[i] += outer
            if progress:
                progress.done += len(group)
        return out

    def location(self, stack: str) -> str:
        """The location of one site on its own: its innermost user frame
        (see locations())."""
        return self.locations([stack])[0]


def _frame_order(frame: str) -> Tuple[str, int]:
    """Sort key of a raw frame: module, then offset."""
    p = parse_frame(frame)
    return p if p else (frame, 0)


# ` (via FILE:LINE)`, then the outer frames that tell alike sites apart
VIA_RE = re.compile(r" \(via (?P<via>[^()]*)\)$")
OUTER_RE = re.compile(r"(?: <- \S+(?: #\d+)?)+$")


def split_location(loc: str) -> Optional[Tuple[str, str, Optional[str]]]:
    """(function, file:line, tail) of `function file:line[ (via X)][ <- Y...]`,
    tail the ` (via X)` and ` <- Y` parts (""); None for other strings."""
    m = OUTER_RE.search(loc)
    head, outer = (loc[: m.start()], m.group(0)) if m else (loc, "")
    m = VIA_RE.search(head)
    via = m.group(0) if m else ""
    head = head[: m.start()] if m else head
    func, sep, where = head.rpartition(" ")
    if not sep or not func or ":" not in where:
        return None
    return func, where, via + outer


def short_location(loc: str) -> str:
    """The form of a location tables print: the function without its
    return type, parameters and clone suffix, the file's basename, the
    `(via ...)` and ` <- ...` parts, e.g. `Compute<fwlike::AsymmetricVertex>
    pagerank.cc:45 (via array.h:18)`. Strings that are not `function
    file:line` (a bare `module+0xoffset`, a pseudo-site) come back as they
    are."""
    parts = split_location(str(loc))
    if not parts:
        return str(loc)
    func, where, tail = parts
    return f"{short_function(func)} {os.path.basename(where)}{tail}"


def innermost_line(loc: str) -> str:
    """`file:line` of the innermost user frame of a location (where the
    allocation call is): the `(via X)` part when there is one, else the
    location's own file:line; the string's last word for other forms."""
    parts = split_location(str(loc))
    if not parts:
        return str(loc).split()[-1] if str(loc).split() else ""
    _, where, tail = parts
    m = VIA_RE.search(OUTER_RE.sub("", tail)) if tail else None
    return m.group("via") if m else where


def short_function(func: str) -> str:
    """`void ns::f<T>(int, long) [clone .isra.0]` -> `ns::f<T>`: drops the
    clone suffix (also an OpenMP outlined body's, `f(int) (._omp_fn.0)`), the
    parameter list and a return type."""
    func = re.sub(r" \[clone [^\]]*\]$| \((\.[A-Za-z_]+\.\d+)+\)$", "", func.strip())
    if func.endswith(")"):
        depth = 0
        for i in range(len(func) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(func[i], 0)
            if depth == 0:
                # `operator()` keeps its own parentheses
                if not func[:i].endswith("operator"):
                    func = func[:i]
                break
    depth = 0
    for i, c in enumerate(func):  # a return type ends at a space outside <>
        depth += {"<": 1, ">": -1}.get(c, 0)
        if c == " " and depth == 0 and not func[:i].endswith("operator"):
            return short_function(func[i + 1 :]) if i + 1 < len(func) else func
    return func


def _template_groups(func: str) -> Optional[List[Tuple[int, int]]]:
    """(start, end) of the contents of each outermost `<...>` of a
    function name; None if its brackets do not balance (`operator<`)."""
    groups, depth, start = [], 0, 0
    for i, c in enumerate(func):
        if c == "<":
            depth += 1
            start = i + 1 if depth == 1 else start
        elif c == ">" and not func[:i].endswith("-"):
            depth -= 1
            if depth < 0:
                return None
            if depth == 0:
                groups.append((start, i))
    return groups if depth == 0 else None


def _balanced_head(text: str) -> str:
    """The longest start of `text` (a cut template argument list) that
    leaves no `<` open: cut before the first one still open."""
    opened: List[int] = []
    for i, c in enumerate(text):
        if c == "<":
            opened.append(i)
        elif c == ">" and opened:
            opened.pop()
    return text[: opened[0]] if opened else text


def cut_function(func: str, room: int) -> str:
    """`func` (a short_function() name) in at most `room` characters where
    possible, never losing the function's own name: first the longest
    template argument list is cut in its middle (`Compute<fwlike::Asym...>`,
    down to `<...>`, then the next longest), then leading qualifiers give
    way (`...::build`); a name that still does not fit comes back whole."""
    while len(func) > room:
        groups = _template_groups(func)
        groups = [g for g in groups or [] if func[g[0] : g[1]] != "..."]
        if not groups:
            break
        a, b = max(groups, key=lambda g: g[1] - g[0])
        keep = max(0, (b - a) - (len(func) - room) - 3)
        func = func[:a] + _balanced_head(func[a:b][:keep]).rstrip(" ,") + "..." + func[b:]
    if len(func) > room and _template_groups(func) is not None:
        parts, depth, last = [], 0, 0
        for i, c in enumerate(func):
            depth += {"<": 1, ">": -1}.get(c, 0)
            if depth == 0 and func[i : i + 2] == "::":
                parts.append(func[last:i])
                last = i + 2
        parts.append(func[last:])
        forms = ["::".join(parts[k:]) if k == 0 else "...::" + "::".join(parts[k:])
                 for k in range(len(parts))]
        func = next((f for f in forms if len(f) <= room), parts[-1])
    return func


def fit_location(loc: str, width: int) -> str:
    """short_location(loc) in at most `width` characters where possible,
    cutting only the function name (cut_function(): inside its template
    arguments, then its qualifiers, never its own name): the file:line and
    the `(via ...)` and ` <- ...` parts are what tell sites apart, and stay
    whole. The one place a location is fitted to a table."""
    text = short_location(loc)
    parts = split_location(text)
    if len(text) <= width or not parts:
        return text
    func, where, tail = parts
    rest = f"{where}{tail}"
    return f"{cut_function(func, width - len(rest) - 1)} {rest}"
