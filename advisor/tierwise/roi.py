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
from typing import Iterable, Mapping, Sequence

from tierwise.messages import listed
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
SYSTEM_LIB_DIRS = tuple(d + "/" for d in DEFAULT_LIB_DIRS if d != "/usr/local/lib")
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
        return listed(f"{listed(sorted(set(v)), sep=', ')} in {m}" for m, v in by_mod.items())


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


_SYMBOLS: dict = {}  # (path, mtime, size) -> {name: (address, size)}


def symbol_table(path: str) -> dict[str, tuple[int, int]]:
    """Defined function symbols of an ELF file (.symtab and .dynsym), names
    without @VERSION: {name: (address, size)}. One `readelf -Ws` pass per
    file, kept for the process (a --roi and two --alloc-fn look the same
    files up): binutils reads a 200,000-symbol C++ program in well under a
    second, where walking it with pyelftools took tens of seconds. Falls
    back to pyelftools where readelf is missing."""
    try:
        st = os.stat(path)
    except OSError:
        return {}
    key = (os.path.realpath(path), st.st_mtime_ns, st.st_size)
    if key in _SYMBOLS:
        return _SYMBOLS[key]
    names: dict[str, tuple[int, int]] = {}
    readelf = shutil.which("readelf")
    out = None
    if readelf:
        try:
            out = subprocess.run(
                [readelf, "-W", "--syms", path], capture_output=True, text=True,
                errors="replace", check=False, timeout=300,
            ).stdout
        except (OSError, subprocess.SubprocessError):
            out = None
    if out is not None:
        # "   Num:    Value          Size Type    Bind   Vis      Ndx Name"
        for line in out.splitlines():
            f = line.split()
            if len(f) < 8 or f[3] not in ("FUNC", "IFUNC") or f[6] == "UND":
                continue
            try:
                value = int(f[1], 16)
                size = int(f[2], 16) if f[2].startswith("0x") else int(f[2])
            except ValueError:
                continue
            if value:
                names.setdefault(f[7].split("@", 1)[0], (value, size))
    else:
        names = _pyelftools_symbols(path)
    _SYMBOLS[key] = names
    return names


def _pyelftools_symbols(path: str) -> dict[str, tuple[int, int]]:
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
                        names[sym.name.split("@", 1)[0]] = (e.st_value, e.st_size)
    except (OSError, Exception):  # unreadable or not ELF: no symbols
        return {}
    return names


def function_symbols(path: str) -> dict[str, int]:
    """Defined function symbols of an ELF file: {name: address}."""
    return {n: v[0] for n, v in symbol_table(path).items()}


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
    near: list[tuple[int, str]] = []
    for rank_path, path in enumerate(modules_of(program, env)):
        # suggestions: the program's functions first, then its own
        # libraries', the system's (libstdc++, libgomp) last
        rank = 0 if rank_path == 0 else 2 if path.startswith(SYSTEM_LIB_DIRS) else 1
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
                near.append((rank, short_function(d)))
        if key and not near and rank < 2:
            near += [(rank, n) for n in _close_names(key, names)]
    from tierwise.symbolize import cut_function

    ranked = sorted(set(near), key=lambda rn: (rn[0], len(rn[1]), rn[1]))
    if any(r < 2 for r, _ in ranked):  # libc's trunc is no help for a kernel's name
        ranked = [(r, n) for r, n in ranked if r < 2]
    res.near = list(dict.fromkeys(cut_function(n, 80) for _, n in ranked))[:5]
    return res


# an identifier in a mangled name: its length, then the identifier
MANGLED_ID_RE = re.compile(r"(\d+)(?=[A-Za-z_])")


def _mangled_ids(name: str) -> list:
    """The source names in an Itanium-mangled name (_ZN3gap10BFS_runnerE...:
    gap, BFS_runner): each is its length in digits, then that many characters."""
    ids, at = [], 0
    while (m := MANGLED_ID_RE.search(name, at)) is not None:
        end = m.end() + int(m[1])
        ids.append(name[m.end() : end])
        at = max(end, m.end() + 1)
    return ids


