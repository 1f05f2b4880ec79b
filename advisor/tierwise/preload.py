# SPDX-License-Identifier: MIT
"""Whether LD_PRELOAD can apply to a program (statically linked or setuid
programs escape it), for `tierwise run` and the alloc census, and the
environment that applies the runtime to one (FORMATS.md). Imports os,
stat and struct only: `tierwise run` calls it on every start
(cli.FAST_VERBS), where shutil and pyelftools would cost more than the
check itself."""

from __future__ import annotations

import os
import stat
import struct

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Mapping

from tierwise.paths import runtime_preload


def which(program: str) -> str | None:
    """The path `program` runs from (a path as given, or the first
    executable file of that name on $PATH), or None: shutil.which's rule
    without importing shutil."""
    if os.sep in program:
        return program if os.path.isfile(program) else None
    for d in os.environ.get("PATH", os.defpath).split(os.pathsep):
        path = os.path.join(d or ".", program)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def _has_interp(f):
    """Whether the ELF file `f` (opened binary, at offset 0) has a PT_INTERP
    program header: read with struct, not pyelftools, because `tierwise run`
    calls this on every start (cli.FAST_VERBS) and importing pyelftools
    costs more than the whole check. ValueError if it is not a valid ELF
    file."""
    ident = f.read(64)
    if len(ident) < 52 or ident[:4] != b"\x7fELF" or ident[4] not in (1, 2):
        raise ValueError("not an ELF file")
    end = "<" if ident[5] == 1 else ">"
    if ident[4] == 2:  # ELF64: e_phoff at 32, e_phentsize/e_phnum at 54/56
        phoff, = struct.unpack_from(end + "Q", ident, 32)
        entsize, num = struct.unpack_from(end + "HH", ident, 54)
    else:  # ELF32: e_phoff at 28, e_phentsize/e_phnum at 42/44
        phoff, = struct.unpack_from(end + "I", ident, 28)
        entsize, num = struct.unpack_from(end + "HH", ident, 42)
    f.seek(phoff)
    table = f.read(entsize * num)
    if entsize < 4 or len(table) < entsize * num:
        raise ValueError("truncated program headers")
    PT_INTERP = 3
    return any(
        struct.unpack_from(end + "I", table, i * entsize)[0] == PT_INTERP for i in range(num)
    )


def preload_blocker(program: str) -> str | None:
    """Why LD_PRELOAD cannot apply to `program` (a command name or path), or
    None: a statically linked ELF (no PT_INTERP: nothing loads the runtime)
    or a setuid/setgid one (the loader ignores LD_PRELOAD paths). Scripts
    and programs that cannot be read are not judged (None)."""
    path = which(program)
    if not path:
        return None
    try:
        with open(path, "rb") as f:
            if f.read(4) != b"\x7fELF":
                return None
            f.seek(0)
            static = not _has_interp(f)
        mode = os.stat(path).st_mode
    except (OSError, ValueError, struct.error):  # unreadable or not valid ELF: let it run
        return None
    if static:
        return f"{program} is statically linked (no PT_INTERP): LD_PRELOAD cannot apply"
    if mode & (stat.S_ISUID | stat.S_ISGID):
        return f"{program} is setuid/setgid: the loader ignores LD_PRELOAD"
    return None


# Variables removed from a command's environment when the runtime places
# its data: the census's (the command is the named process of the run report).
RUN_UNSET = ("TIERWISE_CENSUS", "TIERWISE_REPORT_OWNER")


def runtime_vars(
    placement: str,
    pmem_dir: str,
    report: str,
    dram_limit: str | None = None,
    env: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The variables that make the runtime apply `placement` to a program
    (LD_PRELOAD first, the runtime put before any LD_PRELOAD of `env`)."""
    out = {
        "LD_PRELOAD": runtime_preload(os.environ if env is None else env),
        "TIERWISE_PLACEMENT": os.path.realpath(placement),
        # (absolute: the program may change its directory before they are
        # written; the runtime does the same for a relative variable)
        "TIERWISE_PMEM_DIR": os.path.abspath(pmem_dir),
        "TIERWISE_REPORT": os.path.abspath(report),
    }
    if dram_limit:
        out["TIERWISE_DRAM_LIMIT"] = str(dram_limit)
    return out


def run_env(
    placement: str,
    pmem_dir: str,
    report: str,
    dram_limit: str | None = None,
    env: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment that runs a command under the runtime: `env` (default
    os.environ) with runtime_vars, and without the census's variables (the
    command is the named process of the run report)."""
    env = dict(os.environ if env is None else env)
    env.update(runtime_vars(placement, pmem_dir, report, dram_limit, env))
    for name in RUN_UNSET:
        env.pop(name, None)
    return env
