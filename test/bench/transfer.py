# SPDX-License-Identifier: MIT
"""Profile small, run big (README "Profile small, run big"): on the five
kernels, sim profiles at -g 13 and -g 14 plus an allocation census at
-g 17, advised for 20% of the -g 17 peak live footprint (`tierwise advise
SMALL... --target CENSUS`), against the placement advised from a full sim
profile at -g 17. Both placements are costed at -g 17 by the model (with
the full profile's counts) and simulated at -g 17 (`tierwise simulate`);
the script prints both times and the ratio transfer / full (goal: within
5% on every kernel). Then the transfer from -g 14 to -g 20 by model (a
census at -g 20; sim at -g 20 is timed once, to say whether it is
practical here).

The simulated LLC of the target is --llc-size (2 MiB at -g 17). The small
runs simulate that cache scaled by their data (-g 13: 1/16, -g 14: 1/8),
which is what `advise --target` asks for (advisor/README.md); --same-llc
also profiles them with the target's own cache, the case where miss rates
do not carry over, and prints what that transfer costs.

Run after `make build`:  .venv/bin/python test/bench/transfer.py [-o DIR]
Profiles are kept in DIR and reused.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "advisor"))
from tierwise import cost, reader, tiers, transfer  # noqa: E402
from tierwise.advice import advise  # noqa: E402
from tierwise.sizes import parse_size  # noqa: E402

KERNELS = ["pagerank-push", "pagerank-pull", "bfs", "sssp", "spmv-pagerank"]
ENV = dict(os.environ, OMP_NUM_THREADS="1")


def tw(*args, **kw):
    return subprocess.run(
        [str(ROOT / "build" / "bin" / "tierwise"), *map(str, args)], text=True, env=ENV, **kw
    )


def exe(kernel):
    return str(ROOT / "build" / "examples" / kernel)


def profile(out: Path, kernel, scale, backend, llc=None):
    """A profile directory (made once): sim with --roi markers (the
    kernels' counts, as the advisor benchmark), or the alloc census."""
    d = out / kernel / (f"sim{scale}-{llc}" if backend == "sim" else f"census{scale}")
    if (d / "meta.json").exists():
        return d
    opts = ["--llc-size", llc, "--roi", "markers"] if backend == "sim" else []
    print(f"# {kernel}: {backend} -g {scale} {' '.join(opts)}", file=sys.stderr, flush=True)
    t0 = time.time()
    r = tw("profile", "--backend", backend, *opts, "-o", d, "--", exe(kernel), "-g", scale,
           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if r.returncode != 0:
        sys.exit(f"profiling {kernel} -g {scale} failed: {r.stderr.strip().splitlines()[-1:]}")
    (d.parent / f"{d.name}.seconds").write_text(f"{time.time() - t0:.1f}\n")
    return d


def fractions_on(pl: dict, full, costs) -> dict:
    """A placement's DRAM share per site of `full` (matched by stack)."""
    idx = dict(zip(full.sites["stack"], full.sites.index))
    f = {}
    for e in pl["sites"]:
        i = idx.get(e["stack"])
        if i is None:
            continue
        if e["tier"] == "dram":
            f[i] = 1.0
        elif "dram_bytes" in e:
            size = max(int(costs.at[i, "bytes"]), 1)
            head = e.get("dram_fraction", 0) * size or e["dram_bytes"]
            f[i] = min(1.0, head / size)
    return f


def simulate(out: Path, kernel, scale, llc, pl: dict, name):
    """Simulated time of a placement (`tierwise simulate`), kept in out."""
    d = out / kernel / f"simulate-{name}"
    js = d.with_suffix(".json")
    if not js.exists():
        p = d.with_suffix(".placement.json")
        p.write_text(json.dumps(pl, indent=1))
        print(f"# {kernel}: simulate {name} -g {scale}", file=sys.stderr, flush=True)
        r = tw("simulate", "--placement", p, "--llc-size", llc, "-o", d,
               "--json", js, "--", exe(kernel), "-g", scale,
               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if r.returncode != 0:
            print(f"# simulate {kernel} {name} failed: {r.stderr.strip()[-300:]}", file=sys.stderr)
            return None
    return json.loads(js.read_text())["seconds"]


def checksum(text):
    return next((l for l in text.splitlines() if l.startswith("checksum:")), None)


def run_big(args, out: Path, g0):
    """`tierwise run` at --big, DRAM limit = the placement's budget (its
    share of the -g big footprint): per ranked site planned / got / fell
    back / the most it held at once, with the plan's timeline (DRAM shared
    over time, the runtime as it is), with static per-site reservations
    (the same placement without planned_live) and first-come (without
    ranks); the checksum against the unplaced run. A site within the budget
    is one the runtime admitted (reserved_bytes > 0); it got its planned
    bytes when nothing of it fell back and it held its planned bytes."""
    print(
        f"\n## tierwise run -g {args.big} with the -g {g0} -> -g {args.big} placement, "
        f"--dram-limit = its budget ({args.budget} of the footprint)"
    )
    print(f"{'kernel':<14} {'limit':>9} {'policy':<11} {'ranked':>6} {'admitted':>8} {'served':>6} {'fell back':>10} {'checksum':<9}")
    for k in args.kernels:
        src = out / k / f"placement-g{g0}-to-g{args.big}.json"
        pl = json.loads(src.read_text())
        strip = lambda keys: dict(pl, sites=[{x: v for x, v in s.items() if x not in keys} for s in pl["sites"]])
        (out / k / "static.json").write_text(json.dumps(strip(("planned_live",)), indent=1))
        (out / k / "first-come.json").write_text(json.dumps(strip(("planned_live", "rank", "planned_bytes")), indent=1))
        cmd = [exe(k), "-g", str(args.big)]
        plain = checksum(subprocess.run(cmd, text=True, capture_output=True, env=ENV).stdout)
        limit = pl["budget_bytes"]
        for name, p in (("timeline", src), ("static", out / k / "static.json"), ("first-come", out / k / "first-come.json")):
            rep = out / k / f"run-{name}.json"
            r = tw("run", "--placement", p, "--dram-limit", limit, "--report", rep, "--", *cmd,
                   capture_output=True)
            rj = json.loads(rep.read_text())
            by = {s["stack"]: s for s in rj["sites"]}
            ranked = sorted((s for s in pl["sites"] if "rank" in s), key=lambda s: s["rank"])
            got = lambda s: by[s["stack"]]["bytes"]["dram"]
            fb = lambda s: by[s["stack"]]["fallback_bytes"]
            held = lambda s: by[s["stack"]].get("reserved_peak_bytes", 0)
            admitted = [s for s in ranked if by[s["stack"]].get("reserved_bytes", 0) > 0] if name != "first-come" else ranked
            served = [s for s in admitted if fb(s) == 0 and got(s) >= s["planned_bytes"]]
            same = "equal" if checksum(r.stdout) == plain and plain else "DIFFERS"
            print(
                f"{k:<14} {limit / 2**20:>6.1f}MiB {name:<11} {len(ranked):>6} {len(admitted):>8} "
                f"{len(served):>6} {sum(fb(s) for s in ranked) / 2**20:>7.2f}MiB {same:<9}"
                + (f" reserved {rj['dram_limit']['reserved_bytes'] / 2**20:.2f} MiB over "
                   f"{rj['dram_limit'].get('instants', 1)} instant(s)" if name != "first-come" else "")
            )
            if name == "timeline" or args.verbose:
                for s in ranked:
                    print(
                        f"  rank {s['rank']:>2} planned {s['planned_bytes']:>9} got {got(s):>9} "
                        f"fell back {fb(s):>9} held {held(s):>9}"
                        f"{'' if s in admitted else ' (not admitted)'}  "
                        f"{s['location'].split('/')[-1]}"
                    )
            else:
                for s in admitted:
                    if s not in served:
                        print(
                            f"  rank {s['rank']} {s['location'].split('/')[-1]}: planned "
                            f"{s['planned_bytes']}, got {got(s)}, fell back {fb(s)}"
                        )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", default="build/bench-transfer", help="work directory")
    ap.add_argument("--kernels", nargs="+", default=KERNELS)
    ap.add_argument("--target", type=int, default=17, help="target scale (-g)")
    ap.add_argument("--small", type=int, nargs="+", default=[13, 14], help="profiled scales")
    ap.add_argument("--llc-size", default="2M", help="the target's simulated LLC")
    ap.add_argument("--budget", default="20%")
    ap.add_argument("--big", type=int, default=20, help="scale of the model-only transfer")
    ap.add_argument("--same-llc", action="store_true", help="also profile small with the target's LLC")
    ap.add_argument("--no-simulate", action="store_true")
    ap.add_argument("--time-sim-big", action="store_true", help="time one sim profile at --big")
    ap.add_argument(
        "--run-big",
        action="store_true",
        help="tierwise run at --big with the transferred placement under --dram-limit = its "
        "budget: ranked (reservations) and the same placement without ranks (first-come)",
    )
    ap.add_argument("--big-only", action="store_true", help="skip the -g --target comparison")
    ap.add_argument("-v", "--verbose", action="store_true", help="every ranked site of every run")
    args = ap.parse_args()
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    model = tiers.load("optane-appdirect")
    llc_t = parse_size(args.llc_size)
    scaled = {g: f"{max(llc_t >> (args.target - g) >> 10, 1)}K" for g in args.small}
    rows = []
    for k in [] if args.big_only else args.kernels:
        census = profile(out, k, args.target, "alloc")
        full_d = profile(out, k, args.target, "sim", args.llc_size)
        small = [profile(out, k, g, "sim", scaled[g]) for g in args.small]
        full = reader.read_profile(full_d)
        c = cost.site_costs(full.sites, model)
        pl_full, *_ = advise(full, model, args.budget, "cost")
        t = transfer.read(small, census, llc_t)
        pl_tr, *_ = advise(t.profile, model, args.budget, "cost")
        pl_tr["target"] = t.to_json()
        secs = lambda pl: cost.placement_seconds(full.sites, c, model, fractions_on(pl, full, c))
        dram = cost.placement_seconds(full.sites, c, model, set(c.index[c["placeable"]]))
        row = {
            "kernel": k,
            "model_full": secs(pl_full),
            "model_tr": secs(pl_tr),
            "dram": dram,
            "own_model": pl_tr["modelled_seconds"]["placement"] / pl_tr["modelled_seconds"]["all_fast"],
            "budget": (pl_full["budget_bytes"], pl_tr["budget_bytes"]),
            "notes": t.cache_notes + [f"{loc} outgrows the LLC" for loc, *_ in t.outgrows_llc],
        }
        if args.same_llc:
            same = [profile(out, k, g, "sim", args.llc_size) for g in args.small]
            ts = transfer.read(same, census, llc_t)
            pl_same, *_ = advise(ts.profile, model, args.budget, "cost")
            row["model_same"] = secs(pl_same)
        if not args.no_simulate:
            row["sim_full"] = simulate(out, k, args.target, args.llc_size, pl_full, "full")
            row["sim_tr"] = simulate(out, k, args.target, args.llc_size, pl_tr, "transfer")
        rows.append(row)
    if rows:
        print(
            f"\n## profile -g {', '.join(map(str, args.small))} (LLC {', '.join(scaled.values())}) + "
            f"census -g {args.target} -> -g {args.target} (LLC {args.llc_size}), budget {args.budget} "
            f"of the -g {args.target} footprint; optane-appdirect; ratio = transfer / full"
        )
        hdr = f"{'kernel':<14} {'model full':>10} {'model tr':>10} {'ratio':>7} {'sim full':>10} {'sim tr':>10} {'ratio':>7}"
        if args.same_llc:
            hdr += f" {'same-LLC model ratio':>21}"
        print(hdr)
        worst = 0.0
        for r in rows:
            mr = r["model_tr"] / r["model_full"]
            sf, st = r.get("sim_full"), r.get("sim_tr")
            sr = st / sf if sf and st else None
            worst = max(worst, abs(mr - 1), abs(sr - 1) if sr else 0)
            line = (
                f"{r['kernel']:<14} {r['model_full']:>10.5f} {r['model_tr']:>10.5f} {mr:>6.3f}x "
                f"{sf if sf else float('nan'):>10.5f} {st if st else float('nan'):>10.5f} "
                f"{(f'{sr:.3f}x' if sr else '-'):>7}"
            )
            if args.same_llc:
                line += f" {r['model_same'] / r['model_full']:>20.3f}x"
            print(line)
            for n in r["notes"]:
                print(f"  note: {n}")
        print(
            f"largest difference transfer vs full: {worst:.1%} (goal within 5%) "
            + ("MET" if worst <= 0.05 else "NOT MET")
            + ("" if not args.no_simulate else " (modelled only)")
        )
    # the model-only transfer to a bigger run
    big_llc = llc_t << (args.big - args.target)
    g0 = max(args.small)
    print(
        f"\n## -g {g0} (LLC {scaled[g0]}) + census -g {args.big} -> -g {args.big} by model "
        f"(LLC {big_llc >> 20} MiB), budget {args.budget} of the -g {args.big} footprint"
    )
    print(f"{'kernel':<14} {'footprint':>10} {'DRAM':>9} {'model':>7} {'all-slow':>8}  DRAM sites (rank: planned MiB)")
    for k in args.kernels:
        census = profile(out, k, args.big, "alloc")
        t = transfer.read([profile(out, k, g0, "sim", scaled[g0])], census, big_llc)
        pl, _, sel, _ = advise(t.profile, model, args.budget, "cost")
        (out / k / f"placement-g{g0}-to-g{args.big}.json").write_text(json.dumps(dict(pl, target=t.to_json()), indent=1))
        ms = pl["modelled_seconds"]
        ranked = sorted((s for s in pl["sites"] if "rank" in s), key=lambda s: s["rank"])
        desc = ", ".join(
            f"{s['rank']}: {s['location'].split('/')[-1].split(' (')[0]} {s['planned_bytes'] / 2**20:.1f}"
            for s in ranked[:5]
        )
        print(
            f"{k:<14} {pl['footprint_bytes'] / 2**20:>7.0f}MiB {sel.used_bytes / 2**20:>6.1f}MiB "
            f"{ms['placement'] / ms['all_fast']:>6.3f}x {ms['all_slow'] / ms['all_fast']:>7.3f}x  {desc}"
        )
        for n in t.cache_notes:
            print(f"  note: {n}")
    if args.run_big:
        run_big(args, out, g0)
    if args.time_sim_big:
        k = args.kernels[0]
        t0 = time.time()
        profile(out, k, args.big, "sim", f"{big_llc >> 10}K")
        print(f"\nsim profile of {k} -g {args.big}: {time.time() - t0:.0f} s wall here")


if __name__ == "__main__":
    main()
