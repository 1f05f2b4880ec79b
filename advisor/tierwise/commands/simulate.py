# SPDX-License-Identifier: MIT
"""`tierwise simulate`: the modelled time of a placement as it is actually
applied by the runtime (fallbacks included), with per-tier loads, misses and
writebacks. See tierwise/simulation.py for where the per-tier counts come
from."""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from tierwise import cost, reader, tiers
from tierwise.cli import UserError


def add_parser(sub):
    p = sub.add_parser(
        "simulate",
        help="modelled time of a placement as the runtime applies it",
        description="Run CMD with the runtime applying the placement and report "
        "per-tier loads, LLC misses, writebacks and the modelled time of the "
        "placement actually applied (fallbacks included). Counts come from the sim "
        "backend: a placed sim profile when the tool records tiers, else the "
        "unplaced sim profile split by the bytes per tier of the run report.",
    )
    p.add_argument("--placement", required=True, metavar="FILE", help="placement.json")
    p.add_argument(
        "--tiers",
        metavar="PRESET|FILE",
        help="tier model (default: the placement's tier_model, else " f"{tiers.DEFAULT_PRESET})",
    )
    p.add_argument("--profile", metavar="DIR", help="reuse this unplaced sim profile of CMD")
    p.add_argument("-o", "--output", metavar="DIR", help="work directory (default simulate.<pid>)")
    p.add_argument("--json", metavar="FILE", help="also write the result as JSON")
    p.add_argument(
        "--llc-size",
        metavar="SIZE",
        help="simulated LLC (default: the geometry of the placement's profile)",
    )
    p.add_argument(
        "--pmem-dir",
        metavar="DIR",
        help="directory for the pmem file kind (default DIR/pmem in the work directory)",
    )
    p.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- CMD ARGS...")
    return p


def _tw(*argv):
    return [sys.executable, "-m", "tierwise", *argv]


def sim_args(placement: dict, llc_size=None) -> list:
    """Sim backend options of the placed run, taken from the profile the
    placement was made from (its meta.json), so that both describe the same
    thing: its region of interest (--roi), its pool functions (--alloc-fn,
    --free-fn) and its cache geometry, unless --llc-size is given. A
    placement for a target run (advise --target) names the census first:
    the first profile with a region or a cache counts, and the cache is the
    target's (`target.llc_bytes`)."""
    meta = {}
    for prof in placement.get("profiles", []):
        try:
            meta = json.loads((Path(prof) / "meta.json").read_text())["backend_params"]
        except (OSError, ValueError, KeyError, TypeError):
            meta = {}
        if not isinstance(meta, dict) or meta.get("roi") or meta.get("cache"):
            break
    out = []
    roi = meta.get("roi") if isinstance(meta, dict) else None
    if isinstance(roi, dict) and roi.get("mode") == "markers":
        out += ["--roi", "markers"]
    elif isinstance(roi, dict) and roi.get("mode") == "function" and roi.get("function"):
        out += ["--roi", str(roi["function"])]
    for key, opt in (("alloc_fns", "--alloc-fn"), ("free_fns", "--free-fn")):
        fns = meta.get(key) if isinstance(meta, dict) else None
        out += [a for f in (fns if isinstance(fns, list) else []) for a in (opt, str(f))]
    target = placement.get("target")
    if not llc_size and isinstance(target, dict) and target.get("llc_bytes"):
        llc_size = target["llc_bytes"]
    if llc_size:
        return out + ["--llc-size", str(llc_size)]
    cache = meta.get("cache") if isinstance(meta, dict) else None
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


def _placed_command(placement_path: Path, report: Path, cmd, pmem_dir: Path) -> list:
    """CMD under `env` with the runtime variables (FORMATS.md), so that only
    the profiled program, not Valgrind or tierwise, gets the runtime; the sim
    backend follows the exec (--trace-children=yes)."""
    from tierwise import paths

    return [
        "env",
        f"LD_PRELOAD={paths.runtime_preload(os.environ)}",
        f"TIERWISE_PLACEMENT={placement_path.resolve()}",
        f"TIERWISE_REPORT={report}",
        f"TIERWISE_PMEM_DIR={pmem_dir}",
        *cmd,
    ]


REPORT = "run-report.json"


def _placed_bytes(report: Path) -> int:
    """Bytes the runtime placed according to the named program's run report
    (0 when there is none, or the runtime did not serve the allocations, e.g.
    under Valgrind)."""
    from tierwise.simulation import read_report

    if not report.exists():
        return 0
    return sum(int(v) for v in read_report(report).get("totals", {}).values())


