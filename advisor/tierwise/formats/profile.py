# SPDX-License-Identifier: MIT
"""The profile directory (advisor/FORMATS.md "Profile directory", format
`tierwise-profile` v1): every file's schema, its reader and its writer.

- `read_profile(DIR)`: meta.json, sites.csv, objects.csv, modules.csv into
  a `Profile` of DataFrames with the declared columns; count columns are
  nullable Int64 (an empty cell = not measured), converted once here;
  ValueError naming the file, column, row and value on any broken contract.
- `finish_profile(DIR, ...)`: turns a backend's raw output (sites.csv with
  `location` empty, objects.csv, modules.csv, backend.json) into a complete
  profile: symbolizes `location`, fills missing build-ids, writes meta.json;
  the same for each child process's under DIR/children/.
- `read_sites_by_tier()`: sites_by_tier.csv of a placed sim profile;
  `backend_params()`: meta.json's backend parameters, where readable.
Merging several profiles is reader.merge()."""

import csv
import json
import os
import platform
import re
import socket
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Dict, Iterable, List, Optional

import numpy as np
import pandas as pd

from tierwise import __version__

if TYPE_CHECKING:
    from tierwise.progress import Progress

FORMAT = "tierwise-profile"
VERSION = 1
VERSIONS = (1,)

# Declared schemas: column -> kind. "int" columns may be empty (not
# measured) and are read as pandas nullable Int64; "str" as str.
SITE_COLUMNS = {
    "site": "int",
    "stack": "str",
    "location": "str",
    "allocs": "int",
    "bytes_allocated": "int",
    "peak_bytes": "int",
    "loads": "int",
    "stores": "int",
    "llc_load_misses": "int",
    "llc_store_misses": "int",
    "writebacks": "int",
    # optional (sim backend; empty = not measured, as from the pmu backend):
    # the LLC misses that continue a sweep of consecutive lines
    "llc_stream_misses": "int",
    # optional (sim backend's interval model, profiler/sim/tw_interval.c): of
    # the LLC misses, those overlapped with an earlier outstanding miss (or
    # prefetched), those whose address depends on an earlier missing load;
    # the sum over misses of the misses in flight with each
    "llc_overlapped_misses": "int",
    "llc_dependent_misses": "int",
    "llc_inflight_misses": "int",
    # optional (sim backend): locked read-modify-writes on the site
    "atomics": "int",
    # optional (sim backend): of the LLC misses in the site's objects, those
    # in each of MISS_SLICES equal slices of an object's extent (slice 0 at
    # its start): where in its objects a site is hot (advisor heads)
    **{f"llc_miss_slice{i}": "int" for i in range(16)},
    # optional (sim backend with --alloc-fn): for a site of pool hand-outs,
    # the stack of the pool's heap block site its hand-outs lay in (the one
    # that held most of their bytes); empty for other sites
    "pool_stack": "str",
    # optional (sample backend, added within v1): the page samples taken of
    # the site's objects, the confidence of its estimated counts (0: none
    # taken, its counts say nothing)
    "samples": "int",
}
MISS_SLICES = 16
SLICE_COLUMNS = [f"llc_miss_slice{i}" for i in range(MISS_SLICES)]
# Trailing columns a backend may leave out (read as not measured).
OPTIONAL_COLUMNS = [
    "llc_stream_misses",
    "llc_overlapped_misses",
    "llc_dependent_misses",
    "llc_inflight_misses",
    "atomics",
] + SLICE_COLUMNS + ["pool_stack", "samples"]
# The header every sites.csv starts with, as in advisor/FORMATS.md.
REQUIRED_SITE_COLUMNS = [c for c in SITE_COLUMNS if c not in OPTIONAL_COLUMNS]
COUNT_COLUMNS = [c for c, k in SITE_COLUMNS.items() if k == "int" and c != "site"]
OBJECT_COLUMNS = {"site": "int", "size": "int", "alloc_time": "int", "free_time": "int"}
MODULE_COLUMNS = {"module": "str", "path": "str", "build_id": "str"}
# sites_by_tier.csv (format `tierwise-sites-by-tier` v1): per site and tier.
SITES_BY_TIER_COLUMNS = {"site": "int", "tier": "str"} | {
    c: "int" for c in COUNT_COLUMNS if c not in ("peak_bytes",)
}
SITES_BY_TIER_OPTIONAL = ["allocs", "bytes_allocated"] + OPTIONAL_COLUMNS
PSEUDO_SITES = ("[static]", "[stack]", "[unknown]")


