# SPDX-License-Identifier: MIT
"""`--roi FUNC` by any name the user has: which functions of a program (and
of the libraries it links, DT_NEEDED) a name means, found before the run.

A name may be plain (`Compute`), qualified (`fwlike::Array<int>::Array`), a
template instance (`Compute<SymmetricVertex>`, template arguments with or
without their namespaces), prefixed with a return type
(`void Compute<SymmetricVertex>`), followed by its parameters, or mangled
(`_Z7ComputeIN6fwlike15SymmetricVertexEEvRNS0_5GraphIT_EE7Options`). A name
without template arguments means every instance of the template; GCC's
clones of a function (`.isra.0`, `.constprop.0`, `.part.0`) are the
function, its cold parts and OpenMP outlined bodies (`.cold`, `._omp_fn.N`)
are not entries. The sim tool then matches the symbols found, by their
mangled names (`--roi=symbols:NAME,...` with `--demangle=no`), so what it
enters is exactly what `resolve()` reported."""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

from tierwise.symbolize import short_function

# GCC clone suffixes of a symbol: the same function (kept) or a part of it
# that is not its entry (dropped).
CLONE_RE = re.compile(r"((?:\.(?:isra|constprop|part|lto_priv|localalias)\.\d+)+)$")
NOT_ENTRY_RE = re.compile(r"\.cold(\.\d+)?$|\._omp_fn\.\d+|\._omp_cpyfn\.\d+")
DEFAULT_LIB_DIRS = (
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/lib64",
    "/usr/lib64",
    "/lib",
    "/usr/lib",
    "/usr/local/lib",
)
# Programs that run the named program (their arguments say which): the
# check looks at that program instead.
LAUNCHERS = {"env", "nice", "nohup", "taskset", "numactl", "time", "stdbuf", "chrt", "setarch"}


@dataclass
class Symbol:
    module: str  # basename of the ELF file
    path: str
    name: str  # as in the symbol table (mangled, with clone suffix)
    demangled: str


@dataclass
class Resolution:
    spec: str
    program: str = ""
    searched: list = field(default_factory=list)  # ELF files looked at
    symbols: list = field(default_factory=list)  # matched Symbol
    aliases: list = field(default_factory=list)  # other names at their addresses
    near: list = field(default_factory=list)  # similar names, for the error

    def tool_arg(self) -> str:
        """The sim tool's --roi value: the mangled names, aliases included."""
        return "symbols:" + ",".join(sorted({s.name for s in self.symbols} | set(self.aliases)))

    def describe(self) -> str:
        by_mod: dict[str, list[str]] = {}
        for s in self.symbols:
            by_mod.setdefault(s.module, []).append(s.demangled)
        return "; ".join(f"{', '.join(sorted(set(v)))} in {m}" for m, v in by_mod.items())


def program_of(
    cmd: Sequence[str], environ: Mapping[str, str] | None = None
) -> tuple[str | None, dict[str, str]]:
    """(path of the program CMD runs, environment it gets): skips
    launchers such as env (with their VAR=VALUE and options) and follows a
    script's #! line to its interpreter. None if it cannot be found."""
    env = dict(os.environ if environ is None else environ)
    args = list(cmd)
    while args:
        exe = _which(args[0], env.get("PATH", os.defpath))
        base = os.path.basename(args[0])
        if base in LAUNCHERS:
            # its options and their values (nice -n 5, taskset -c 0-3,
            # env VAR=VALUE) until the first argument that is a program
            args = args[1:]
            while args and (
                args[0].startswith("-") or "=" in args[0] or not _which(args[0], env.get("PATH", os.defpath))
            ):
                if base == "env" and "=" in args[0] and not args[0].startswith("-"):
                    k, _, v = args[0].partition("=")
                    env[k] = v
                args = args[1:]
            continue
        if not exe:
            return None, env
        try:
            with open(exe, "rb") as f:
                head = f.read(256)
        except OSError:
            return None, env
        if head.startswith(b"#!"):
            line = head[2:].split(b"\n", 1)[0].decode(errors="replace").split()
            return (program_of(line + [exe], env)[0] if line else None), env
        return exe, env
    return None, env


def _which(name, path):
    if "/" in name:
        return name if os.path.isfile(name) else None
    return shutil.which(name, path=path)


def _ld_conf_dirs(conf="/etc/ld.so.conf", seen=None):
    seen = set() if seen is None else seen
    out: list[str] = []
    try:
        lines = Path(conf).read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if line.startswith("include "):
            for inc in sorted(glob.glob(line.split(None, 1)[1])):
                if inc not in seen:
                    seen.add(inc)
                    out += _ld_conf_dirs(inc, seen)
        elif line:
            out.append(line)
    return out


