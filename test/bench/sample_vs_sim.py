# SPDX-License-Identifier: MIT
"""The sample backend against the sim backend (issue 37): for each program,
(1) its run time unprofiled and under `profile --backend sample`, side by
side in one loop (the median of --repeat rounds each); (2) a sim profile of
the same run; (3) the cost placement at --budget of the peak footprint from
each profile, both priced by `tierwise simulate` (the sim tool running the
placed program): the sample placement's modelled time over the sim
placement's. Also the sites whose tier differs, with their sizes.

Run after `make build` (not in CI: minutes of Valgrind per program):
  .venv/bin/python test/bench/sample_vs_sim.py [-o DIR] [--programs P ...]
With --reprice it runs nothing: the sample profiles kept in DIR/P/sample*/
(their raw samples) are priced anew by the current model against the kept
sim profile (a model change measured on the same samples).
Programs are examples/ and examples/frameworks binaries in build/examples,
each run with its arguments from PROGRAMS; OMP_NUM_THREADS=2."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TW = ROOT / "build" / "bin" / "tierwise"
EX = ROOT / "build" / "examples"

PROGRAMS = {
    "pagerank-pull": ["-g", "20", "-n", "20"],
    "pagerank-push": ["-g", "20", "-n", "10"],
    "bfs": ["-g", "20"],
    "sssp": ["-g", "19"],
    "spmv-pagerank": ["-g", "19", "-n", "10"],
    "gb-pagerank": ["-g", "19", "-n", "10"],
    "ig-bfs": ["-g", "18"],
    "ig-pagerank": ["-g", "18"],
    "fwlike-pagerank": ["-g", "18"],
    "fwlike-bfs": ["-g", "20"],
}


# --big: the same programs two scales up (runs of 3-15 s, where the CLI's
# start and post-processing, about 0.4 s, are a small part)
def big(argv: list[str]) -> list[str]:
    out = list(argv)
    out[out.index("-g") + 1] = str(int(out[out.index("-g") + 1]) + 2)
    return out


def tw(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(TW), *args], text=True, capture_output=True, **kw)


def timed(cmd: list[str], env: dict) -> float:
    t0 = time.monotonic()
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr[-500:]}")
    return time.monotonic() - t0


def overhead(name: str, cmd: list[str], work: Path, repeat: int, env: dict) -> dict:
    """Median run times, round after round: unprofiled, the program under
    the sample library alone (what the sampling costs), and the whole
    `tierwise profile --backend sample` (with the CLI's start and
    post-processing)."""
    lib = ROOT / "build" / "lib" / "libtierwise-pmu.so"
    native, library, sampled = [], [], []
    for i in range(repeat):  # interleaved, so that load drifts hit all three
        native.append(timed(cmd, env))
        d = work / f"raw-{i}"
        d.mkdir(parents=True, exist_ok=True)
        library.append(timed(cmd, dict(env, LD_PRELOAD=str(lib), TIERWISE_PMU_OUT=str(d),
                                       TIERWISE_PMU_SOURCE="touch",
                                       TIERWISE_PMU_MIN_BYTES="16384")))
        d = work / f"sample-{i}"
        sampled.append(
            timed([str(TW), "profile", "--backend", "sample", "--force", "-o", str(d), "--", *cmd],
                  env)
        )
    n, lb, s = (statistics.median(x) for x in (native, library, sampled))
    return {"native_s": n, "library_s": lb, "sample_s": s, "library_ratio": lb / n,
            "ratio": s / n, "native_all": native, "library_all": library,
            "sample_all": sampled}


def simulate(placement: Path, cmd: list[str], work: Path, llc: str, prof: Path,
             env: dict) -> float:
    out = work.with_suffix(".json")
    r = tw("simulate", "--placement", str(placement), "--llc-size", llc, "--profile", str(prof),
           "-o", str(work), "--json", str(out), "--", *cmd, env=env)
    if r.returncode:
        sys.exit(f"simulate {placement}: {r.stderr[-800:]}")
    return float(json.loads(out.read_text())["seconds"])


def reprice_kept(work: Path, budget: str, tiers_name: str, llc: str) -> dict[str, float]:
    """--reprice: each kept sample profile of the sim profile's run
    (WORK/sample*/ whose backend.json keeps its raw samples) priced anew by
    the current model (sample.reprice on a copy), advised, and its
    placement priced with the sim profile's counts by the cost model, as
    `simulate` prices it (without the sim tool: the splits taken as
    uniform); the sim profile's own placement likewise. Its ratio, per
    kept profile."""
    import csv
    import shutil
    import tempfile

    sys.path.insert(0, str(ROOT / "advisor"))
    from tierwise import cost, reader, tiers
    from tierwise.backends import sample
    from tierwise.sizes import parse_size

    sim = work / "sim"
    model = tiers.load(tiers_name)
    prof = reader.read_profile(sim)
    costs = cost.site_costs(prof.sites, model)
    command = json.loads((sim / "meta.json").read_text())["command"]

    # sites by location (function, file:line, callers), which survives a
    # rebuild of the program that moves its code (the stacks' offsets)
    locs = prof.sites["location"].fillna("").astype(str)
    unique = set(locs[~locs.duplicated(keep=False)])

    def priced(pl: Path) -> float:
        doc = json.loads(pl.read_text())
        by = {x["stack"]: x for x in doc["sites"]}
        by_loc = {x.get("location", ""): x for x in doc["sites"] if x.get("location") in unique}
        # a site the placement does not name runs in its default tier (the
        # sample profile names no object under --sample-min-bytes)
        other = 1.0 if doc.get("default_tier", "dram") == "dram" else 0.0
        frac = {}
        for i, st in prof.sites["stack"].items():
            x = by_loc.get(locs[i]) or by.get(st)
            frac[i] = (1.0 if x["tier"] == "dram" else x.get("dram_fraction", 0.0)) if x else other
        return cost.placement_seconds(prof.sites, costs, model, frac)

    def advised(d: Path, pl: Path) -> Path:
        r = tw("advise", str(d), "--dram-budget", budget, "--tiers", tiers_name, "-o", str(pl))
        if r.returncode:
            sys.exit(f"advise {d}: {r.stderr[-800:]}")
        return pl

    tmp = Path(tempfile.mkdtemp(prefix="tw-reprice-"))
    base = priced(advised(sim, tmp / "sim.json"))
    out = {}
    for d in sorted(work.glob("sample*")):
        try:
            meta = json.loads((d / "meta.json").read_text())
            kept = json.loads((d / "backend.json").read_text())
        except (OSError, ValueError):
            continue
        if meta.get("command") != command or "samples" not in kept:
            continue  # another run's scale, or kept before raw samples were
        c = tmp / d.name
        shutil.copytree(d, c)
        rows = list(csv.DictReader(open(c / "sites.csv")))
        with open(c / "sites.csv", "w", newline="") as f:  # as the library wrote it
            w = csv.DictWriter(f, [k for k in rows[0] if k != "llc_stream_misses"],
                               extrasaction="ignore")
            w.writeheader()
            w.writerows(rows)
        cols = kept["samples"]["columns"]
        raw = {int(k): dict(zip(cols, v)) for k, v in kept["samples"]["sites"].items()}
        secs = (kept.get("seconds") or (kept.get("roi") or {}).get("seconds")
                or kept["ticks"] * kept["tick_us"] * 1e-6)  # (kept before "seconds" was)
        sample.reprice(c / "sites.csv", raw, parse_size(llc), secs)
        out[d.name] = priced(advised(c, tmp / f"{d.name}.json")) / base
    shutil.rmtree(tmp, ignore_errors=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", default="build/bench-sample", type=Path)
    ap.add_argument("--programs", nargs="+", default=list(PROGRAMS))
    ap.add_argument("--budget", default="20%")
    ap.add_argument("--llc-size", default="32M")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tiers", default="optane-appdirect")
    ap.add_argument("--big", action="store_true", help="two scales up (see big())")
    ap.add_argument("--no-timing", action="store_true",
                    help="only the placements (no run times: another load may run)")
    ap.add_argument("--timing-only", action="store_true",
                    help="only the run times (no sim profile, no placements)")
    ap.add_argument("--sample-runs", type=int, default=1, metavar="N",
                    help="the sample profile pools N runs (profile --sample-runs)")
    ap.add_argument("--reprice", action="store_true",
                    help="run nothing: price the kept sample profiles anew with the current "
                         "model, against the kept sim profile (reprice_kept)")
    args = ap.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS="2")
    rows = []
    if args.reprice:
        import math

        every: dict[str, list[float]] = {}
        for name in args.programs:
            got = reprice_kept(args.output / name, args.budget, args.tiers, args.llc_size)
            print(f"{name:18s} " + " ".join(f"{k} {v:.4f}x" for k, v in got.items()), flush=True)
            for k, v in got.items():
                every.setdefault(k, []).append(v)
        for k, v in every.items():
            print(f"{k}: {len(v)} programs, geomean {math.exp(sum(map(math.log, v)) / len(v)):.4f}x, "
                  f"within 3% on {sum(x <= 1.03 for x in v)}")
        return
    for name in args.programs:
        work = args.output / name
        work.mkdir(parents=True, exist_ok=True)
        cmd = [str(EX / name), *(big(PROGRAMS[name]) if args.big else PROGRAMS[name])]
        if not args.no_timing:
            print(f"# {name}: timing", file=sys.stderr, flush=True)
        row: dict = {"program": name}
        if not args.no_timing:
            row.update(overhead(name, cmd, work, args.repeat, env))
        if args.timing_only:
            rows.append(row)
            print(f"{name:18s} native {row['native_s']:.2f} s, sampled {row['library_ratio']:.3f}x, "
                  f"with the CLI {row['ratio']:.3f}x", flush=True)
            (args.output / "timing.json").write_text(json.dumps(rows, indent=1))
            continue
        sim = work / "sim"
        if not (sim / "meta.json").exists():
            print(f"# {name}: sim profile", file=sys.stderr, flush=True)
            r = tw("profile", "--backend", "sim", "--llc-size", args.llc_size, "--force", "-o",
                   str(sim), "--", *cmd, env=env)
            if r.returncode:
                sys.exit(f"sim profile {name}: {r.stderr[-800:]}")
        smp = work / "sample"
        r = tw("profile", "--backend", "sample", "--llc-size", args.llc_size, "--force",
               "--sample-runs", str(args.sample_runs), "-o", str(smp), "--", *cmd, env=env)
        if r.returncode:
            sys.exit(f"sample profile {name}: {r.stderr[-800:]}")
        times = {}
        for label, prof in (("sim", sim), ("sample", smp)):
            pl = work / f"placement-{label}.json"
            r = tw("advise", str(prof), "--dram-budget", args.budget, "--tiers", args.tiers,
                   "-o", str(pl))
            if r.returncode:
                sys.exit(f"advise {label} {name}: {r.stderr[-800:]}")
            print(f"# {name}: simulating the {label} placement", file=sys.stderr, flush=True)
            times[label] = simulate(pl, cmd, work / f"simulate-{label}", args.llc_size, sim, env)
        row.update(sim_placement_s=times["sim"], sample_placement_s=times["sample"],
                   placement_ratio=times["sample"] / times["sim"])
        rows.append(row)
        ran = "" if args.no_timing else (
            f"run {row['library_ratio']:.3f}x native ({row['native_s']:.2f} s; "
            f"{row['ratio']:.3f}x with the CLI), ")
        print(f"{name:18s} {ran}"
              f"placement {row['placement_ratio']:.4f}x the sim placement's", flush=True)
        (args.output / "results.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