@dataclass
class Profile:
    """One profile, or several merged. `sites` is indexed by `site` (0..N-1)
    with SITE_COLUMNS; `objects` has OBJECT_COLUMNS plus `profile` (index
    into `paths`); `meta` is the list of meta.json dicts, one per path."""

    paths: list
    meta: list
    sites: pd.DataFrame
    objects: pd.DataFrame
    modules: pd.DataFrame
    depth: int = 6
    notes: list = field(default_factory=list)
    # stacks of sites placed whole, never split into a DRAM head: pool
    # blocks whose hand-outs were folded in (reader.fold_handouts), whose
    # accesses are not known by position in the block
    whole: set = field(default_factory=set)

    @property
    def placeable(self) -> pd.DataFrame:
        """Sites a placement can move: heap sites, not pseudo-sites."""
        return self.sites[~self.sites["stack"].isin(PSEUDO_SITES)]


def count(value: Any) -> float:
    """One cell of a count column (Int64) as a float: NaN where not
    measured."""
    return float("nan") if pd.isna(value) else float(value)


def read_csv(
    path: Path, schema: Dict[str, str], required: bool = True, optional: Iterable[str] = ()
) -> pd.DataFrame:
    """A CSV file of `schema` (column -> "int" | "str"): int columns as
    Int64 (empty: NA), str columns as str; `optional` columns the file may
    lack are added empty. ValueError naming the file, column, row and value."""
    if not path.exists():
        if required:
            raise ValueError(f"{path}: file missing (is this a tierwise profile directory?)")
        return pd.DataFrame(
            {c: pd.Series(dtype="Int64" if k == "int" else "object") for c, k in schema.items()}
        )
    if path.stat().st_size == 0:
        raise ValueError(f"{path}: empty file (expected a header line: {','.join(schema)})")
    try:
        df = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[])
    except pd.errors.ParserError as e:
        raise ValueError(f"{path}: not a valid CSV file ({str(e).splitlines()[0]})") from None
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not UTF-8 text (byte {e.start}); not a profile file") from None
    for c in set(optional) & set(schema) - set(df.columns):
        df[c] = ""  # an optional column the writer did not have: not measured
    missing = [c for c in schema if c not in df.columns]
    if missing:
        raise ValueError(
            f"{path}: missing column '{missing[0]}' (expected columns: {','.join(schema)})"
        )
    df = df[list(schema)].copy()
    for col, kind in schema.items():
        if kind == "str":
            df[col] = df[col].astype(str)
            continue
        raw = df[col].str.strip()
        bad = ~raw.str.fullmatch(r"\d*")
        # Int64: at most 2^63-1 (19 digits; pandas overflowed past it)
        big = (~bad & (raw.str.len() >= 19)).astype(bool)
        if big.any():
            big &= raw.where(big, "0").map(lambda v: int(v) > 2**63 - 1).astype(bool)
        for mask, why in ((bad, "is not a non-negative integer"), (big, "is over 2^63-1")):
            if mask.any():
                i = int(np.flatnonzero(mask.to_numpy())[0])
                raise ValueError(f"{path}: column '{col}' row {i + 2}: value '{df[col].iloc[i]}' {why}")
        df[col] = pd.to_numeric(raw.replace("", None), errors="raise").astype("Int64")
    return df


def read_meta(d: Path) -> dict:
    """meta.json of profile directory `d`, checked: format, version, not
    `complete: false`."""
    p = Path(d) / "meta.json"
    if not p.exists():
        raise ValueError(f"{p}: file missing (an incomplete profile, or not a profile directory)")
    try:
        meta = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(f"{p}: not valid JSON ({e})") from None
    except UnicodeDecodeError as e:
        raise ValueError(f"{p}: not UTF-8 text (byte {e.start}); not a profile file") from None
    except RecursionError:
        raise ValueError(f"{p}: not valid JSON (nested too deeply)") from None
    if not isinstance(meta, dict):
        raise ValueError(f"{p}: expected a JSON object")
    if meta.get("format") != FORMAT:
        raise ValueError(f"{p}: field 'format' is {meta.get('format')!r}, expected '{FORMAT}'")
    if meta.get("version") not in VERSIONS:
        raise ValueError(
            f"{p}: field 'version' is {meta.get('version')!r}; this tierwise reads "
            f"version {', '.join(map(str, VERSIONS))}"
        )
    if meta.get("complete") is False:
        raise ValueError(
            f"{p}: field 'complete' is false: the profiled run did not finish; profile again"
        )
    return meta


