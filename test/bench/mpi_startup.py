#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Start-up of an Open MPI singleton under the runtime with a one-site
placement (issue 22, item 1; not a timed test). Open MPI, PMIx and hwloc
make ~12,000 distinct call paths at MPI_Init; unwinding each of them (with
libunwind, whose caches block every signal around their lock and around
dl_iterate_phdr) took the start-up of `mpi-pagerank -g 8` from 52M to 221M
instructions and 28 to 57,000 rt_sigprocmask calls (program and orted).

Prints, for the program alone, under the runtime without a placement, and
under the runtime with each of three placements made from a census of the
same command (issue 40 item 5): one site rooted in the program
(mpi-pagerank's xmalloc site of build_local, in --tier), one site rooted in
Open MPI (the libopen-pal site of the most bytes, in --tier), and every
site of the census (~12,000; all DRAM but build_local's):
- rt_sigprocmask calls of the whole job (`strace -f -c`: program and orted),
- instructions of the program's process (callgrind, deterministic up to
  Open MPI's own variation between runs, ~3%), whole run and up to the end
  of MPI_Init,
and the ratios to the program alone (the large placement with its
compiled form in the placement cache, as every process after the first
reads it, and with the cache off: the JSON read); with --placement FILE (e.g. one
`tierwise advise` wrote from a sim profile of the same command), that
placement too. Also the job's other system calls (all but rt_sigprocmask
and clock_nanosleep).

  python test/bench/mpi_startup.py [--scale 8] [--tier pmem] [--runtime LIB]
                                   [--placement FILE]
Environment: TIERWISE_BUILD_DIR (default build/).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("TIERWISE_BUILD_DIR", ROOT / "build"))
MPI_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_btl": "self,vader",
    # OpenMP threads that wait sleep instead of spinning: under callgrind
    # (threads serialised) spinning added 3-6M instructions that varied
    # from run to run
    "OMP_WAIT_POLICY": "passive",
}


