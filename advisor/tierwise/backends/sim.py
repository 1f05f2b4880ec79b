# SPDX-License-Identifier: MIT
"""The `sim` profiling backend: runs the command under the tierwise Valgrind
tool (profiler/sim), which simulates a write-back D1 + LLC and attributes
every load, store, LLC miss and writeback to the heap block it touches.

It writes the raw profile (advisor/FORMATS.md "Raw backend output"):
sites.csv (location empty), objects.csv, modules.csv, backend.json, and
sites_by_tier.csv when the runtime tagged blocks with tiers (`tierwise
simulate`). Children (fork/exec, followed with --trace-children=yes) get
one raw profile each under DIR/children/<command>.<pid>/ (<command>: the
basename of the child's executable, as its Valgrind instance saw it).

`python -m tierwise.backends.sim -o DIR -- CMD` writes only the raw profile
(no meta.json); `tierwise profile --backend sim` also finishes it.

formats.profile (pandas) is imported where it is used: `tierwise doctor`
imports this module and must start in milliseconds (issue 36)."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from tierwise import paths
from tierwise.backends import add_objects_min
from tierwise.messages import listed
from tierwise.progress import Progress
from tierwise.sizes import count_option, parse_size, size_option

TOOL = "lib/valgrind/tierwise-amd64-linux"
RAW_FILES = {
    "sites.csv": "sites.csv",
    "objects.csv": "objects.csv",
    "modules.csv": "modules.csv",
    "tiers.csv": "sites_by_tier.csv",
}
HELPER_WAIT_S = 60.0  # how long to wait for children outliving the program
CACHE_SYSFS = Path("/sys/devices/system/cpu/cpu0/cache")

# Interval model defaults (profiler/sim/tw_interval.c): the reorder buffer of
# Skylake-SP / Cascade Lake (224 entries) and Skylake's 10 L1D fill buffers,
# Intel 64 and IA-32 Architectures Optimization Reference Manual (248966).
ROB = 224
MSHR = 10

# The ranges the Valgrind tool accepts (profiler/sim/tw_main.c
# tw_process_cmd_line_option; lines: tw_cache.c tw_cache_init), checked
# before the run.
LLC_SIZE = size_option(1 << 10, 1 << 36)
L1_SIZE = size_option(256, 1 << 30)
WAYS = count_option(1, 64)
LINE_SIZE = size_option(8, 4096, power_of_two=True)
WINDOW = count_option(1, 1 << 16)

def host_cache_geometry(sysfs: str | os.PathLike[str] = CACHE_SYSFS) -> dict[str, Any]:
    """The host's L1 data cache and last-level cache from sysfs:
    {"l1_size", "l1_ways", "llc_size", "llc_ways", "line_size"}; entries
    that cannot be read are left out."""
    geo: dict[str, Any] = {}
    llc_level = 0
    for idx in sorted(Path(sysfs).glob("index*")):
        try:
            level = int((idx / "level").read_text())
            kind = (idx / "type").read_text().strip()
            size = parse_size((idx / "size").read_text().strip())
            ways = int((idx / "ways_of_associativity").read_text())
            line = int((idx / "coherency_line_size").read_text())
        except (OSError, ValueError):
            continue
        if level == 1 and kind == "Data":
            geo.update(l1_size=size, l1_ways=ways)
        if kind in ("Unified", "Data") and level >= llc_level and level > 1:
            llc_level = level
            geo.update(llc_size=size, llc_ways=ways, line_size=line)
    return geo


def add_arguments(group: Any) -> None:
    group.add_argument(
        "--llc-size", type=LLC_SIZE, metavar="SIZE", help="simulated LLC size (default: the host's)"
    )
    group.add_argument(
        "--llc-ways",
        type=WAYS,
        metavar="N",
        help="simulated LLC associativity (default: the host's)",
    )
    group.add_argument(
        "--line-size",
        type=LINE_SIZE,
        metavar="BYTES",
        help="cache line size (default: the host's, else 64)",
    )
    group.add_argument(
        "--l1-size", type=L1_SIZE, metavar="SIZE", help="simulated L1 data cache size (default: the host's)"
    )
    group.add_argument(
        "--l1-ways", type=WAYS, metavar="N", help="simulated L1 associativity (default: the host's)"
    )
    group.add_argument(
        "--rob",
        type=WINDOW,
        default=ROB,
        metavar="N",
        help="instructions in the interval model's window, which misses overlap within "
        f"(the reorder buffer; default {ROB}: Skylake-SP / Cascade Lake, Intel optimization "
        "manual)",
    )
    group.add_argument(
        "--mshr",
        type=WINDOW,
        default=MSHR,
        metavar="N",
        help=f"LLC misses in flight at once in the interval model (L1D fill buffers; default "
        f"{MSHR}: Skylake)",
    )
    add_objects_min(group)
    group.add_argument(
        "--roi",
        default="all",
        metavar="all|markers|FUNC",
        help="which part of the run the access counts describe: all of it (default), "
        "between TIERWISE_ROI_BEGIN() and TIERWISE_ROI_END() of tierwise.h (markers), "
        "or while inside function FUNC (e.g. a kernel; like callgrind's --toggle-collect): "
        "plain, qualified, template-instance ('Compute<V>'; without <...> every instance), "
        "return-type-prefixed or mangled, looked up before the run in the program and its "
        "libraries. The cache is simulated throughout; allocation sizes and "
        "lifetimes stay whole-run. The sample backend takes all or markers",
    )
    group.add_argument(
        "--alloc-fn",
        action="append",
        metavar="NAME[:ARG]",
        help="the allocate function of the program's own pool allocator (repeatable, as "
        "Massif's --alloc-fn): each block it returns is an allocation at its caller's site, "
        "of the size in integer argument ARG (1-6), else reaching to the end of the heap "
        "block it lies in; accesses to that block count for the caller's site until the "
        "--free-fn call (README: custom pool allocators)",
    )
    group.add_argument(
        "--free-fn",
        action="append",
        metavar="NAME[:ARG]",
        help="the pool's release function (repeatable); ARG is the argument that is the "
        "pointer (default 1)",
    )
    group.add_argument(
        "--no-children",
        action="store_true",
        help="do not follow fork/exec children (default: one raw profile per child process)",
    )


def geometry(args: argparse.Namespace) -> dict[str, Any]:
    """Cache geometry: options override the host's; 32K/8 L1 and 8M/16 LLC
    with 64-byte lines where the host says nothing."""
    geo: dict[str, Any] = {
        "l1_size": 32 << 10, "l1_ways": 8, "llc_size": 8 << 20, "llc_ways": 16, "line_size": 64
    }
    geo.update(host_cache_geometry())
    source = "host"
    for key in ("llc_size", "l1_size"):
        if getattr(args, key, None):
            geo[key] = parse_size(getattr(args, key))
            source = "options"
    given = set()
    for key in ("llc_ways", "l1_ways", "line_size"):
        if getattr(args, key, None):
            geo[key] = int(getattr(args, key))
            given.add(key)
            source = "options"
    for lvl in ("l1", "llc"):
        lines = geo[f"{lvl}_size"] // geo["line_size"]
        if f"{lvl}_ways" not in given and lines and lines % geo[f"{lvl}_ways"]:
            # A size given alone keeps the host's associativity where it
            # divides the lines into sets; else the nearest way count that
            # does (a 15-way 105 MiB L3 and --llc-size 256K: 16 ways).
            want = geo[f"{lvl}_ways"]
            geo[f"{lvl}_ways"] = min(
                (w for w in range(1, min(lines, 64) + 1) if lines % w == 0),
                key=lambda w: (abs(w - want), -w),
            )
    for lvl in ("l1", "llc"):
        lines = geo[f"{lvl}_size"] // geo["line_size"]
        if lines < geo[f"{lvl}_ways"] or lines % geo[f"{lvl}_ways"]:
            raise ValueError(
                f"--{lvl}-size {geo[lvl + '_size']} with {geo[lvl + '_ways']} ways and "
                f"{geo['line_size']}-byte lines is not a whole number of sets"
            )
    geo["source"] = source
    return geo


def host_avx512(cpuinfo: str | None = None) -> list[str]:
    """The AVX-512 flags of the host CPU (/proc/cpuinfo, or the file in
    $TIERWISE_CPUINFO: tests give another CPU's), sorted; [] if none or
    unreadable. Valgrind 3.19 (Debian 12) decodes no AVX-512 instruction:
    code built with -march=native on such a host dies of SIGILL under the
    sim backend."""
    path = cpuinfo or os.environ.get("TIERWISE_CPUINFO") or "/proc/cpuinfo"
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return sorted({w for w in line.split(":", 1)[-1].split() if w.startswith("avx512")})
    except OSError:
        pass
    return []


AVX512_ADVICE = (
    "Valgrind 3.19 cannot run AVX-512 instructions: rebuild the program without "
    "-march=native, or add -mno-avx512f (e.g. CFLAGS='-O3 -march=native -mno-avx512f'), "
    "for the sim backend (the alloc census and `tierwise run` take the native build)"
)


def sigill_message(cmd: Sequence[str], flags: list[str]) -> str:
    """What to say when the program dies of SIGILL under Valgrind."""
    why = (
        f"this host has {', '.join(flags[:3])}{', ...' if len(flags) > 3 else ''}, "
        "so a -march=native build uses AVX-512"
        if flags
        else "an instruction Valgrind cannot decode (AVX-512 is the usual one)"
    )
    return (
        f"{cmd[0]} died of SIGILL (illegal instruction) under Valgrind: {why}. "
        f"{AVX512_ADVICE}"
    )


def available(args: argparse.Namespace | None = None) -> tuple[bool, str]:
    if not shutil.which("valgrind"):
        return False, "valgrind not found on PATH (Debian package valgrind)"
    tool = paths.native(TOOL)
    if not tool.exists():
        return False, paths.missing(tool)
    return True, "valgrind tool built"


def valgrind_version() -> str | None:
    try:
        out = subprocess.run(["valgrind", "--version"], capture_output=True, text=True, check=False)
        return out.stdout.strip()
    except OSError:
        return None


def _simulate_flags(cmd):
    """With the tierwise runtime preloaded (`tierwise simulate`: in our
    environment, or set by `env LD_PRELOAD=... CMD`), Valgrind must leave the
    runtime's malloc alone (it would replace every object's malloc by
    default) so the runtime places blocks and announces them."""
    preloads = [os.environ.get("LD_PRELOAD", "")]
    if cmd and Path(cmd[0]).name == "env":
        preloads += [a for a in cmd[1:] if a.startswith("LD_PRELOAD=")]
    if any("libtierwise" in p for p in preloads):
        return ["--soname-synonyms=somalloc=nouserintercepts"]
    return []


def roi_spec(args: argparse.Namespace | None) -> str:
    """The --roi value, checked: all, markers or a function name (any
    spelling tierwise.roi accepts: spaces, template arguments, parameters)."""
    spec = (getattr(args, "roi", None) or "all").strip()
    if not spec or re.search(r"[\"\\\x00-\x1f]", spec):
        raise ValueError(f"--roi {spec!r}: expected all, markers or a function name")
    return spec


# Programs whose region function may be in another program they start or a
# library they load later (dlopen): a name not found in them is a warning.
STARTERS_RE = re.compile(
    r"(ba|da|z|k|c|tc)?sh|python[\d.]*|perl[\d.]*|ruby[\d.]*|node|java|"
    r"mpirun|mpiexec|orterun|prterun|srun|make"
)


def resolve_roi(spec: str, cmd: Sequence[str]) -> tuple[str, list[str], Any]:
    """(tool --roi value, extra valgrind options, symbols for backend.json)
    of --roi `spec`: for a function name, the functions it names in the
    program and its libraries (tierwise.roi), said on stderr; an error if
    there are none, unless the program starts others (a shell, Python,
    mpirun: then a warning and the name as given)."""
    if spec in ("all", "markers"):
        return spec, [], None
    from tierwise import roi

    res = roi.resolve(spec, cmd)
    if res.symbols:
        copies = _inlined(roi, spec, [res.program] + [x.path for x in res.symbols], res.symbols)
        if copies:
            if not any(roi.is_referenced(x.path, x.name) for x in res.symbols):
                raise ValueError(roi.inlined_message(spec, copies, has_copy=True))
            print(
                f"tierwise profile: warning: --roi {spec}: also inlined, into "
                f"{listed(c.where() for c in copies)}: the time spent in "
                "those copies is not in the region",
                file=sys.stderr,
            )
        print(
            f"tierwise profile: --roi {spec}: {len(res.symbols)} function(s): {res.describe()}",
            file=sys.stderr,
        )
        syms = [{"module": x.module, "symbol": x.name, "name": x.demangled} for x in res.symbols]
        return res.tool_arg(), ["--demangle=no"], syms
    copies = _inlined(roi, spec, [res.program]) if res.program else []
    if copies:
        raise ValueError(roi.inlined_message(spec, copies, has_copy=False))
    where = (
        f"{res.program} or the {len(res.searched) - 1} libraries it links"
        if res.program
        else f"{cmd[0]} (not found)"
    )
    near = f"; similar: {', '.join(res.near)}" if res.near else ""
    if res.program and STARTERS_RE.fullmatch(Path(res.program).name):
        print(
            f"tierwise profile: warning: --roi {spec}: no such function in {where}{near}; "
            f"it may be in a program or library {Path(res.program).name} loads later: "
            "profiling with the name as given",
            file=sys.stderr,
        )
        return spec, [], None
    raise ValueError(f"--roi {spec}: no function of that name in {where}{near}")


def _inlined(roi: Any, spec: str, paths: list[str], symbols: Sequence[Any] = ()) -> list:
    """The inlined copies of the functions `spec` names (resolved to
    `symbols`) in these ELF files (each once), from their DWARF."""
    names = [x.name for x in symbols]
    return [
        c for p in dict.fromkeys(p for p in paths if p) for c in roi.inlined_copies(spec, p, names)
    ]


def interval_params(args: argparse.Namespace) -> dict[str, int]:
    """The interval model's window (--rob) and miss bound (--mshr), checked."""
    p = {"rob": getattr(args, "rob", ROB) or ROB, "mshr": getattr(args, "mshr", MSHR) or MSHR}
    for k, v in p.items():
        if not isinstance(v, int) or not 1 <= v <= 65536:
            raise ValueError(f"--{k} {v!r}: expected an integer from 1 to 65536")
    return p


