# SPDX-License-Identifier: MIT
"""The `pmu` profiling backend: runs the command with
LD_PRELOAD=libtierwise-pmu.so, the runtime's interposer in census mode (the
same sites, anonymous mmaps and modules with build-ids as the alloc
backend) that also samples precise memory events (profiler/pmu: Intel
MEM_LOAD_RETIRED:L3_MISS + MEM_INST_RETIRED:ALL_STORES, AMD IBS op) on every
thread and attributes sample addresses to live heap objects. Counts are
samples x period: estimates (meta.json says so).

`available()` opens the default events once with tierwise-pmu-probe and
returns its exact failure (errno text, perf_event_paranoid).

formats.profile (pandas) is imported where it is used: `tierwise doctor`
imports this module and must start in milliseconds (issue 36)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Mapping

from tierwise import paths
from tierwise.sizes import count_option, size_option

PROBE = "bin/tierwise-pmu-probe"
PRELOAD = "lib/libtierwise-pmu.so"


def add_arguments(group: Any) -> None:
    group.add_argument(
        "--pmu-period",
        type=count_option(1, 2**62),
        default=20011,
        metavar="N",
        help="sampling period in events (default 20011; IBS rounds to a multiple of 16)",
    )
    group.add_argument(
        "--pmu-min-bytes",
        type=size_option(0, 2**62),
        default=4096,
        metavar="SIZE",
        help="track objects of at least SIZE bytes; smaller ones count as [unknown] (default 4096)",
    )


def probe(
    mode: str = "open", period: int = 20011, env: Mapping[str, str] | None = None
) -> tuple[bool, str]:
    """Runs tierwise-pmu-probe MODE; returns (ok, text)."""
    exe = paths.native(PROBE)
    if not exe.exists():
        return False, paths.missing(exe)
    out = subprocess.run(
        [str(exe), mode, str(period)], capture_output=True, text=True, env=env, check=False
    )
    text = (out.stdout + out.stderr).strip()
    return out.returncode == 0, text.removeprefix("error: ")


def available(args: argparse.Namespace | None = None) -> tuple[bool, str]:
    ok, text = probe("open", getattr(args, "pmu_period", 20011))
    return ok, text


def run_library(cmd: list[str], outdir: Path, settings: Mapping[str, str],
                what: str, quiet: bool = False) -> tuple[int, dict[str, Any]]:
    """Runs CMD with LD_PRELOAD=libtierwise-pmu.so writing its raw profile
    into OUTDIR (the environment `settings` on top of TIERWISE_PMU_OUT);
    returns the exit status and pmu.json (removed), or says that the
    program wrote no `what` profile. The pmu and sample backends' run;
    `quiet`: the program's stdout goes nowhere (a run before the last of
    pooled runs)."""
    lib = paths.native(PRELOAD)
    outdir = Path(outdir)
    # A previous run's files must not pass for this one's; a stale census
    # claim would make the program write its files under per-pid names.
    for name in ("sites.csv", "objects.csv", "modules.csv", "pmu.json", ".census-owner"):
        (outdir / name).unlink(missing_ok=True)
    env = dict(os.environ)
    env["LD_PRELOAD"] = f"{lib}:{env['LD_PRELOAD']}" if env.get("LD_PRELOAD") else str(lib)
    env["TIERWISE_PMU_OUT"] = str(outdir.resolve())
    env.update(settings)
    rc = subprocess.run(cmd, env=env, check=False,
                        stdout=subprocess.DEVNULL if quiet else None).returncode
    pmu_json = outdir / "pmu.json"
    if not pmu_json.exists():
        raise FileNotFoundError(
            f"{pmu_json}: the profiled command wrote no {what} profile (exit status {rc})"
        )
    (outdir / ".census-owner").unlink(missing_ok=True)  # the census's claim
    params = json.loads(pmu_json.read_text())
    pmu_json.unlink()
    return rc, params


def finished(outdir: Path, rc: int, params: dict[str, Any]) -> dict[str, Any]:
    """backend.json from `params`, and what `run` returns."""
    from tierwise.formats import profile as profile_format

    profile_format.write_backend_params(outdir, params)
    return {
        "exit_status": rc if rc >= 0 else None,
        "signal": -rc if rc < 0 else None,
        "params": params,
        "clock": "ns",
        "estimated": True,
        "pid": params.get("pid"),
    }


def run(args: argparse.Namespace, cmd: list[str], outdir: Path) -> dict[str, Any]:
    ok, why = available(args)
    if not ok:
        raise FileNotFoundError(f"pmu backend unavailable: {why}")
    print(f"tierwise profile: pmu: sampling every {args.pmu_period} events", file=sys.stderr)
    rc, params = run_library(
        cmd,
        outdir,
        {
            "TIERWISE_DEPTH": str(getattr(args, "depth", 6)),
            "TIERWISE_PMU_PERIOD": str(args.pmu_period),
            "TIERWISE_PMU_MIN_BYTES": str(args.pmu_min_bytes),
        },
        "pmu",
    )
    params["min_bytes"] = args.pmu_min_bytes
    params["scaling"] = "each sample counts sample_period events"
    return finished(Path(outdir), rc, params)
