# SPDX-License-Identifier: MIT
"""The profile directory (advisor/FORMATS.md, format `tierwise-profile` v1):
`finish_profile()` turns a backend's raw output (sites.csv without
locations, objects.csv, modules.csv, backend.json) into a complete profile:
it symbolizes `location`, fills missing build-ids and writes meta.json."""

import csv
import json
import os
import re
import platform
import socket
from pathlib import Path

from tierwise import __version__
from tierwise.symbolize import Symbolizer

FORMAT = "tierwise-profile"
VERSION = 1
# The header line of sites.csv, exactly as in advisor/FORMATS.md.
SITE_COLUMNS = (
    "site,stack,location,allocs,bytes_allocated,peak_bytes,loads,stores,"
    "llc_load_misses,llc_store_misses,writebacks"
).split(",")
# Optional trailing columns, kept where the backend wrote them.
OPTIONAL_SITE_COLUMNS = [
    "llc_stream_misses",
    "llc_overlapped_misses",
    "llc_dependent_misses",
    "llc_inflight_misses",
    "atomics",
]
OBJECT_COLUMNS = ["site", "size", "alloc_time", "free_time"]
MODULE_COLUMNS = ["module", "path", "build_id"]


def build_id(path):
    """The GNU build-id of the ELF file at `path` (lowercase hex), or ""."""
    try:
        from elftools.elf.elffile import ELFFile

        with open(path, "rb") as f:
            elf = ELFFile(f)
            for sec in elf.iter_sections():
                if sec.header.sh_type != "SHT_NOTE":
                    continue
                for note in sec.iter_notes():
                    if note["n_type"] == "NT_GNU_BUILD_ID":
                        return note["n_desc"].lower()
    except (OSError, ValueError, ImportError, Exception):  # not ELF, gone
        return ""
    return ""


def _read_csv(path, columns):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
        header = rows[0].keys() if rows else None
    if header is not None and list(header)[: len(columns)] != columns:
        raise ValueError(f"{path}: columns {list(header)} are not {columns}")
    return rows


def _open_private(tmp: Path, mode="w"):
    """A fresh temporary file next to its target, never through a symlink
    another user planted (O_EXCL|O_NOFOLLOW; a stale one of ours is
    removed first), as the runtime writes its own files."""
    try:
        if tmp.is_symlink() or tmp.exists():
            tmp.unlink()
    except FileNotFoundError:
        pass
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    return os.fdopen(fd, mode, newline="")


def _write_csv(path, columns, rows):
    tmp = Path(f"{path}.tmp.{os.getpid()}")
    with _open_private(tmp) as f:
        w = csv.DictWriter(
            f, fieldnames=columns, extrasaction="ignore", lineterminator="\n"
        )
        w.writeheader()
        w.writerows(rows)
    os.replace(tmp, path)


def _host():
    cpu = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = 0
    try:
        mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        pass
    return {
        "hostname": socket.gethostname(),
        "kernel": platform.release(),
        "cpu_model": cpu,
        "nproc": os.cpu_count(),
        "memory": mem,
    }


def read_modules(outdir):
    """modules.csv rows with build-ids filled from the files where empty."""
    path = Path(outdir) / "modules.csv"
    if not path.exists():
        return []
    rows = _read_csv(path, MODULE_COLUMNS)
    for r in rows:
        if not r.get("build_id") and Path(r["path"]).is_file():
            r["build_id"] = build_id(r["path"])
    return rows


def child_name(command):
    """The directory name part of a child process's profile
    (children/<command>.<pid>): its executable's basename made safe as a
    file name, "process" where unknown."""
    try:
        name = re.sub(r"[^\w.+-]", "_", Path(command[0]).name)
    except (IndexError, TypeError):
        name = ""
    return name or "process"


def finish_profile(outdir, cmd, backend, info, start, end, depth=6, rank=None):
    """Complete the profile in `outdir` (see module doc); returns the meta
    dict plus `n_sites`. `info`: the backend's {"exit_status", "params",
    "clock", "estimated", "pid"}; `rank`: the MPI rank, or None."""
    outdir = Path(outdir)
    params = dict(info.get("params") or {})
    bj = outdir / "backend.json"
    if bj.exists():
        params.update(json.loads(bj.read_text()))
    modules = read_modules(outdir)
    sites_path = outdir / "sites.csv"
    sites = _read_csv(sites_path, SITE_COLUMNS) if sites_path.exists() else []
    sym = Symbolizer({m["module"]: m["path"] for m in modules})
    todo = [s for s in sites if not s.get("location") and not s["stack"].startswith("[")]
    sym.resolve([f for s in todo for f in s["stack"].split(";")])
    for s, loc in zip(todo, sym.locations([s["stack"] for s in todo])):
        s["location"] = loc
    if sites_path.exists():
        extra = [c for c in OPTIONAL_SITE_COLUMNS if sites and c in sites[0]]
        _write_csv(sites_path, SITE_COLUMNS + extra, sites)
    if modules:
        _write_csv(outdir / "modules.csv", MODULE_COLUMNS, modules)
    status = info.get("exit_status")
    killed = not isinstance(status, int) or status < 0
    meta = {
        "format": FORMAT,
        "version": VERSION,
        "tool_version": __version__,
        "command": list(cmd),
        "backend": backend,
        "backend_params": params,
        "estimated": bool(info.get("estimated", False)),
        "depth": int(params.get("depth", depth)),
        "clock": info.get("clock") or params.get("clock", "ns"),
        "objects_min_bytes": int(params.get("objects_min_bytes", 0)),
        "start_time": start.isoformat(),
        "end_time": end.isoformat(),
        "exit_status": None if killed else status,
        "complete": sites_path.exists()
        and (info["complete"] if info.get("complete") is not None else not killed),
        "pid": info.get("pid", params.get("pid")),
        "rank": rank,
        "host": _host(),
        "modules": [{k: m[k] for k in MODULE_COLUMNS} for m in modules],
    }
    tmp = outdir / f"meta.json.tmp.{os.getpid()}"
    with _open_private(tmp) as f:
        f.write(json.dumps(meta, indent=1) + "\n")
    os.replace(tmp, outdir / "meta.json")
    return dict(meta, n_sites=len(sites))