def valgrind_command(
    args: argparse.Namespace,
    cmd: Sequence[str],
    prefix: Path,
    geo: dict[str, Any],
    roi: tuple[str, list[str], Any] | None = None,
    pools: dict[str, Any] | None = None,
) -> list[str]:
    """`roi`: resolve_roi()'s (tool value, extra options), default the
    --roi value as given; `pools`: resolve_pool_fns()'s, default the
    --alloc-fn/--free-fn values as given."""
    roi_arg, roi_opts = roi[:2] if roi else (roi_spec(args), [])
    pools = pools or {
        "alloc_fn": pool_fn_specs(args, "alloc_fn"), "free_fn": pool_fn_specs(args, "free_fn")
    }
    if pools.get("mangled") and "--demangle=no" not in roi_opts:
        roi_opts = [*roi_opts, "--demangle=no"]
    return [
        "valgrind",
        "--tool=tierwise",
        "-q",
        *roi_opts,
        f"--trace-children={'no' if getattr(args, 'no_children', False) else 'yes'}",
        f"--out={prefix}.%p",
        *_simulate_flags(cmd),
        f"--depth={getattr(args, 'depth', 6)}",
        f"--llc-size={geo['llc_size']}",
        f"--llc-ways={geo['llc_ways']}",
        f"--l1-size={geo['l1_size']}",
        f"--l1-ways={geo['l1_ways']}",
        f"--line-size={geo['line_size']}",
        f"--rob={interval_params(args)['rob']}",
        f"--mshr={interval_params(args)['mshr']}",
        f"--objects-min-bytes={parse_size(getattr(args, 'objects_min_bytes', '4096'))}",
        f"--roi={roi_arg}",
        *[f"--alloc-fn={f}" for f in pools["alloc_fn"]],
        *[f"--free-fn={f}" for f in pools["free_fn"]],
        *cmd,
    ]


