#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Post-processing of a sim profile with ten thousand sites (issue 38; not a
timed test). A whole-run sim profile of mpi-pagerank started as an Open MPI
singleton, its helper daemon orted profiled as a child process (as a user's
job runs): ~12,000 sites in the program and ~10,000 in orted, most of them
Open MPI's and PMIx's. Each took minutes of Python in a user's job, with
nothing printed meanwhile: locations compared every pair of sites whose
locations printed alike (4,000 through mca_base_var_register alone), and
llvm-symbolizer ran once per library.

Runs `tierwise profile --backend sim` of this tree on it and prints what it
said of the run's (Valgrind's) time and of its post-processing. Then the
profile's raw output (the profile with its locations emptied, meta.json
removed) is post-processed again - locations, build-ids, meta.json for the
program and orted, the LLC warning's read-back, as `tierwise profile` does
- by the previous release (--baseline, default main at 410378c, taken with
git archive) and by this tree, each on its own copy, side by side: each
one's CPU time (its process and the llvm-symbolizer processes it ran), wall
time and longest silence on stderr, and whether the three wrote the same
sites.csv (sites, locations, counts) for the program and orted. Then
`tierwise advise` of the program's and orted's profiles together (merged
by site) by both trees: CPU and wall time, and whether they wrote the same
placement.json. Exits 1 unless this tree's post-processing takes at most
--max-cpu seconds of CPU (default 20), no more than the baseline's, and
both trees write the same sites and placement.

  python test/bench/profile_postprocess.py [--scale 8] [--baseline REV]
                                           [--max-cpu 20] [--keep DIR]
Environment: TIERWISE_BUILD_DIR (default build/).
"""

import argparse
import csv
import filecmp
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("TIERWISE_BUILD_DIR", ROOT / "build"))
PYTHON = str(ROOT / ".venv" / "bin" / "python") if (ROOT / ".venv").exists() else sys.executable
MPI_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_btl": "self,vader",
}

# The post-processing `tierwise profile` does after the run, in the tree
# given by the working directory (pipeline.profile): this tree's, or
# 410378c's, whose finish_profile did one process (it has no `processes`)
# and pipeline.profile then each child process, and said nothing meanwhile
# (no `progress`; the venv's editable install would still import a module
# the tree lacks from this tree, so the signature says which it is).
FINISH = """
import contextlib, inspect, json, sys
from datetime import datetime, timezone
from pathlib import Path
from tierwise import reader
from tierwise.advice import llc_warning
from tierwise.formats.profile import finish_profile
progress = None
if "progress" in inspect.signature(finish_profile).parameters:
    from tierwise.progress import Progress
    progress = Progress("tierwise profile: post-processing")
d, cmd = Path(sys.argv[1]), json.loads(sys.argv[2])
t = datetime.now(timezone.utc)
info = {"exit_status": 0, "params": json.loads((d / "backend.json").read_text()),
        "clock": "instructions", "estimated": False}
with progress or contextlib.nullcontext():
    opts = {"progress": progress} if progress else {}
    meta = finish_profile(d, cmd, "sim", info, t, t, **opts)
    if "processes" not in meta:
        for child in info["params"].get("children", []):
            kid = dict(info, exit_status=child.get("exit_status"), signal=child.get("signal"),
                       pid=child["pid"], params={}, complete=child.get("complete"))
            finish_profile(d / child["dir"], child.get("command") or cmd, "sim", kid, t, t)
    llc_warning(reader.read_profiles([d]))
