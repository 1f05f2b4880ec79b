# SPDX-License-Identifier: MIT
"""Offline symbolization of site frames (`module+0xoffset`, advisor/FORMATS.md)
with binutils addr2line, batched per module: one addr2line process per
module for all its frames. `inline_chain()` gives the rewriter every inlined
frame; `location()` the innermost user frame as `function file:line`."""

import re
import shutil
import subprocess
from pathlib import Path

FRAME_RE = re.compile(r"^(?P<module>.+)\+0x(?P<offset>[0-9a-f]+)$")
# Source files of the toolchain and libraries, not the user's code: a
# location names the innermost frame outside these.
SYSTEM_PREFIXES = ("/usr/include/", "/usr/lib/gcc/", "/usr/lib/llvm", "/usr/src/")


def parse_frame(frame):
    """`bfs+0x1a2b` -> ("bfs", 0x1a2b); None for `[anon]` or malformed."""
    m = FRAME_RE.match(frame)
    if not m or m["module"].startswith("["):
        return None
    return m["module"], int(m["offset"], 16)


class Symbolizer:
    """Resolves frames of modules whose paths it is given; caches results.
    `modules`: {basename: path}."""

    def __init__(self, modules, addr2line=None):
        self.modules = dict(modules)
        self.addr2line = addr2line or shutil.which("addr2line") or "addr2line"
        self.cache = {}

    def resolve(self, frames):
        """Symbolize `frames` (strings) in one addr2line run per module."""
        todo = {}
        for f in set(frames):
            if f in self.cache:
                continue
            p = parse_frame(f)
            path = self.modules.get(p[0]) if p else None
            if not p or not path or not Path(path).is_file():
                self.cache[f] = []
                continue
            todo.setdefault(path, []).append((f, p[1]))
        for path, items in todo.items():
            for (f, _), chain in zip(items, self._run(path, [o for _, o in items])):
                self.cache[f] = chain

    def _run(self, path, offsets):
        cmd = [self.addr2line, "-a", "-f", "-i", "-C", "-e", str(path)]
        try:
            out = subprocess.run(
                cmd,
                input="".join(f"0x{o:x}\n" for o in offsets),
                capture_output=True,
                text=True,
                check=False,
                timeout=600,
            ).stdout
        except (OSError, subprocess.TimeoutExpired):
            return [[] for _ in offsets]
        chains, cur = [], None
        lines = out.splitlines()
        i = 0
        while i < len(lines):
            if re.fullmatch(r"0x[0-9a-f]+", lines[i]):
                cur = []
                chains.append(cur)
                i += 1
                continue
            func = lines[i]
            fileline = lines[i + 1] if i + 1 < len(lines) else "??:0"
            i += 2
            file, _, line = fileline.rpartition(":")
            line = line.split(" ")[0]
            if cur is not None and not (func == "??" and file in ("??", "")):
                cur.append((func, file, int(line) if line.isdigit() else 0))
        chains += [[] for _ in range(len(offsets) - len(chains))]
        return chains[: len(offsets)]

    def inline_chain(self, frame):
        """[(function, file, line), ...] innermost first: the inlined
        functions at `frame`, then the function that contains them."""
        self.resolve([frame])
        return self.cache.get(frame, [])

    def location(self, stack):
        """Innermost user frame of `stack` as `function file:line`: the first
        inlined or real frame whose file is not a toolchain/system header;
        else the innermost resolved frame; else, for frames in stripped
        libraries (no line table), the innermost named function as
        `function MODULE` (e.g. `GB_malloc_memory libgraphblas.so.7.4.0`);
        "" if nothing resolves."""
        frames = [f for f in stack.split(";") if f]
        self.resolve(frames)
        first = named = None
        for f in frames:
            for func, file, line in self.cache.get(f, []):
                if file in ("??", "") or line == 0:
                    if not named and func not in ("??", ""):
                        named = f"{func} {parse_frame(f)[0]}"
                    continue
                entry = f"{func} {file}:{line}"
                first = first or entry
                if not file.startswith(SYSTEM_PREFIXES):
                    return entry
        return first or named or ""