def modules_of(program: str, env: Mapping[str, str]) -> list[str]:
    """The program and the libraries it needs (DT_NEEDED, transitively),
    found as the dynamic loader would: RPATH/RUNPATH ($ORIGIN expanded),
    LD_LIBRARY_PATH, /etc/ld.so.conf, the default directories."""
    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.elffile import ELFFile

    conf = _ld_conf_dirs()
    out, todo, seen = [], [program], set()
    while todo:
        path = todo.pop(0)
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        try:
            with open(path, "rb") as f:
                elf = ELFFile(f)
                needed, runpath = [], []
                for sec in elf.iter_sections():
                    if isinstance(sec, DynamicSection):
                        for tag in sec.iter_tags():
                            if tag.entry.d_tag == "DT_NEEDED":
                                needed.append(tag.needed)  # type: ignore[attr-defined]
                            elif tag.entry.d_tag in ("DT_RPATH", "DT_RUNPATH"):
                                # pyelftools sets needed/rpath/runpath per tag type
                                p = tag.rpath if tag.entry.d_tag == "DT_RPATH" else tag.runpath  # type: ignore[attr-defined]
                                runpath += p.split(":")
        except (OSError, ValueError, Exception):  # not an ELF file: nothing to read
            continue
        out.append(path)
        origin = os.path.dirname(os.path.abspath(path))
        dirs = [d.replace("$ORIGIN", origin).replace("${ORIGIN}", origin) for d in runpath]
        dirs += [d for d in env.get("LD_LIBRARY_PATH", "").split(":") if d]
        dirs += conf + list(DEFAULT_LIB_DIRS)
        for lib in needed:
            cand = lib if "/" in lib else next(
                (os.path.join(d, lib) for d in dirs if os.path.isfile(os.path.join(d, lib))), None
            )
            if cand:
                todo.append(cand)
    return out


def function_symbols(path: str) -> dict[str, int]:
    """Defined function symbols of an ELF file (.symtab and .dynsym), names
    without @VERSION: {name: address}."""
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import SymbolTableSection

    names = {}
    try:
        with open(path, "rb") as f:
            elf = ELFFile(f)
            for sec in elf.iter_sections():
                if not isinstance(sec, SymbolTableSection):
                    continue
                for sym in sec.iter_symbols():
                    e = sym.entry
                    if (
                        e.st_info.type in ("STT_FUNC", "STT_GNU_IFUNC")
                        and e.st_shndx != "SHN_UNDEF"
                        and e.st_value
                        and sym.name
                    ):
                        names[sym.name.split("@", 1)[0]] = e.st_value
    except (OSError, Exception):  # unreadable or not ELF: no symbols
        return {}
    return names


def demangle(names: list[str]) -> dict[str, str]:
    """{mangled: demangled} with binutils c++filt (one process)."""
    names = sorted(names)
    if not names:
        return {}
    try:
        out = subprocess.run(
            [shutil.which("c++filt") or "c++filt"],
            input="\n".join(names) + "\n",
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        ).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        out = names
    return dict(zip(names, out + names[len(out):]))


def _unqualify(s):
    """Drops namespace and class qualifiers of every name in s."""
    return re.sub(r"\b[A-Za-z_]\w*::", "", s)


def _untemplate(s):
    """Drops every <...> group (template arguments)."""
    prev = None
    while prev != s:
        prev, s = s, re.sub(r"<[^<>]*>", "", s)
    return s


def _params(s):
    """The parameter list of a demangled name or spec, '' if none."""
    s = re.sub(r" \[clone [^\]]*\]$", "", s.strip())
    if not s.endswith(")"):
        return ""
    depth = 0
    for i in range(len(s) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(s[i], 0)
        if depth == 0:
            return s[i:] if not s[:i].endswith("operator") else ""
    return ""


def _nospace(s):
    return re.sub(r"\s+", "", s)


def name_matches(spec: str, name: str, demangled: str) -> bool:
    """Does the user's `spec` name this symbol (see the module doc)?"""
    base = CLONE_RE.sub("", name)
    if spec in (name, base):
        return True
    want = short_function(spec)
    have = short_function(demangled)
    if not want or not have:
        return False
    p = _params(spec)
    if p and _nospace(_unqualify(p)) != _nospace(_unqualify(_params(demangled))):
        return False
    w, h = _nospace(want), _nospace(have)
    if "<" not in want:
        h = _untemplate(h)
    for form in (h, _nospace(_unqualify(have if "<" in want else _untemplate(have)))):
        if w == form or form.endswith("::" + w):
            return True
    return False


def _key(spec):
    """An identifier every matching symbol name contains (mangled names
    contain their identifiers as they are), to avoid demangling all."""
    if re.fullmatch(r"_Z\w+(\.\w+)*", spec):
        return None
    ids = re.findall(r"[A-Za-z_]\w*", _untemplate(short_function(spec)))
    return ids[-1] if ids else None


def resolve(
    spec: str, cmd: Sequence[str], environ: Mapping[str, str] | None = None
) -> Resolution:
    """The Resolution of --roi `spec` for CMD (its program and libraries)."""
    res = Resolution(spec)
    program, env = program_of(cmd, environ)
    if not program:
        return res
    res.program = program
    key = _key(spec)
    near = []
    for path in modules_of(program, env):
        res.searched.append(path)
        names = function_symbols(path)
        cands = [n for n in names if n == spec or CLONE_RE.sub("", n) == spec or (key and key in n)]
        dm = demangle([n for n in cands if n.startswith("_Z")])
        for n in cands:
            d = dm.get(n, n)
            if NOT_ENTRY_RE.search(n):
                continue
            if name_matches(spec, n, d):
                res.symbols.append(Symbol(os.path.basename(path), path, n, d))
                # the tool sees one name per address: any of them
                res.aliases += [a for a, v in names.items() if v == names[n] and a != n]
            elif key and key in _untemplate(short_function(d)).split("::")[-1]:
                near.append(short_function(d))
    res.near = sorted(set(near))[:5]
    return res