def _close_names(key: str, names: Iterable[str]) -> list:
    """Identifiers of `names` (plain or mangled) that are close to `key`
    ignoring case (difflib: a misspelling, BFS_runer for BFS_runner, or
    another case, pagerankpullgs for PageRankPullGS); at most 5."""
    import difflib

    ids = set()
    for n in names:
        if n.startswith("_Z"):
            ids.update(_mangled_ids(n))
        else:
            ids.add(n.split(".")[0])  # top_down._omp_fn.0: top_down
    by_lower: dict[str, str] = {}
    for i in sorted(ids):
        by_lower.setdefault(i.lower(), i)
    close = difflib.get_close_matches(key.lower(), list(by_lower), n=5, cutoff=0.75)
    return [by_lower[c] for c in close]


# ---------------------------------------------------------------- inlined copies
DIE_RE = re.compile(r"^\s*<(\d+)><([0-9a-f]+)>: Abbrev Number: \d+ \((DW_TAG_\w+)\)")
ATTR_RE = re.compile(r"^\s*<[0-9a-f]+>\s+(DW_AT_\w+)\s*:\s*(.*)$")
KEPT_ATTRS = (
    "DW_AT_name", "DW_AT_linkage_name", "DW_AT_MIPS_linkage_name", "DW_AT_specification",
    "DW_AT_abstract_origin", "DW_AT_low_pc", "DW_AT_entry_pc", "DW_AT_ranges",
)
_DIES: dict = {}  # (path, mtime, size) -> (dies, inlined)


@dataclass
class InlinedCopy:
    """A copy of a function inlined into another (DWARF
    DW_TAG_inlined_subroutine whose abstract origin is that function)."""

    module: str
    entry: int  # address of the copy's first instruction
    function: str  # the inlined function, demangled
    holder: str  # the out-of-line function whose code holds the copy, demangled
    holder_symbol: str  # its symbol (mangled, clone suffix included)
    call: str = ""  # FILE:LINE of the call that was inlined (basename)
    caller: str = ""  # the function that made that call (short), if not the holder
    omp_caller: str = ""  # for a holder that is an OpenMP outlined body: its caller

    def region(self) -> str:
        """The function to profile instead: the holder, or for an OpenMP
        outlined body the function that starts it (short names)."""
        return short_function(self.omp_caller or self.holder)

    def where(self) -> str:
        """`holder at FILE:LINE` in a sentence's words."""
        via = f" in {self.caller}" if self.caller else ""
        m = re.search(r"\._omp_fn\.\d+$", self.holder_symbol)
        name = short_function(self.holder) + (m.group(0) if m else "")
        return name + (f" at {self.call}{via}" if self.call else "")


def inlined_message(
    spec: str, copies: list, has_copy: bool, what: str = "--roi", advice: str | None = None
) -> str:
    """Why `what` `spec` is never entered: every call of it is inlined
    (`copies`), naming the functions that hold the copies; then `advice`,
    by default (--roi) those functions offered as the region (an OpenMP
    outlined body's caller for the body)."""
    holders: dict[str, InlinedCopy] = {}
    for c in copies:
        holders.setdefault(c.holder_symbol, c)
    shown = listed(c.where() for c in holders.values())
    regions = " or ".join(f"--roi '{r}'" for r in list(dict.fromkeys(c.region() for c in copies))[:4])
    head = f"{what} {spec}: " + (
        "its out-of-line copy is never called: every call is inlined"
        if has_copy
        else "there is no out-of-line copy: every call is inlined"
    )
    n = f"{len(copies)} cop{'y' if len(copies) == 1 else 'ies'}"
    if all(c.omp_caller for c in holders.values()):
        return (
            f"{head}, and only into OpenMP outlined bodies ({n}: {shown}), which are started "
            "by their caller, not called: "
            + (advice or f"the caller holds them: profile {regions}")
        )
    return f"{head} ({n}: into {shown}): " + (
        advice or f"the region would never be entered; profile the function that holds them "
        f"instead: {regions}"
    )