def census(prog, scale, out):
    """A census of the program: (rows of sites.csv, meta.json)."""
    prof = out / "prof"
    subprocess.run(
        [str(BUILD / "bin" / "tierwise"), "profile", "--backend", "alloc", "-o", str(prof),
         "--", str(prog), "-g", str(scale)],
        env={**os.environ, **MPI_ENV}, check=True, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    import csv

    rows = [r for r in csv.DictReader(open(prof / "sites.csv"))
            if not r["site"].startswith("[")]
    return rows, json.loads((prof / "meta.json").read_text())


def write_placement(path, meta, sites):
    placement = {
        "format": "tierwise-placement", "version": 1, "default_tier": "dram",
        "depth": meta["depth"], "modules": meta["modules"],
        "sites": [{"stack": r["stack"], "location": r["location"], "tier": t}
                  for r, t in sites],
    }
    path.write_text(json.dumps(placement, indent=1) + "\n")
    return path


def placements(rows, meta, tier, out):
    """The one-site placements - mpi-pagerank's build_local site (through
    xmalloc), and the site of the most bytes whose first frame is in Open
    MPI's libopen-pal - and every site of the census (all in DRAM but
    build_local's, in \p tier): {name: path}."""
    own = [r for r in rows if r["location"].startswith("build_local ")]
    if not own:
        sys.exit("mpi_startup: no build_local site in the census")
    pal = [r for r in rows if r["stack"].split(";")[0].startswith("libopen-pal.so")]
    if not pal:
        sys.exit("mpi_startup: no site rooted in libopen-pal in the census")
    pal.sort(key=lambda r: -int(r["bytes_allocated"] or 0))
    return {
        "one-site placement": write_placement(out / "one.json", meta, [(own[0], tier)]),
        "one site in libopen-pal": write_placement(out / "pal.json", meta, [(pal[0], tier)]),
        f"{len(rows)}-site placement": write_placement(
            out / "all.json", meta,
            [(r, tier if r is own[0] else "dram") for r in rows]),
    }


def syscalls(cmd, env, out):
    """The job's rt_sigprocmask calls and its other system calls, less
    clock_nanosleep: Open MPI's progress loops sleep in proportion to the
    run's time (under strace, on a loaded machine: 1,000 to 13,000)."""
    trace = out / "strace.txt"
    subprocess.run(["strace", "-f", "-c", "-o", str(trace), *cmd], env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    calls = {m[2]: int(m[1]) for m in re.finditer(
        r"^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)$", trace.read_text(), re.M)}
    calls.pop("total", None)
    calls.pop("clock_nanosleep", None)
    mask = calls.pop("rt_sigprocmask", 0)
    return mask, sum(calls.values())


def instructions(cmd, env, out):
    """The program process's instructions: the whole run, and up to the end
    of MPI_Init (--dump-after=PMPI_Init: its first dump)."""
    for f in out.glob("cg.out*"):
        f.unlink()
    r = subprocess.run(["valgrind", "--tool=callgrind", "--dump-after=PMPI_Init",
                        f"--callgrind-out-file={out / 'cg.out'}.%p", *cmd],
                       env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    m = re.search(r"Collected : (\d+)", r.stderr)
    init = [f for f in out.glob("cg.out.*.1")]
    if not m or not init:
        sys.exit(f"callgrind failed: {r.stderr[-400:]}")
    return int(m[1]), int(re.search(r"^summary: (\d+)", init[0].read_text(), re.M)[1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", type=int, default=8)
    ap.add_argument("--tier", default="pmem", help="the placed site's tier (default pmem)")
    ap.add_argument("--runtime", default=str(BUILD / "lib" / "libtierwise.so"))
    ap.add_argument("--placement", type=Path, help="also run with this placement")
    args = ap.parse_args()
    prog = BUILD / "examples" / "mpi-pagerank"
    with tempfile.TemporaryDirectory() as d:
        out = Path(d)
        (out / "pmem").mkdir()
        rows, meta = census(prog, args.scale, out)
        cmd = [str(prog), "-g", str(args.scale)]
        base = {**os.environ, **MPI_ENV}
        runs = {
            "program alone": base,
            "runtime, no placement": {**base, "LD_PRELOAD": args.runtime},
        }
        extra = {args.placement.name: args.placement.resolve()} if args.placement else {}
        for name, path in {**placements(rows, meta, args.tier, out), **extra}.items():
            runs["runtime, " + name] = {
                **base, "LD_PRELOAD": args.runtime, "TIERWISE_PLACEMENT": str(path),
                "TIERWISE_PMEM_DIR": str(out / "pmem"),
                # the placement cache (a large placement's compiled form):
                # the strace run writes it, callgrind's reads it
                "TIERWISE_CACHE_DIR": str(out / "cache"),
            }
            if name[0].isdigit():  # and without it: the JSON read
                runs[f"runtime, {name}, no cache"] = {
                    **runs["runtime, " + name], "TIERWISE_PLACEMENT_CACHE_MIN": "0"}
        res = {}
        for k, env in runs.items():
            print(f"mpi_startup: {k} ...", file=sys.stderr, flush=True)
            res[k] = (*syscalls(cmd, env, out), instructions(cmd, env, out))
    calls0, _, (ins0, init0) = res["program alone"]
    print(f"mpi-pagerank -g {args.scale}, singleton (orted started), one site in {args.tier}")
    print(f"{'':40} {'rt_sigprocmask':>15} {'other syscalls':>15} {'instructions':>14} {'ratio':>6}"
          f" {'to MPI_Init end':>16} {'ratio':>6}")
    for k, (calls, other, (ins, init)) in res.items():
        print(f"{k:40} {calls:>15,} {other:>15,} {ins:>14,} {ins / ins0:>6.2f}"
              f" {init:>16,} {init / init0:>6.2f}")
    print(f"extra rt_sigprocmask with the placement: {res['runtime, one-site placement'][0] - calls0:,}")


if __name__ == "__main__":
    main()