def simulate(
    placement_path: Path, model, cmd, work: Path, profile_dir=None, llc_size=None, pmem_dir=None
) -> dict:
    """Sim profile of CMD with the runtime applying the placement; per-tier
    counts from the tool's sites_by_tier.csv, else from the run report."""
    from tierwise.simulation import (
        counts_from_report,
        other_reports,
        read_report,
        read_site_tiers,
        resolve_default_tier,
    )

    placement_path = Path(placement_path)
    placement = json.loads(placement_path.read_text())
    work.mkdir(parents=True, exist_ok=True)
    report = (work / REPORT).resolve()
    for old in [report, *map(Path, other_reports(report))]:
        old.unlink(missing_ok=True)
    pmem_dir = Path(pmem_dir or work / "pmem").resolve()
    pmem_dir.mkdir(parents=True, exist_ok=True)
    if profile_dir is None:
        profile_dir = work / "profile"
        print(
            f"tierwise simulate: sim profile of {' '.join(cmd)} with the placement applied "
            f"-> {profile_dir}",
            file=sys.stderr,
        )
        placed = _placed_command(placement_path, report, cmd, pmem_dir)
        sim = sim_args(placement, llc_size)
        r = subprocess.run(
            _tw("profile", "--backend", "sim", *sim, "-o", str(profile_dir), "--", *placed)
        )
        if r.returncode != 0:
            raise UserError(f"sim profile of {cmd[0]} failed (exit status {r.returncode})")
    profile = reader.read_profiles([profile_dir])
    counts = read_site_tiers(profile_dir, profile)
    report_path = None
    if counts is not None:
        counts = resolve_default_tier(counts, model)
        source = "sim profile with the placement applied (sites_by_tier.csv)"
    else:
        if not _placed_bytes(report):
            print(
                f"tierwise simulate: no per-tier counts or placed bytes from the sim run; running "
                f"{cmd[0]} natively with the placement for its run report",
                file=sys.stderr,
            )
            r = subprocess.run(
                _tw(
                    "run",
                    "--placement",
                    str(placement_path),
                    "--report",
                    str(report),
                    "--pmem-dir",
                    str(pmem_dir),
                    "--",
                    *cmd,
                ),
                stdout=subprocess.DEVNULL,
            )
            if r.returncode != 0:
                raise UserError(
                    f"tierwise run --placement {placement_path} failed "
                    f"(exit status {r.returncode})"
                )
        if not report.exists():
            raise UserError(f"the runtime wrote no run report of {cmd[0]} at {report}")
        report_path = report
        counts = counts_from_report(profile, read_report(report_path), placement, model)
        source = "sim profile counts split by the run report's bytes per tier"
    res = cost.modelled_time(counts, model)
    costs = cost.site_costs(profile.sites, model)
    all_fast = cost.placement_seconds(
        profile.sites, costs, model, set(costs.index[costs["placeable"]])
    )
    res.update(
        {
            "source": source,
            "all_fast_seconds": all_fast,
            "profile": str(profile_dir),
            "run_report": str(report_path) if report_path else None,
            "named_report": str(report),
            "other_processes": [str(q) for q in other_reports(report)],
            "ratio_to_dram": res["seconds"] / all_fast if all_fast else None,
        }
    )
    return res


def run(args):
    cmd = list(args.cmd)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        raise UserError("no command given: tierwise simulate --placement P -- CMD ARGS...")
    pl = Path(args.placement)
    if not pl.exists():
        raise UserError(f"--placement {pl}: no such file")
    spec = args.tiers or json.loads(pl.read_text()).get("tier_model")
    model = tiers.load(spec)
    work = Path(args.output or f"simulate.{os.getpid()}")
    res = simulate(pl, model, cmd, work, args.profile, args.llc_size, args.pmem_dir)
    print(f"counts from: {res['source']}")
    from tierwise.simulation import others_line

    others = others_line(res["named_report"], [Path(q) for q in res["other_processes"]])
    if others:
        print(f"{cmd[0]} only: {others}")
    print(
        f"{'tier':<8} {'loads':>14} {'stores':>14} {'llc misses':>12} {'writebacks':>12} {'seconds':>10}"
    )
    for t, c in res["per_tier"].items():
        print(
            f"{t:<8} {c['loads']:>14,} {c['stores']:>14,} "
            f"{c['llc_load_misses'] + c['llc_store_misses']:>12,} {c['writebacks']:>12,} "
            f"{c['seconds']:>10.4g}"
        )
    print(
        f"modelled time {res['seconds']:.4g} s (compute baseline {res['baseline']:.4g} s) = "
        f"{res['ratio_to_dram']:.3f}x all-{model.fast.name}"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1) + "\n")
    return 0