POOL_FN_RE = re.compile(r"(?P<name>[^\"\\\x00-\x1f]*?[^\"\\\x00-\x1f:\s])(?::(?P<arg>\d+))?")


def split_pool_fn(spec: str) -> tuple[str, int | None]:
    """(name, ARG or None) of an --alloc-fn/--free-fn value NAME[:ARG]: a C
    or C++ name, qualified and with template arguments as the user has it
    (`ns::pool_allocator<int>::allocate:2`); ValueError if it is none."""
    m = POOL_FN_RE.fullmatch(spec.strip())
    if not m or (m["arg"] is not None and not 1 <= int(m["arg"]) <= 6) or m["name"].endswith(":"):
        raise ValueError(
            f"{spec!r}: expected a function name, optionally with :ARG (1-6)"
        )
    return m["name"].strip(), int(m["arg"]) if m["arg"] is not None else None


def pool_fn_specs(args: argparse.Namespace, key: str) -> list[str]:
    """--alloc-fn/--free-fn values, checked: NAME or NAME:ARG with ARG 1-6,
    NAME plain, qualified, with template arguments or mangled."""
    specs = getattr(args, key, None) or []
    for spec in specs:
        try:
            split_pool_fn(spec)
        except ValueError as e:
            raise ValueError(f"--{key.replace('_', '-')} {e}") from None
    if len(specs) > 8:
        raise ValueError(f"--{key.replace('_', '-')}: at most 8 functions")
    return specs