"""


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(cmd, cwd=None, env=None):
    """Run cmd: (wall s, CPU s of it and the processes it waited for, its
    stderr lines, longest time between two of its stderr lines (from the
    start to the first, the last to the end too))."""
    cpu0, t0 = children_cpu(), time.monotonic()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    lines, last, gap = [], t0, 0.0
    for line in proc.stderr:
        now = time.monotonic()
        gap, last = max(gap, now - last), now
        lines.append(line.rstrip("\n"))
    rc = proc.wait()
    end = time.monotonic()
    if rc:
        sys.exit(f"profile_postprocess: {cmd[:4]} failed ({rc}):\n" + "\n".join(lines[-20:]))
    return end - t0, children_cpu() - cpu0, lines, max(gap, end - last)


def site_files(d):
    return [d / "sites.csv"] + sorted((d / "children").glob("*/sites.csv"))


def unfinish(prof, raw):
    """The raw output a profile was finished from: its locations emptied
    (the pseudo-sites' stay: the backend writes them), no meta.json."""
    shutil.copytree(prof, raw)
    for f in [raw / "meta.json"] + sorted((raw / "children").glob("*/meta.json")):
        f.unlink()
    for f in site_files(raw):
        with open(f, newline="") as fh:
            rows = list(csv.reader(fh))
        loc = rows[0].index("location")
        for r in rows[1:]:
            if not r[1].startswith("["):
                r[loc] = ""
        with open(f, "w", newline="") as fh:
            csv.writer(fh, lineterminator="\n").writerows(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", type=int, default=8)
    ap.add_argument("--baseline", default="410378c", help="git revision (default 410378c)")
    ap.add_argument("--max-cpu", type=float, default=20.0)
    ap.add_argument("--keep", type=Path, help="keep the raw and finished profiles here")
    args = ap.parse_args()
    prog = BUILD / "examples" / "mpi-pagerank"
    if not prog.exists():
        sys.exit(f"profile_postprocess: {prog} not built (Open MPI missing?)")
    tmp = tempfile.mkdtemp(prefix="tw-post-")
    out = args.keep or Path(tmp)
    out.mkdir(parents=True, exist_ok=True)
    try:
        base = Path(tmp) / "tree"  # the baseline's advisor/
        base.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.baseline, "advisor"],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
        cmd = [str(prog), "-g", str(args.scale)]
        env = {k: v for k, v in os.environ.items() if k != "OMPI_MCA_ess_singleton_isolated"}
        env.update(MPI_ENV)
        prof, raw = out / "profile", out / "raw"
        for d in (prof, raw):
            shutil.rmtree(d, ignore_errors=True)
        print(f"profile_postprocess: tierwise profile --backend sim -- {' '.join(cmd)} "
              "(a singleton) ...", flush=True)
        prof_wall, _, said, _ = timed([str(BUILD / "bin" / "tierwise"), "profile", "--backend", "sim",
                                  "-o", str(prof), "--", *cmd], env=env)
        said = [l for l in said if l.startswith("tierwise profile: ") and "post-processing" in l]
        unfinish(prof, raw)
        runs = {}
        trees = (("previous release " + args.baseline, base / "advisor"),
                 ("this tree", ROOT / "advisor"))
        for name, tree in trees:
            d = out / ("replay-baseline" if tree != ROOT / "advisor" else "replay-current")
            shutil.rmtree(d, ignore_errors=True)
            shutil.copytree(raw, d)
            print(f"profile_postprocess: post-processing with {name} ...", flush=True)
            runs[name] = (d, *timed([PYTHON, "-c", FINISH, str(d), json.dumps(cmd)], cwd=tree))
        sites = [sum(1 for _ in open(f)) - 1 for f in site_files(raw)]
        print(f"\n{' + '.join(f'{n:,}' for n in sites)} sites (program + child processes); "
              f"tierwise profile took {prof_wall:.1f} s and said:\n  " + "\n  ".join(said) + "\n")
        print(f"{'post-processing':32} {'CPU s':>8} {'wall s':>8} {'silent s':>9}")
        for name, (_, wall, cpu, _, gap) in runs.items():
            print(f"{name:32} {cpu:8.1f} {wall:8.1f} {gap:9.1f}")
        (old, _, old_cpu, _, _), (new, _, new_cpu, _, _) = runs.values()
        same = all(len(site_files(d)) == len(site_files(prof)) and all(
            filecmp.cmp(a, b, shallow=False) for a, b in zip(site_files(d), site_files(prof)))
            for d in (old, new))
        print(f"\nratio this tree / previous release: {new_cpu / old_cpu:.3f} (CPU)")
        print(f"sites.csv of the program and its children the same in all three: {same}")
        # advise on the program's and orted's profiles merged by site
        kids = [str(k) for k in sorted((prof / "children").glob("*"))]
        adv = {}
        for name, tree in trees:
            pl = out / f"placement-{'current' if tree == ROOT / 'advisor' else 'baseline'}.json"
            adv[name] = (pl, *timed([PYTHON, "-m", "tierwise", "advise", str(prof), *kids,
                                     "--dram-budget", "20%", "-o", str(pl)], cwd=tree)[:2])
        print(f"\n{'advise program + children':32} {'CPU s':>8} {'wall s':>8}")
        for name, (_, wall, cpu) in adv.items():
            print(f"{name:32} {cpu:8.1f} {wall:8.1f}")
        (pl_old, _, _), (pl_new, _, _) = adv.values()
        same_pl = filecmp.cmp(pl_old, pl_new, shallow=False)
        print(f"placement.json the same: {same_pl}")
        same = same and same_pl
        ok = same and new_cpu <= args.max_cpu and new_cpu <= old_cpu
        print("PASS" if ok else f"FAIL (CPU at most {args.max_cpu:g} s and no more than the "
              "previous release's, same sites)")
        return 0 if ok else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