def _attr_value(text: str) -> str:
    """A readelf attribute's value: a string after its `(indirect ...): `,
    an address or `<0xREF>` as it stands."""
    text = re.sub(r"^\([a-z_0-9]+\)\s*", "", text.strip())  # the form, with -W
    if text.startswith("(") and "): " in text:
        text = text.split("): ", 1)[1]
    return text.split("\t", 1)[0].strip()


def _read_dies(path: str) -> tuple[dict, list]:
    """({offset: subprogram attrs}, [(offset, attrs, ancestors), ...] of the
    inlined subroutines) of an ELF file's .debug_info, from one `readelf
    --debug-dump=info` pass (binutils: C speed) keeping only the DIEs and
    attributes that name functions; cached per file."""
    try:
        st = os.stat(path)
    except OSError:
        return {}, []
    key = (os.path.realpath(path), st.st_mtime_ns, st.st_size)
    if key in _DIES:
        return _DIES[key]
    subs: dict = {}
    inl: list = []
    readelf = shutil.which("readelf")
    if readelf:
        try:
            proc = subprocess.Popen(
                [readelf, "-W", "--debug-dump=info", path], stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, text=True, errors="replace",
            )
        except OSError:
            proc = None
        if proc and proc.stdout:
            stack: list = []  # (depth, offset, tag)
            cur = None
            for line in proc.stdout:
                if "DW_TAG_" in line:
                    m = DIE_RE.match(line)
                    if not m:
                        continue
                    depth, off, tag = int(m[1]), int(m[2], 16), m[3]
                    while stack and stack[-1][0] >= depth:
                        stack.pop()
                    cur = None
                    if tag == "DW_TAG_subprogram":
                        cur = subs[off] = {}
                    elif tag == "DW_TAG_inlined_subroutine":
                        cur = {}
                        inl.append((off, cur, [o for _, o, t in reversed(stack)
                                               if t in ("DW_TAG_subprogram", "DW_TAG_inlined_subroutine")]))
                    stack.append((depth, off, tag))
                elif cur is not None and "DW_AT_" in line:
                    m = ATTR_RE.match(line)
                    if m and m[1] in KEPT_ATTRS:
                        cur[m[1]] = _attr_value(m[2])
            proc.wait()
    _DIES[key] = (subs, inl)
    return subs, inl


def _ref(v: str | None) -> int | None:
    m = re.match(r"<0x([0-9a-f]+)>", v or "")
    return int(m[1], 16) if m else None


def _die_names(subs: dict, off: int) -> tuple[str, str]:
    """(linkage name, name) of subprogram DIE `off`, following its
    specification and abstract origin."""
    linkage = name = ""
    for _ in range(4):
        d = subs.get(off)
        if d is None:
            break
        linkage = linkage or d.get("DW_AT_linkage_name") or d.get("DW_AT_MIPS_linkage_name", "")
        name = name or d.get("DW_AT_name", "")
        nxt = _ref(d.get("DW_AT_specification")) or _ref(d.get("DW_AT_abstract_origin"))
        if nxt is None or (linkage and name):
            break
        off = nxt
    return linkage, name


def _int(v: str | None) -> int | None:
    try:
        return int(v, 16) if v and v.startswith("0x") else None
    except ValueError:
        return None


# (origin name: linkage name, else DW_AT_name; entry address; the holder's
# low_pc or None; the holder's linkage name or name) of one inlined copy
RawCopy = tuple[str, int, "int | None", str]
FULL_SCAN_MAX = 8 << 20  # .debug_info bytes a whole readelf walk is worth
DUMP_DIE_RE = re.compile(r"^0x([0-9a-f]+):(\s+)DW_TAG_(\w+)")
DUMP_ATTR_RE = re.compile(r"^\s+DW_AT_(\w+)\s+\((.*)")


