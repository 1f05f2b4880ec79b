# SPDX-License-Identifier: MIT
"""The tierwise pipeline as library functions: profile a command, advise a
placement, report a profile's sites, run a command with a placement,
simulate a placement, compare placements across DRAM budgets, rewrite
sources for a placement. Each returns a dataclass; the verbs in
tierwise/commands/ parse arguments, call these and print the result. Long
steps say what they do on stderr (`tierwise VERB: ...`); the user's program
runs as a subprocess (under Valgrind or the runtime), tierwise itself never
does: one step calls the next in this process."""

from __future__ import annotations

import argparse
import importlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Iterable, Optional, Sequence

from tierwise import paths
from tierwise.cli import UserError
from tierwise.messages import MOST, listed

if TYPE_CHECKING:
    import pandas as pd

    from tierwise.reader import Profile
    from tierwise.select import Selection
    from tierwise.tiers import TierModel
    from tierwise.transfer import Transfer

BACKENDS = ["sim", "pmu", "sample", "alloc"]
REPORT = "run-report.json"


def _note(verb: str, msg: str) -> None:
    print(f"tierwise {verb}: {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- profile


def backend(name: str) -> ModuleType:
    """The profiling backend module tierwise.backends.NAME: `add_arguments
    (parser)` (optional), `available(args) -> (bool, reason)` and `run(args,
    cmd, outdir) -> dict` with {"exit_status", "params", "clock", ...}."""
    return importlib.import_module(f"tierwise.backends.{name}")


def backend_options(name: str, argv: Sequence[str] = ()) -> argparse.Namespace:
    """The options of backend NAME given as on the command line (`--llc-size
    256K --roi markers`), every other one at its default: the backend's own
    add_arguments is their one definition."""
    p = argparse.ArgumentParser(prog=f"tierwise profile --backend {name}", add_help=False)
    mod = backend(name)
    if hasattr(mod, "add_arguments"):
        mod.add_arguments(p)
    opts, rest = p.parse_known_args(list(argv))
    if rest:
        raise UserError(f"{' '.join(rest)}: not an option of the {name} backend")
    opts.backend = name
    return opts


def choose_backend(args: argparse.Namespace) -> str:
    """Resolve --backend auto: pmu where its events open, else sim, else
    (no Valgrind tool) sample."""
    if args.backend != "auto":
        return str(args.backend)
    ok, why = backend("pmu").available(args)
    if ok:
        _note("profile", "using the pmu backend")
        return "pmu"
    sim_ok, sim_why = backend("sim").available(args)
    if not sim_ok and backend("sample").available(args)[0]:
        _note("profile", f"pmu backend unavailable ({why}), sim too ({sim_why}); using sample")
        return "sample"
    _note("profile", f"pmu backend unavailable ({why}); using sim")
    return "sim"


@dataclass
class Profiled:
    """A profile directory just written (advisor/FORMATS.md)."""

    outdir: Path
    backend: str
    exit_status: Optional[int]  # the program's, None when unknown
    meta: dict
    seconds: float
    warning: Optional[str] = None  # e.g. the LLC is larger than the footprint
    signal: Optional[int] = None  # the signal that ended the program, if one did

    def status(self) -> str:
        """How the program ended: `exit status 0`, `killed by SIGSEGV
        (signal 11)`, or `exit status unknown`."""
        if self.signal:
            try:
                name = signal.Signals(self.signal).name
            except ValueError:
                name = "a signal"
            return f"killed by {name} (signal {self.signal})"
        return f"exit status {self.exit_status if self.exit_status is not None else 'unknown'}"

    @property
    def returncode(self) -> int:
        """The program's exit status, 1 when it has none (killed, unknown)."""
        s = self.exit_status
        return s if isinstance(s, int) and s >= 0 else 1


def profile(
    cmd: Sequence[str],
    outdir: Path,
    backend_name: str = "auto",
    options: Optional[argparse.Namespace] = None,
    depth: int = 6,
    rank: Optional[int] = None,
) -> Profiled:
    """Run CMD unmodified under a profiling backend (sim, pmu, alloc or auto)
    and write the profile directory OUTDIR; `options` are the backends'
    options (backend_options, or the verb's parsed arguments). Says on
    stderr what it found (the LLC warning, sites, exit status)."""
    cmd = list(cmd)
    if not cmd:
        raise UserError("no command given: tierwise profile [options] -- CMD ARGS...")
    if depth < 1 or depth > 64:
        raise UserError(f"--depth {depth}: must be between 1 and 64")
    args = argparse.Namespace(**vars(options or argparse.Namespace()))
    args.backend, args.depth = backend_name, depth
    name = choose_backend(args)
    roi = getattr(args, "roi", "all")
    if name != "sim" and roi not in (None, "all") and not (name == "sample" and roi == "markers"):
        raise UserError(
            f"--roi {args.roi}: only the sim backend counts a region of interest"
            + (" other than markers" if name == "sample" else "")
            + f" (the {name} backend counts "
            + ("between TIERWISE_ROI_BEGIN/END only)" if name == "sample" else "the whole run)")
        )
    pool_fns = (getattr(args, "alloc_fn", None) or []) + (getattr(args, "free_fn", None) or [])
    if name != "sim" and pool_fns:
        raise UserError(
            f"--alloc-fn/--free-fn {pool_fns[0]}: only the sim backend sees a pool's "
            f"hand-outs (the {name} backend sees malloc only)"
        )
    ok, why = backend(name).available(args)
    if not ok:
        raise UserError(f"{name} backend unavailable: {why}")
    outdir = Path(outdir)
    created = not outdir.exists()
    outdir.mkdir(parents=True, exist_ok=True)
    if not os.access(outdir, os.W_OK):
        raise UserError(f"{outdir}: profile directory is not writable")
    from tierwise.formats import profile as profile_format
    from tierwise.progress import Progress

    start = datetime.now(timezone.utc)
    t0 = time.monotonic()
    try:
        info = backend(name).run(args, cmd, outdir)
    except (ValueError, OSError):
        if created:  # refused before the run, or nothing to keep: leave no directory
            shutil.rmtree(outdir, ignore_errors=True)
        raise
    end = datetime.now(timezone.utc)
    ran, cpu0 = time.monotonic() - t0, _cpu_seconds()
    with Progress("tierwise profile: post-processing") as progress:
        meta = profile_format.finish_profile(
            outdir, cmd, name, info, start, end, depth=depth, rank=rank, progress=progress
        )
        warn = None
        if name == "sim" and meta.get("complete", True):
            from tierwise import reader
            from tierwise.advice import llc_warning

            progress.who = Path(cmd[0]).name
            progress.doing("reading the profile back")
            try:
                warn = llc_warning(reader.read_profiles([outdir]))
            except ValueError:  # no sites: nothing to compare
                warn = None
    post = time.monotonic() - t0 - ran
    procs = meta["processes"]
    each = listed((f"{n:,} sites of {p}" for p, n in procs), sep=", ", unique=False)
    if len(procs) > MOST:  # a job of many: its total, then a few processes
        each = f"{sum(n for _, n in procs):,} sites of {len(procs)} processes ({each})"
    _note("profile", f"post-processing {each}: {post:.1f} s ({_cpu_seconds() - cpu0:.1f} s CPU)")
    if warn:
        _note("profile", f"warning: {warn}")
    res = Profiled(outdir, name, info.get("exit_status"), meta, time.monotonic() - t0, warn,
                   info.get("signal"))
    _note(
        "profile",
        f"{name} backend, {res.seconds:.1f} s ({ran:.1f} s the run, {post:.1f} s "
        f"post-processing), {meta.get('n_sites', '?')} sites, {res.status()} -> {outdir}",
    )
    return res


def _cpu_seconds() -> float:
    """CPU time of this process and of its waited-for children so far."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


# ---------------------------------------------------------------- advise


@dataclass
class Advised:
    """A placement chosen under a DRAM budget, and what it was chosen from."""

    placement: dict  # placement.json's document (advisor/FORMATS.md)
    table: "pd.DataFrame"  # the site table (advice.site_table)
    selection: "Selection"
    costs: "pd.DataFrame"  # cost.site_costs
    model: "TierModel"
    profile: "Profile"
    policy: str
    lifetime: bool
    partial: bool
    transfer: Optional["Transfer"] = None  # advise --target: the carried profile
    warning: Optional[str] = None


def read_profiles(
    paths: Sequence[Any], mixed_programs: bool = False
) -> tuple["Profile", Optional[str]]:
    """Profiles merged by site, pool hand-out sites folded into their block
    sites (reader.fold_handouts: what `tierwise run` can place), and the
    LLC warning for them (or None)."""
    from tierwise import reader
    from tierwise.advice import llc_warning

    profile = reader.read_profiles(list(paths), mixed_programs)
    # placements are for `tierwise run`: a pool's hand-outs count toward its block
    profile, _ = reader.fold_handouts(profile)
    return profile, llc_warning(profile)


def advise(
    profiles: Sequence[Any],
    budget: str,
    tier_model: Optional[str] = None,
    policy: str = "cost",
    lifetime: bool = True,
    partial: bool = True,
    target: Optional[str] = None,
    target_llc: Optional[str] = None,
    mixed_programs: bool = False,
) -> Advised:
    """Choose the DRAM sites of the merged PROFILES under BUDGET (a size or
    N% of the peak live footprint); with `target` (an allocation census of a
    bigger run), for that run (transfer.py)."""
    from tierwise import tiers
    from tierwise.advice import advise as choose
    from tierwise.sizes import parse_size

    carried, warn = None, None
    if target:
        from tierwise import transfer

        llc = parse_size(target_llc, "--target-llc") if target_llc else None
        carried = transfer.read(list(profiles), target, llc)
        prof = carried.profile
    elif target_llc:
        raise ValueError("--target-llc needs --target CENSUS")
    else:
        prof, warn = read_profiles(profiles, mixed_programs)
    model = tiers.load(tier_model)
    placement, table, sel, costs = choose(
        prof, model, budget, policy, lifetime=lifetime, partial=partial
    )
    placement["notes"] = list(model.notes) + placement["notes"]
    if carried is not None:
        placement["target"] = carried.to_json()
    return Advised(
        placement, table, sel, costs, model, prof, policy, lifetime, partial, carried, warn
    )


def budget_curve(adv: Advised) -> "pd.DataFrame":
    """Modelled time of every policy against the DRAM budget for the profile
    an advice was made from (the plot of `advise --plot`)."""
    from tierwise.comparison import compare_table

    df, _ = compare_table(
        adv.profile,
        adv.model,
        costs=adv.costs,
        baselines=False,
        lifetime=adv.lifetime,
        partial=adv.partial,
    )
    return df


@dataclass
class Reported:
    """A profile's sites as `tierwise report` shows them."""

    profile: "Profile"
    model: "TierModel"
    table: "pd.DataFrame"  # advice.site_table, no placement
    coverage: dict  # heap / each pseudo-site -> its LLC misses
    footprint: int  # peak live bytes
    measured: bool  # access counts present (False: an allocation census)


def report(profiles: Sequence[Any], tier_model: Optional[str] = None) -> Reported:
    """The site table of the merged PROFILES by modelled benefit of DRAM,
    and where their LLC misses fall (placeable sites, pseudo-sites)."""
    from tierwise import cost, reader, tiers
    from tierwise.advice import site_table
    from tierwise.select import peak_footprint

    prof = reader.read_profiles(list(profiles))
    model = tiers.load(tier_model)
    table = site_table(prof, cost.site_costs(prof.sites, model), {})
    sites = prof.sites
    miss = sum(sites[c].astype("float64").fillna(0) for c in ("llc_load_misses", "llc_store_misses"))
    heap = ~sites["stack"].isin(reader.PSEUDO_SITES)
    cover = {"heap": float(miss[heap].sum())}
    for ps in reader.PSEUDO_SITES:
        cover[ps] = float(miss[sites["stack"] == ps].sum())
    measured = bool(sites[["loads", "stores", "llc_load_misses"]].notna().any().any())
    return Reported(prof, model, table, cover, peak_footprint(prof), measured)


# ---------------------------------------------------------------- run


@dataclass
class PlacedRun:
    """A run of a command with the runtime applying a placement."""

    returncode: int
    report: Path  # the named process's run report (it may be missing)
    stdout: Optional[str] = None  # when captured


def run_placed(
    cmd: Sequence[str],
    placement: Path,
    report: Path,
    pmem_dir: Path,
    dram_limit: Optional[str] = None,
    capture: bool = False,
) -> PlacedRun:
    """Run CMD with LD_PRELOAD=libtierwise-runtime.so applying PLACEMENT,
    the run report written to REPORT (what `tierwise run` does, without its
    summary). The program's stdout is returned when `capture`, else
    dropped; its stderr passes through."""
    from tierwise.formats import placement as placement_mod
    from tierwise.preload import preload_blocker, run_env

    cmd = list(cmd)
    placement_mod.load(str(placement))  # one clear error before running
    why = preload_blocker(cmd[0])
    if why:
        raise UserError(f"{why}: the placement cannot be applied")
    Path(pmem_dir).mkdir(mode=0o700, parents=True, exist_ok=True)
    env = run_env(str(placement), str(pmem_dir), str(report), dram_limit)
    try:
        r = subprocess.run(
            cmd, env=env, text=True, stdout=subprocess.PIPE if capture else subprocess.DEVNULL
        )
    except OSError as e:
        raise UserError(f"{cmd[0]}: cannot run: {e.strerror}") from e
    return PlacedRun(r.returncode, Path(report), r.stdout if capture else None)


# ---------------------------------------------------------------- simulate


def sim_args(placement: dict, llc_size: Optional[Any] = None) -> list:
    """Sim backend options of the placed run, taken from the profile the
    placement was made from (its meta.json), so that both describe the same
    thing: its region of interest (--roi), its pool functions (--alloc-fn,
    --free-fn) and its cache geometry, unless --llc-size is given. A
    placement for a target run (advise --target) names the census first:
    the first profile with a region or a cache counts, and the cache is the
    target's (`target.llc_bytes`)."""
    from tierwise.formats.profile import backend_params

    meta: dict = {}
    for prof in placement.get("profiles", []):
        meta = backend_params(prof)
        if meta.get("roi") or meta.get("cache"):
            break
    out: list = []
    roi = meta.get("roi")
    if isinstance(roi, dict) and roi.get("mode") == "markers":
        out += ["--roi", "markers"]
    elif isinstance(roi, dict) and roi.get("mode") == "function" and roi.get("function"):
        out += ["--roi", str(roi["function"])]
    for key, opt in (("alloc_fns", "--alloc-fn"), ("free_fns", "--free-fn")):
        fns = meta.get(key)
        out += [a for f in (fns if isinstance(fns, list) else []) for a in (opt, str(f))]
    target = placement.get("target")
    if not llc_size and isinstance(target, dict) and target.get("llc_bytes"):
        llc_size = target["llc_bytes"]
    if llc_size:
        return out + ["--llc-size", str(llc_size)]
    cache = meta.get("cache")
    if not isinstance(cache, dict):
        return out
    opts = {
        "llc_size": "--llc-size",
        "llc_ways": "--llc-ways",
        "l1_size": "--l1-size",
        "l1_ways": "--l1-ways",
        "line_size": "--line-size",
    }
    return out + [a for k, o in opts.items() if cache.get(k) for a in (o, str(cache[k]))]


def _placed_bytes(report: Path) -> int:
    """Bytes the runtime placed according to the named program's run report
    (0 when there is none, or the runtime did not serve the allocations, e.g.
    under Valgrind)."""
    from tierwise.formats.report import read as read_report

    if not report.exists():
        return 0
    return sum(int(v) for v in read_report(report).get("totals", {}).values())


@dataclass
class Simulated:
    """The modelled time of a placement as the runtime applied it; the
    fields are simulate --json's keys, in its order."""

    seconds: float
    baseline: float
    per_tier: dict  # tier -> {loads, stores, llc_*_misses, writebacks, ..., seconds}
    source: str
    all_fast_seconds: float
    profile: str  # the placed sim profile
    run_report: Optional[str]  # the run report the counts were split by
    named_report: str
    other_processes: list = field(default_factory=list)
    ratio_to_dram: Optional[float] = None

    def to_json(self) -> dict:
        return asdict(self)


def simulate(
    placement_path: Path,
    model: "TierModel",
    cmd: Sequence[str],
    work: Path,
    profile_dir: Optional[Path] = None,
    llc_size: Optional[str] = None,
    pmem_dir: Optional[Path] = None,
) -> Simulated:
    """Sim profile of CMD with the runtime applying the placement; per-tier
    counts from the tool's sites_by_tier.csv, else from the run report
    (tierwise/simulation.py)."""
    from tierwise import cost, reader
    from tierwise.formats import placement as placement_format
    from tierwise.formats.report import other_reports
    from tierwise.formats.report import read as read_report
    from tierwise.preload import runtime_vars
    from tierwise.simulation import counts_from_report, read_site_tiers, resolve_default_tier

    cmd = list(cmd)
    placement_path = Path(placement_path)
    placement = placement_format.load(placement_path)
    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    report = (work / REPORT).resolve()
    for old in [report, *map(Path, other_reports(report))]:
        old.unlink(missing_ok=True)
    pmem = Path(pmem_dir or work / "pmem").resolve()
    pmem.mkdir(parents=True, exist_ok=True)
    given = profile_dir is not None
    if profile_dir is None:
        profile_dir = work / "profile"
        _note(
            "simulate",
            f"sim profile of {' '.join(cmd)} with the placement applied -> {profile_dir}",
        )
        # CMD under `env` with the runtime's variables (FORMATS.md), so that
        # only the profiled program, not Valgrind, gets the runtime; the sim
        # backend follows the exec (--trace-children=yes).
        env = runtime_vars(str(placement_path.resolve()), str(pmem), str(report))
        placed = ["env", *[f"{k}={v}" for k, v in env.items()], *cmd]
        opts = backend_options("sim", sim_args(placement, llc_size))
        prof = profile(placed, Path(profile_dir), "sim", opts)
        if prof.exit_status != 0:
            raise UserError(f"sim profile of {cmd[0]} failed (exit status {prof.returncode})")
    profile_dir = Path(profile_dir)
    sites = reader.read_profiles([profile_dir])
    counts = read_site_tiers(profile_dir, sites)
    report_path = None
    if counts is not None:
        counts = resolve_default_tier(counts, model)
        source = "sim profile with the placement applied (sites_by_tier.csv)"
    else:
        if not _placed_bytes(report):
            why = (
                f"the profile {profile_dir} has no per-tier counts (no sites_by_tier.csv: "
                "it was not taken with a placement applied)"
                if given
                else "no per-tier counts or placed bytes from the sim run"
            )
            _note(
                "simulate",
                f"{why}; running {cmd[0]} natively with the placement for its run report",
            )
            r = run_placed(cmd, placement_path, report, pmem)
            if r.returncode != 0:
                raise UserError(
                    f"{cmd[0]} with the placement {placement_path} failed "
                    f"(exit status {r.returncode})"
                )
        if not report.exists():
            raise UserError(f"the runtime wrote no run report of {cmd[0]} at {report}")
        report_path = report
        counts = counts_from_report(sites, read_report(report_path), placement, model)
        source = "sim profile counts split by the run report's bytes per tier"
    res = cost.modelled_time(counts, model)
    costs = cost.site_costs(sites.sites, model)
    all_fast = cost.placement_seconds(
        sites.sites, costs, model, set(costs.index[costs["placeable"]])
    )
    return Simulated(
        seconds=res["seconds"],
        baseline=res["baseline"],
        per_tier=res["per_tier"],
        source=source,
        all_fast_seconds=all_fast,
        profile=str(profile_dir),
        run_report=str(report_path) if report_path else None,
        named_report=str(report),
        other_processes=[str(q) for q in other_reports(report)],
        ratio_to_dram=res["seconds"] / all_fast if all_fast else None,
    )


# ---------------------------------------------------------------- compare


def work_instructions(profile_dir: Any) -> int:
    """Instructions the profiled run executed in the part its counts
    describe (the region of interest, else the whole run); 0 if unknown."""
    from tierwise.formats.profile import backend_params

    params = backend_params(profile_dir)
    roi = params.get("roi") or {}
    n = roi.get("instructions") if roi.get("mode") not in (None, "all") else None
    return int(n if n is not None else params.get("instructions") or 0)


def simulated_rows(
    profile: "Profile",
    model: "TierModel",
    fractions: Sequence[float],
    cmd: Sequence[str],
    out: Path,
    lifetime: bool = True,
    partial: bool = True,
) -> "pd.DataFrame":
    """The cost policy's placement at each budget, simulated for real
    (simulate()): rows with source 'simulated'. Each run's ratio is to its
    own all-DRAM time (its counts with every site in the fast tier), so runs
    of unequal work (an asynchronous kernel converging in a different number
    of sweeps) are compared with like; a run whose work differs from the
    profile's by more than 1% is warned about."""
    import pandas as pd

    from tierwise.advice import advise as choose
    from tierwise.formats import placement as placement_format

    prof_insns = work_instructions(profile.paths[0])
    rows = []
    for f in fractions:
        placement, _, sel, _ = choose(
            profile, model, f"{f * 100:g}%", "cost", lifetime=lifetime, partial=partial
        )
        pl = out / "placements" / f"cost-{f * 100:g}.json"
        pl.parent.mkdir(parents=True, exist_ok=True)
        placement_format.write(placement, pl)
        _note("compare", f"simulating the cost placement at {f:.0%}")
        res = simulate(pl, model, cmd, out / "simulate" / f"cost-{f * 100:g}")
        insns = work_instructions(res.profile)
        if prof_insns and insns and abs(insns / prof_insns - 1) > 0.01:
            _note(
                "compare",
                f"warning: the simulated run at {f:.0%} executed "
                f"{insns:,} instructions, the profile {prof_insns:,} ({insns / prof_insns - 1:+.1%}): "
                "the program's work differs between runs (e.g. an asynchronous kernel's "
                "iterations); its ratio is to its own all-"
                f"{model.fast.name} time, not the profile's",
            )
        rows.append(
            {
                "policy": "cost",
                "budget_fraction": f,
                "budget_bytes": sel.budget,
                "fast_bytes": sel.used_bytes,
                "modelled_seconds": res.seconds,
                "ratio_to_dram": res.ratio_to_dram,
                "source": "simulated",
                "all_dram_seconds": res.all_fast_seconds,
                "instructions": insns,
                "profile_instructions": prof_insns,
            }
        )
    return pd.DataFrame(rows)


@dataclass
class Compared:
    """compare.csv's rows (advisor/FORMATS.md) and what they came from."""

    table: "pd.DataFrame"
    notes: list
    profiles: list  # the profile directories compared
    profile: "Profile"
    model: "TierModel"
    warning: Optional[str] = None


def compare(
    out: Path,
    fractions: Sequence[float],
    model: "TierModel",
    cmd: Sequence[str] = (),
    profiles: Sequence[Any] = (),
    profile_options: Sequence[str] = (),
    oracle: bool = False,
    simulate_cost: bool = False,
    lifetime: bool = True,
    partial: bool = True,
) -> Compared:
    """All-DRAM, all-slow, first-fit, static ratio, every policy (and the
    oracle) at each budget fraction, by modelled time, from PROFILES or from
    a sim profile of CMD (written to OUT/profile with `profile_options`, the
    sim backend's options as on the command line); with `simulate_cost`
    also the cost policy's placements simulated for real. The LLC warning
    goes to stderr before the long steps."""
    import pandas as pd

    from tierwise.comparison import compare_table

    cmd = list(cmd)
    if profiles and profile_options:
        raise UserError(
            f"{' '.join(profile_options)}: profiling options, but --profile reuses a "
            "profile; drop one"
        )
    if not profiles:
        pdir = Path(out) / "profile"
        _note("compare", f"profiling {' '.join(cmd)} (sim backend) -> {pdir}")
        prof = profile(cmd, pdir, "sim", backend_options("sim", profile_options))
        if prof.exit_status != 0:
            raise UserError(
                f"profiling {cmd[0]} failed with exit status {prof.returncode}; "
                "see the messages above"
            )
        profiles = [pdir]
    sites, warn = read_profiles(profiles)
    if warn:
        _note("compare", f"warning: {warn}")
    from tierwise.progress import Progress

    step = "modelling every policy" + (" and the oracle" if oracle else "") + " at each budget"
    with Progress("tierwise compare") as progress:
        progress.doing(step)
        df, notes = compare_table(
            sites, model, fractions, with_oracle=oracle, lifetime=lifetime, partial=partial
        )
    if simulate_cost:
        if not cmd:
            raise UserError("--simulate needs the command: tierwise compare ... -- CMD ARGS...")
        df = pd.concat(
            [df, simulated_rows(sites, model, fractions, cmd, Path(out), lifetime, partial)],
            ignore_index=True,
        )
    return Compared(df, notes, list(profiles), sites, model, warn)


# ---------------------------------------------------------------- rewrite


SYSTEM_DIRS = ("/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/")


def _is_system_library(mod: str, path: Any) -> bool:
    """A shared library of the system (libgomp, libstdc++): its frames are
    library code, not a user file, whether or not it is found."""
    if path:
        return str(path).startswith(SYSTEM_DIRS)
    return bool(re.match(r"(lib|ld-).*\.so(\.|$)", mod))


def find_modules(
    placement: dict, binaries: Iterable[str], placed_only: bool = True
) -> tuple[dict[str, Path], list[tuple[str, str]]]:
    """(module basename -> path, one line per user module not found) for the
    modules the placement's stacks name. A module is looked up in --binary
    paths, its placement `modules[].path`, build/examples and the working
    directory, and used only if its build-id is the placement's."""
    default = placement.get("default_tier", "dram")
    wanted = {
        f.split("+", 1)[0]
        for s in placement.get("sites", [])
        if not placed_only or s.get("tier") != default
        for f in str(s.get("stack", "")).split(";")
        if "+" in f
    }
    from tierwise.symbolize import build_id

    recorded = {m.get("module"): m for m in placement.get("modules", [])}
    found: dict[str, Path] = {}
    missing: list[tuple[str, str]] = []
    candidates = [Path(b) for b in binaries]
    candidates += [Path(m["path"]) for m in placement.get("modules", []) if m.get("path")]
    candidates += [paths.native("examples"), Path.cwd()]
    for mod in sorted(wanted):
        want = recorded.get(mod, {}).get("build_id")
        why = []
        tried = set()
        for c in candidates:
            path = (c / mod if c.is_dir() else c).resolve()
            if path.name != mod or not path.is_file() or path in tried:
                continue
            tried.add(path)
            if want and build_id(path) != want:
                why.append(f"{path} has another build-id (rebuilt since profiling?)")
                continue
            found[mod] = path
            break
        if mod in found:
            continue
        where = recorded.get(mod, {}).get("path", "")
        if _is_system_library(mod, where):
            continue
        if not why:
            why.append(f"no file at {where}" if where else "the placement records no path for it")
        missing.append((mod, f"module {mod}: " + "; ".join(why)))
    return found, missing


def add_frames(placement: dict, modules: dict[str, Path]) -> int:
    """Adds `frames` (symbolize.Symbolizer.frames) to the sites that lack
    them; returns how many got them."""
    from tierwise.symbolize import Symbolizer

    sym = Symbolizer({mod: str(path) for mod, path in modules.items()})
    if not sym.tool:
        raise UserError("llvm-symbolizer not found: install llvm-19 (Debian package llvm-19)")
    todo = [
        s
        for s in placement.get("sites", [])
        if not s.get("frames") and not str(s.get("stack", "")).startswith("[")
    ]
    sym.resolve([f for s in todo for f in str(s.get("stack", "")).split(";")])
    done = 0
    for s in todo:
        frames = sym.frames(str(s.get("stack", "")))
        if any(fr["line"] for fr in frames):
            s["frames"] = frames
            done += 1
    return done


@dataclass
class Rewritten:
    """What `rewrite` did: the rewriter's exit status (0 all placed sites
    rewritten, 1 some not, 2 bad arguments) and how many of the sites
    without frames it symbolized."""

    returncode: int
    symbolized: int = 0
    unsymbolized: int = 0


def rewrite(
    placement_file: str,
    files: Sequence[str],
    extra: Sequence[str] = (),
    build_path: Optional[str] = None,
    binaries: Sequence[str] = (),
    in_place: bool = False,
    patch: Optional[str] = None,
    root: Optional[str] = None,
) -> Rewritten:
    """Apply a placement as a source patch: give the sites without `frames`
    their symbolized frames (modules found by find_modules), then run
    build/bin/tierwise-rewrite on FILES (compiler flags `extra` after "--",
    else the compile database at build_path, filtered to the configuration in
    the binary when a source is compiled more than once)."""
    import tempfile

    from tierwise import compiledb
    from tierwise.formats import placement as placement_format

    tool = paths.artifact("bin/tierwise-rewrite")
    files, extra = list(files), list(extra)
    if not files:
        raise UserError("no FILES given: tierwise rewrite --placement P -p BUILD_DIR FILES...")
    try:
        placement = placement_format.load(placement_file)
    except ValueError as e:
        raise UserError(str(e)) from None
    need = [
        s
        for s in placement.get("sites", [])
        if not s.get("frames") and not str(s.get("stack", "")).startswith("[")
    ]
    placement_path = placement_file
    tmp = None
    n = 0
    filter_db = bool(build_path) and not extra
    modules, missing = find_modules(placement, binaries) if need or filter_db else ({}, [])
    if need:
        # A hand-written placement (modules[] does not name the module) whose
        # sites all have a location can do without: one frame per site.
        recorded = {m.get("module") for m in placement.get("modules", [])}
        unlocated = {
            f.split("+", 1)[0]
            for s in need
            if not s.get("location")
            for f in str(s.get("stack", "")).split(";")
        }
        fatal = [why for mod, why in missing if mod in recorded or mod in unlocated]
        if fatal:
            raise UserError(
                f"{placement_file}: cannot symbolize its stacks: {fatal[0]}"
                + (f" (and {len(fatal) - 1} more)" if len(fatal) > 1 else "")
                + "; give --binary PATH (the profiled program or a directory with it)"
            )
        for mod, why in missing:
            _note(
                "rewrite",
                f"note: {why}, and the placement's modules[] does not "
                f"name it: its sites are found by their `location` (--binary adds "
                f"inline frames and columns)",
            )
        n = add_frames(placement, modules) if modules else 0
        if modules and not n:
            raise UserError(
                f"{placement_file}: no line information for its stacks in "
                + listed((str(p) for p in modules.values()), sep=", ")
                + ": rebuild with -g (the same build otherwise) and profile again"
            )
        _note(
            "rewrite",
            f"symbolized {n} of {len(need)} sites without frames "
            f"({listed((str(p) for p in modules.values()), sep=', ')})",
        )
        if n:
            tmp = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
            tmp.close()
            placement_format.write(placement, tmp.name)
            placement_path = tmp.name
    cmd = [str(tool), "--placement", placement_path]
    dbdir = None
    if build_path and filter_db:
        # Sources compiled more than once: the configuration in the binary.
        # The patch's root stays the one the user's database gives.
        cmd += ["--compile-db-dir", build_path]
        dbdir = tempfile.TemporaryDirectory(prefix="tierwise-rewrite-")
        build_path, notes = compiledb.filtered_database(
            build_path, files, list(modules.values()), dbdir.name
        )
        for note in notes:
            _note("rewrite", f"note: {note}")
    if build_path:
        cmd += ["-p", build_path]
    if in_place:
        cmd.append("-i")
    if patch:
        cmd += ["-o", patch]
    if root:
        cmd += ["--root", root]
    try:
        rc = subprocess.run(cmd + files + extra).returncode
    finally:
        if tmp:
            os.unlink(tmp.name)
        if dbdir:
            dbdir.cleanup()
    return Rewritten(rc, n, len(need) - n)