def resolve_pool_fns(args: argparse.Namespace, cmd: Sequence[str]) -> dict[str, Any]:
    """The sim tool's --alloc-fn/--free-fn values for the program's pool
    functions, found before the run (tierwise.roi, as --roi): {"alloc_fn":
    [tool value, ...], "free_fn": [...], "symbols": [{option, name,
    symbols}], "mangled": bool (the tool must not demangle)}. A name found
    nowhere is an error (a warning under a shell or launcher, with the name
    as given), one whose every call is inlined too (no call to see); where
    some calls are inlined the warning names the functions that hold them:
    those hand-outs stay charged to the pool block's site."""
    out: dict[str, Any] = {"alloc_fn": [], "free_fn": [], "symbols": [], "mangled": False}
    from tierwise import roi

    for key in ("alloc_fn", "free_fn"):
        opt = f"--{key.replace('_', '-')}"
        for spec in pool_fn_specs(args, key):
            name, arg = split_pool_fn(spec)
            suffix = f":{arg}" if arg is not None else ""
            res = roi.resolve(name, cmd)
            if not res.symbols:
                copies = _inlined(roi, name, [res.program]) if res.program else []
                if copies:
                    raise ValueError(
                        roi.inlined_message(
                            name, copies, has_copy=False, what=opt,
                            advice="no call of it runs, so no hand-out can be seen; keep it "
                            "out of line (__attribute__((noinline))) to profile its pool",
                        )
                    )
                if res.program and not STARTERS_RE.fullmatch(Path(res.program).name):
                    near = f"; similar: {', '.join(res.near)}" if res.near else ""
                    raise ValueError(
                        f"{opt} {name}: no function of that name in {res.program} or the "
                        f"{len(res.searched) - 1} libraries it links{near}"
                    )
                out[key].append(spec)  # in a program started later: as given
                continue
            copies = _inlined(roi, name, [res.program] + [x.path for x in res.symbols], res.symbols)
            if copies and key == "alloc_fn":
                print(
                    f"tierwise profile: warning: {opt} {name}: inlined at {len(copies)} of its "
                    f"calls, into {listed(c.where() for c in copies)}: the "
                    "hand-outs made there are not seen and stay charged to the pool block's "
                    "site",
                    file=sys.stderr,
                )
            print(
                f"tierwise profile: {opt} {name}: {len(res.symbols)} function(s): "
                f"{res.describe()}",
                file=sys.stderr,
            )
            out[key].append(res.tool_arg() + suffix)
            out["mangled"] = True
            out["symbols"].append(
                {"option": opt, "name": spec,
                 "symbols": [{"module": x.module, "symbol": x.name, "name": x.demangled}
                             for x in res.symbols]}
            )
    return out