def _scan_copies(path: str) -> list[RawCopy]:
    """Every inlined copy in the ELF file, from one readelf walk of its
    whole .debug_info (_read_dies)."""
    subs, inl = _read_dies(path)
    out = []
    for _, d, ancestors in inl:
        o = _ref(d.get("DW_AT_abstract_origin"))
        entry = _int(d.get("DW_AT_entry_pc")) or _int(d.get("DW_AT_low_pc"))
        holder = next((a for a in ancestors if a in subs and ("DW_AT_low_pc" in subs[a]
                                                               or "DW_AT_ranges" in subs[a])), None)
        if o is None or entry is None or holder is None:
            continue
        linkage, name = _die_names(subs, o)
        hl, hn = _die_names(subs, holder)
        out.append((linkage or name, entry, _int(subs[holder].get("DW_AT_low_pc")), hl or hn))
    return out


def _dump_copies(path: str, names: list[str]) -> list[RawCopy] | None:
    """The inlined copies of the functions with these exact names (linkage
    or DW_AT_name, through their abstract origin) from `llvm-dwarfdump
    --name ... --show-parents`: LLVM's index walk, ~1 s for 10 MiB of
    DWARF where a readelf walk parsed in Python takes ~15 s. None where
    llvm-dwarfdump is missing."""
    tool = next((t for t in ("llvm-dwarfdump-19", "/usr/lib/llvm-19/bin/llvm-dwarfdump",
                             "llvm-dwarfdump") if shutil.which(t)), None)
    if not tool or not names:
        return None
    try:
        out = subprocess.run(
            [tool, "--debug-info", "--show-parents", *[f"--name={n}" for n in names], path],
            capture_output=True, text=True, errors="replace", timeout=600, check=False,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    copies: list[RawCopy] = []
    stack: list[tuple[int, str, dict]] = []  # (indent, tag, attrs)

    def done(die: tuple[int, str, dict]) -> None:
        _, tag, at = die
        if tag != "inlined_subroutine":
            return
        entry = _int(at.get("entry_pc")) or _int(at.get("low_pc"))
        holder = next((d for d in reversed(stack[:-1]) if d[1] == "subprogram"
                       and ("low_pc" in d[2] or "ranges" in d[2])), None)
        origin = at.get("abstract_origin", "")
        if entry is None or holder is None or not origin:
            return
        h = holder[2]
        hname = h.get("linkage_name") or h.get("specification") or h.get("abstract_origin") \
            or h.get("name", "")
        copies.append((origin, entry, _int(h.get("low_pc")), hname))

    for line in out.splitlines():
        m = DUMP_DIE_RE.match(line)
        if m:
            if stack:
                done(stack[-1])
            indent = len(m[2])
            while stack and stack[-1][0] >= indent:
                stack.pop()
            stack.append((indent, m[3], {}))
            continue
        m = DUMP_ATTR_RE.match(line)
        if m and stack:
            v = m[2].rstrip(")")
            q = re.search(r'"(.*)"', v)  # a reference or string: its name
            stack[-1][2][m[1]] = q[1] if q else v.split()[0] if v.split() else v
    if stack:
        done(stack[-1])
    return copies


def _debug_info_size(path: str) -> int:
    table = subprocess.run(["readelf", "-W", "-S", path], capture_output=True, text=True,
                           errors="replace", check=False).stdout
    m = re.search(r"\.debug_info\s+\S+\s+\S+\s+\S+\s+([0-9a-f]+)", table)
    return int(m[1], 16) if m else 0


def inlined_copies(spec: str, path: str, symbols: Sequence[str] = ()) -> list[InlinedCopy]:
    """The copies of the functions `spec` names (any spelling resolve()
    accepts; `symbols`: the mangled names it resolved to) that are inlined
    into other functions of the ELF file `path`, from its DWARF (none
    without debug information). llvm-dwarfdump looks the exact names up
    (the symbols, and the spec's own last name, `bfs_step`,
    `relax<double>`); a name with neither (a template without its
    arguments that has no out-of-line copy) walks the whole DWARF, in files
    with at most FULL_SCAN_MAX bytes of it."""
    last = _nospace(short_function(spec)) if "(" not in short_function(spec) else short_function(spec)
    parts = re.split(r"::(?![^<]*>)", last)
    names = sorted({CLONE_RE.sub("", x) for x in symbols} | {parts[-1]} - {""})
    raw = _dump_copies(path, names)
    if raw is None or (not raw and not symbols and _debug_info_size(path) <= FULL_SCAN_MAX):
        raw = _scan_copies(path)
    if not raw:
        return []
    key = _key(spec)
    origins = {o for o, _, _, _ in raw if not key or key in o}
    dm = demangle([o for o in origins if o.startswith("_Z")])
    wanted = {}
    for o in origins:
        # a function of internal linkage may have no linkage name: its DWARF
        # name is unqualified (`relax<double>`)
        d = dm.get(o, o)
        if name_matches(spec, o, d) or (not o.startswith("_Z") and "::" not in o
                                        and name_matches(_unqualify(spec), o, o)):
            wanted[o] = d
    if not wanted:
        return []
    by_addr = {v[0]: n for n, v in symbol_table(path).items()}
    out = []
    for o, entry, low, hname in raw:
        if o in wanted:
            hsym = (by_addr.get(low, "") if low is not None else "") or hname
            out.append(InlinedCopy(os.path.basename(path), entry, wanted[o], hsym, hsym))
    if not out:
        return out
    holders = demangle([c.holder_symbol for c in out if c.holder_symbol.startswith("_Z")]
                     + [re.sub(r"\._omp_fn\.\d+$", "", c.holder_symbol) for c in out])
    from tierwise.symbolize import Symbolizer

    mod = os.path.basename(path)
    symbolizer = Symbolizer({mod: path})
    symbolizer.resolve([f"{mod}+0x{c.entry:x}" for c in out])  # one llvm-symbolizer run
    for c in out:
        chain = symbolizer.inline_chain(f"{mod}+0x{c.entry:x}")
        c.holder = holders.get(c.holder_symbol, c.holder_symbol)
        m = re.search(r"\._omp_fn\.\d+$", c.holder_symbol)
        if m:
            base = c.holder_symbol[: m.start()]
            c.omp_caller = holders.get(base, base)
        want = short_function(c.function)
        for k, (func, file, line) in enumerate(chain[:-1]):
            if short_function(func) == want:
                caller = chain[k + 1]
                c.call = f"{os.path.basename(caller[1])}:{caller[2]}"
                if short_function(caller[0]) != short_function(c.holder):
                    c.caller = short_function(caller[0])
                break
    return sorted(out, key=lambda c: (c.holder, c.entry))


def is_referenced(path: str, symbol: str) -> bool:
    """Whether the out-of-line copy `symbol` of the ELF file `path` can be
    entered: exported (.dynsym), or a call, jump or address reference to it
    in the code (objdump), or a relocation that holds its address (a
    function pointer, a vtable). True where that cannot be told."""
    table = symbol_table(path)
    if symbol not in table:
        return True
    addr = table[symbol][0]
    objdump, readelf = shutil.which("objdump"), shutil.which("readelf")
    if not objdump or not readelf:
        return True
    try:
        dyn = subprocess.run([readelf, "-W", "--dyn-syms", path], capture_output=True,
                             text=True, errors="replace", timeout=300).stdout
        if re.search(rf"\bFUNC\b.*\b(?!UND\b)\d+ {re.escape(symbol)}(@|$)", dyn, re.M):
            return True
        relocs = subprocess.run([readelf, "-W", "-r", path], capture_output=True,
                                text=True, errors="replace", timeout=300).stdout
        if re.search(rf"\b0*{addr:x}\b", relocs):
            return True
        proc = subprocess.Popen([objdump, "-d", "--no-show-raw-insn", path],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                text=True, errors="replace")
        target = f" <{symbol}>"
        found = False
        for line in proc.stdout or []:
            if target in line and not line.rstrip().endswith(":"):
                found = True
                break
        proc.kill()
        proc.wait()
        return found
    except (OSError, subprocess.SubprocessError):
        return True