def backend_params(d: "os.PathLike[str] | str") -> dict:
    """meta.json's `backend_params` of profile directory `d`; {} where
    there is none or it cannot be read (callers take options from it where
    it has them)."""
    try:
        params = json.loads((Path(d) / "meta.json").read_text())["backend_params"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    return params if isinstance(params, dict) else {}


def read_profile(path: "os.PathLike[str] | str") -> Profile:
    """Read one profile directory; raise ValueError naming the file, column
    and value on any contract violation."""
    d = Path(path)
    if not d.is_dir():
        raise ValueError(f"{d}: no such profile directory")
    meta = read_meta(d)
    sites = read_csv(d / "sites.csv", SITE_COLUMNS, optional=OPTIONAL_COLUMNS)
    if sites.empty:
        raise ValueError(f"{d / 'sites.csv'}: no sites (the profile recorded no allocations)")
    if sites["site"].isna().any():
        raise ValueError(f"{d / 'sites.csv'}: column 'site' must not be empty")
    notes = []
    nostack = sites["stack"].str.strip().eq("")
    if nostack.any():
        # allocations with no frame outside the allocators (e.g. the runtime's
        # own): not placeable, counted with the unknown accesses
        sites.loc[nostack, "stack"] = "[unknown]"
        notes.append(
            f"{d / 'sites.csv'}: {int(nostack.sum())} site(s) without a user frame "
            "counted as [unknown]"
        )
    if sites["site"].duplicated().any():
        dup = int(sites.loc[sites["site"].duplicated(), "site"].iloc[0])
        raise ValueError(f"{d / 'sites.csv'}: column 'site': value '{dup}' appears twice")
    # the optional files, each missing one said in one line (issue 36)
    if not (d / "objects.csv").exists():
        notes.append(
            f"{d}: no objects.csv: no allocation timeline, so sites are packed by their "
            "peak bytes as if all were live at once"
        )
    if not (d / "modules.csv").exists():
        notes.append(
            f"{d}: no modules.csv: no build-ids to tell another build of the program, "
            "nor module paths for `tierwise rewrite`"
        )
    objects = read_csv(d / "objects.csv", OBJECT_COLUMNS, required=False)
    for col in ("site", "size", "alloc_time"):  # free_time empty: never freed
        if objects[col].isna().any():
            i = int(np.flatnonzero(objects[col].isna().to_numpy())[0])
            raise ValueError(f"{d / 'objects.csv'}: column '{col}' row {i + 2}: must not be empty")
    unknown = ~objects["site"].isin(sites["site"])
    if unknown.any():
        raise ValueError(
            f"{d / 'objects.csv'}: column 'site': value '{objects['site'][unknown].iloc[0]}' "
            "is not a site of sites.csv"
        )
    modules = read_csv(d / "modules.csv", MODULE_COLUMNS, required=False)
    sites["location"] = sites["location"].replace("nan", "")
    objects["profile"] = 0
    return Profile(
        [d],
        [meta],
        sites.set_index("site", drop=False),
        objects,
        modules,
        depth=int(meta.get("depth", 6) or 6),
        notes=notes,
    )


def read_sites_by_tier(d: "os.PathLike[str] | str", profile: Profile) -> Optional[pd.DataFrame]:
    """sites_by_tier.csv of profile directory `d` (read as `profile`):
    SITES_BY_TIER_COLUMNS plus `stack`; None when the profile has none."""
    p = Path(d) / "sites_by_tier.csv"
    if not p.exists():
        return None
    df = read_csv(p, SITES_BY_TIER_COLUMNS, optional=SITES_BY_TIER_OPTIONAL)
    unknown = ~df["site"].isin(profile.sites.index)
    if unknown.any():
        raise ValueError(
            f"{p}: column 'site': value '{df['site'][unknown].iloc[0]}' is not a site "
            "of sites.csv"
        )
    df["stack"] = df["site"].map(profile.sites["stack"])
    return df


# Raw backend output: read and rewritten as rows of strings (csv module),
# so that finish_profile() keeps every value as the backend wrote it.


def read_rows(path: "os.PathLike[str] | str", columns: List[str]) -> List[Dict[str, str]]:
    """The rows of a raw CSV file whose header starts with `columns`."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
        header = rows[0].keys() if rows else None
    if header is not None and list(header)[: len(columns)] != columns:
        raise ValueError(f"{path}: columns {list(header)} are not {columns}")
    return rows


def open_private(tmp: Path, mode: str = "w") -> IO[Any]:
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


def write_rows(path: "os.PathLike[str] | str", columns: List[str], rows: Iterable[dict]) -> None:
    """Write a CSV file with header `columns` (other keys of a row are left
    out) through a private temporary file renamed over `path`."""
    tmp = Path(f"{path}.tmp.{os.getpid()}")
    with open_private(tmp) as f:
        w = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    os.replace(tmp, path)


def write_backend_params(outdir: "os.PathLike[str] | str", params: dict) -> None:
    """backend.json of a backend's raw output: its parameters, which
    finish_profile() makes meta.json's `backend_params`."""
    (Path(outdir) / "backend.json").write_text(json.dumps(params, indent=1) + "\n")


def read_modules(outdir: "os.PathLike[str] | str") -> List[Dict[str, str]]:
    """modules.csv rows with build-ids filled from the files where empty."""
    from tierwise.symbolize import build_id

    path = Path(outdir) / "modules.csv"
    if not path.exists():
        return []
    rows = read_rows(path, list(MODULE_COLUMNS))
    for r in rows:
        if not r.get("build_id") and Path(r["path"]).is_file():
            r["build_id"] = build_id(r["path"])
    return rows


def _host() -> dict:
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


def child_name(command: Any) -> str:
    """The directory name part of a child process's profile
    (children/<command>.<pid>): its executable's basename made safe as a
    file name, "process" where unknown."""
    try:
        name = re.sub(r"[^\w.+-]", "_", Path(command[0]).name)
    except (IndexError, TypeError):
        name = ""
    return name or "process"


def finish_profile(
    outdir: "os.PathLike[str] | str",
    cmd: Iterable[str],
    backend: str,
    info: dict,
    start: datetime,
    end: datetime,
    depth: int = 6,
    rank: Optional[int] = None,
    known: Optional[dict] = None,
    progress: Optional["Progress"] = None,
) -> dict:
    """Complete the profile in `outdir` (see module doc) and those of the
    child processes the backend followed (info["params"]["children"]: one
    profile per process, each with its own command line where the backend
    saw it); returns the program's meta dict plus `n_sites` and
    `processes`, [(command name, sites)] of the program and each child.
    `info`: the backend's {"exit_status", "params", "clock", "estimated",
    "pid"}; `rank`: the MPI rank, or None; `known`: frames already
    symbolized (symbolize.Symbolizer), shared by the program and its
    children, whose libraries are mostly the same; `progress` is told what
    it does."""
    cmd, known = list(cmd), {} if known is None else known
    meta = _finish_one(outdir, cmd, backend, info, start, end, depth, rank, known, progress)
    processes = [(Path(cmd[0]).name, meta["n_sites"])]
    for child in (info.get("params") or {}).get("children", []):
        kid = dict(
            info,
            exit_status=child.get("exit_status"),
            signal=child.get("signal"),  # the child's own, not the program's
            pid=child["pid"],
            params={},
            complete=child.get("complete"),
        )
        kid_cmd = child.get("command") or cmd
        km = _finish_one(Path(outdir) / child["dir"], kid_cmd, backend, kid, start, end, depth,
                         rank, known, progress, f" (child process {child['pid']})")
        processes.append((Path(kid_cmd[0]).name, km["n_sites"]))
    return dict(meta, processes=processes)


def _finish_one(outdir, cmd, backend, info, start, end, depth, rank, known, progress, which=""):
    """finish_profile() of one process's raw output."""
    from tierwise.symbolize import Symbolizer

    if progress:
        progress.who = f"{Path(cmd[0]).name}{which}"
        progress.doing("reading the raw profile")
    outdir = Path(outdir)
    params = dict(info.get("params") or {})
    bj = outdir / "backend.json"
    if bj.exists():
        try:
            params.update(json.loads(bj.read_text()))
        except ValueError as e:
            raise ValueError(f"{bj}: not valid JSON ({e})") from None
    modules = read_modules(outdir)
    sites_path = outdir / "sites.csv"
    sites = read_rows(sites_path, REQUIRED_SITE_COLUMNS) if sites_path.exists() else []
    sym = Symbolizer({m["module"]: m["path"] for m in modules}, known=known)
    todo = [s for s in sites if not s.get("location") and not s["stack"].startswith("[")]
    for s, loc in zip(todo, sym.locations([s["stack"] for s in todo], progress)):
        s["location"] = loc
    if progress:
        progress.doing("writing the profile")
    if sites_path.exists():
        extra = [c for c in OPTIONAL_COLUMNS if sites and c in sites[0]]
        write_rows(sites_path, REQUIRED_SITE_COLUMNS + extra, sites)
    if modules:
        write_rows(outdir / "modules.csv", list(MODULE_COLUMNS), modules)
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
        "signal": info.get("signal") if killed else None,
        "complete": sites_path.exists()
        and (info["complete"] if info.get("complete") is not None else not killed),
        "pid": info.get("pid", params.get("pid")),
        "rank": rank,
        "host": _host(),
        "modules": [{k: m[k] for k in MODULE_COLUMNS} for m in modules],
    }
    tmp = outdir / f"meta.json.tmp.{os.getpid()}"
    with open_private(tmp) as f:
        f.write(json.dumps(meta, indent=1) + "\n")
    os.replace(tmp, outdir / "meta.json")
    return dict(meta, n_sites=len(sites))