def ended(rc: int) -> str:
    """How a process with return code `rc` (Popen's: -N for signal N)
    ended, in words: `died of SIGSEGV (signal 11)`, `exited with status 3`."""
    if rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = "a signal"
        return f"died of {name} (signal {-rc})"
    return f"exited with status {rc}"


def _discard(outdir: Path) -> None:
    """Removes the raw profile files the run moved into outdir."""
    for name in list(RAW_FILES.values()) + ["backend.json"]:
        (outdir / name).unlink(missing_ok=True)
    shutil.rmtree(outdir / "children", ignore_errors=True)


def _collect(raw_dir, pid, dest, params):
    """Moves the raw files of process pid into dest and writes backend.json."""
    dest.mkdir(parents=True, exist_ok=True)
    stats = {}
    stats_file = raw_dir / f"tw.{pid}.stats.json"
    if stats_file.exists():
        stats = json.loads(stats_file.read_text(errors="replace"))
        stats_file.unlink()
    for suffix, name in RAW_FILES.items():
        src = raw_dir / f"tw.{pid}.{suffix}"
        if src.exists():
            shutil.move(str(src), dest / name)
    p = dict(
        params,
        instructions=stats.get("instructions"),
        pid=pid,
        exit_code=stats.get("exit_code"),
        command=stats.get("command"),
        roi=stats.get("roi"),
    )
    # the tool saw the symbols --roi named; record the name and the symbols
    req = p.pop("roi_request", None)
    if req and isinstance(p["roi"], dict) and p["roi"].get("mode") == "function":
        p["roi"] = dict(p["roi"], **req)
    if (dest / "sites_by_tier.csv").exists():
        p["sites_by_tier"] = "sites_by_tier.csv"
    from tierwise.formats import profile as profile_format
    profile_format.write_backend_params(dest, p)
    return p


def _stats_written(path):
    """Whether the tool has finished writing a stats file (it parses; an
    existing file may still be empty: mpi/singleton.test once read orted's
    before its Valgrind had written it, and failed on the empty JSON)."""
    try:
        json.loads(path.read_text(errors="replace"))
        return True
    except (OSError, ValueError):
        return False


def _running_children(raw_dir, main_pid):
    """Pids of traced processes that started (their Valgrind opened
    tw.PID.objects.csv) and have not finished (tw.PID.stats.json, written
    last, not complete yet: the tool creates it, then writes it) and are
    still alive: a helper daemon outliving the program."""
    pids = []
    for f in raw_dir.glob("tw.*.objects.csv"):
        pid = f.name.split(".")[1]
        if (
            pid.isdigit()
            and int(pid) != main_pid
            and not _stats_written(raw_dir / f"tw.{pid}.stats.json")
            and Path(f"/proc/{pid}").exists()
        ):
            pids.append(int(pid))
    return sorted(pids)


def _wait_children(raw_dir, main_pid, limit=HELPER_WAIT_S):
    """Waits up to `limit` seconds for children still running after the
    program (a job's helper daemon), so that their profiles are collected
    and their files are not removed under them; returns those still
    running then."""
    running = _running_children(raw_dir, main_pid)
    if running:
        print(
            f"tierwise profile: sim: waiting for {len(running)} child process(es) still "
            f"running after the program (pid {listed(map(str, running), sep=', ')})",
            file=sys.stderr,
        )
    t0 = time.monotonic()
    while running and time.monotonic() - t0 < limit:
        time.sleep(0.1)
        running = _running_children(raw_dir, main_pid)
    return running


def _child_name(raw_dir, pid):
    """The basename of process pid's executable (from its stats file), made
    safe as a directory name; "process" where unknown."""
    try:
        stats = json.loads((raw_dir / f"tw.{pid}.stats.json").read_text(errors="replace"))
        command = stats["command"]
    except (OSError, ValueError, KeyError, TypeError):
        command = None
    from tierwise.formats import profile as profile_format
    return profile_format.child_name(command)


def run(args: argparse.Namespace, cmd: list[str], outdir: Path) -> dict[str, Any]:
    ok, why = available(args)
    if not ok:
        raise FileNotFoundError(why)
    geo = geometry(args)
    roi_res = resolve_roi(roi_spec(args), cmd)  # before the run: a wrong name costs nothing
    pools = resolve_pool_fns(args, cmd)
    outdir = Path(outdir)
    raw_dir = outdir / ".raw"
    shutil.rmtree(raw_dir, ignore_errors=True)
    raw_dir.mkdir(parents=True)
    env = dict(os.environ, VALGRIND_LIB=str(paths.native(TOOL).parent))
    vcmd = valgrind_command(args, cmd, (raw_dir / "tw").resolve(), geo, roi_res, pools)
    params = {
        "tool": "tierwise (Valgrind)",
        "valgrind": valgrind_version(),
        "cache": geo,
        "write_policy": "write-back, write-allocate, LRU; dirty lines left at exit count as writebacks",
        "valgrind_command": vcmd[: -len(cmd)],
        "depth": getattr(args, "depth", 6),
        "interval_model": interval_params(args),
        "objects_min_bytes": parse_size(getattr(args, "objects_min_bytes", "4096")),
        "alloc_fns": pool_fn_specs(args, "alloc_fn"),
        "free_fns": pool_fn_specs(args, "free_fn"),
    }
    if pools["symbols"]:
        params["pool_fn_symbols"] = pools["symbols"]
    if roi_res[2] is not None:
        params["roi_request"] = {"function": roi_spec(args), "symbols": roi_res[2]}
    print(
        f"tierwise profile: sim: LLC {geo['llc_size'] >> 10} KiB {geo['llc_ways']}-way, "
        f"L1 {geo['l1_size'] >> 10} KiB {geo['l1_ways']}-way, {geo['line_size']} B lines "
        f"({geo['source']})",
        file=sys.stderr,
    )
    proc = subprocess.Popen(vcmd, env=env)
    with Progress("tierwise profile: sim") as progress:
        progress.doing("running the program under Valgrind")
        rc = proc.wait()
    if rc == -signal.SIGILL:  # "Process terminating with ... signal 4 (SIGILL)"
        shutil.rmtree(raw_dir, ignore_errors=True)
        raise ValueError(sigill_message(cmd, host_avx512()))
    if not (raw_dir / f"tw.{proc.pid}.sites.csv").exists():
        raise FileNotFoundError(
            f"{raw_dir}: valgrind (exit status {rc}) wrote no profile; see its messages above"
        )
    left = _wait_children(raw_dir, proc.pid)
    info = _collect(raw_dir, proc.pid, outdir, params)
    children = sorted({int(f.name.split(".")[1]) for f in raw_dir.glob("tw.*.sites.csv")})
    kids, kids_params = [], []
    for pid in children:
        name = f"{_child_name(raw_dir, pid)}.{pid}"
        kp = _collect(raw_dir, pid, outdir / "children" / name, params)
        kids_params.append(kp)
        kids.append(
            {
                "pid": pid,
                "dir": f"children/{name}",
                "exit_status": kp["exit_code"],
                "command": kp["command"],
            }
        )
    if left:  # their files stay theirs: they write them when they end
        print(
            f"tierwise profile: sim: {len(left)} child process(es) still running after "
            f"{HELPER_WAIT_S:.0f} s (pid {listed(map(str, left), sep=', ')}); their raw profiles "
            f"will be in {raw_dir}",
            file=sys.stderr,
        )
    else:
        shutil.rmtree(raw_dir, ignore_errors=True)
    roi = roi_spec(args)
    if roi != "all" and not any(
        ((p or {}).get("roi") or {}).get("entries") for p in [info] + kids_params
    ):
        _discard(outdir)  # all counts zero: no profile to leave half-written
        if rc != 0:
            raise ValueError(
                f"{cmd[0]} {ended(rc)} before the region (--roi {roi}) was entered, so "
                "nothing was profiled"
            )
        raise ValueError(
            f"--roi {roi}: the region was never entered, so every access count is zero "
            + (
                "(no TIERWISE_ROI_BEGIN() ran)"
                if roi == "markers"
                else "(the function(s) it names exist but none was called)"
                if roi_res[2]
                else f"(no function named {roi} was called: check the name with nm; "
                "an inlined or static function from a stripped binary has no entry)"
            )
        )
    if children:
        info["children"] = kids
        from tierwise.formats import profile as profile_format
        profile_format.write_backend_params(outdir, info)
        print(
            f"tierwise profile: sim: {len(children)} child process profile(s) in {outdir / 'children'}",
            file=sys.stderr,
        )
    return {
        "exit_status": rc if rc >= 0 else None,
        "signal": -rc if rc < 0 else None,
        "params": info,
        "clock": "instructions",
        "estimated": False,
        "pid": proc.pid,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Raw profile only: python -m tierwise.backends.sim -o DIR [opts] -- CMD."""
    p = argparse.ArgumentParser(prog="python -m tierwise.backends.sim", description=main.__doc__)
    p.add_argument("-o", "--output", required=True, metavar="DIR")
    p.add_argument("--depth", type=int, default=6)
    add_arguments(p)
    p.add_argument("cmd", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        p.error("no command given")
    Path(args.output).mkdir(parents=True, exist_ok=True)
    info = run(args, cmd, Path(args.output))
    return info["exit_status"] if info["exit_status"] is not None else 1


if __name__ == "__main__":
    sys.exit(main())
