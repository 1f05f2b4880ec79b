# SPDX-License-Identifier: MIT
"""`tierwise demo`: the whole pipeline on a bundled example with defaults:
profile (sim), advise at a 20% DRAM budget, run with the placement and check
the checksum against the unplaced run, simulate the placement, compare."""

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from tierwise import paths
from tierwise.cli import UserError, add_whole_sites

CHECKSUM = re.compile(r"^checksum: ([0-9a-f]+)$", re.MULTILINE)


def add_parser(sub):
    p = sub.add_parser(
        "demo",
        help="run the whole pipeline on a bundled example",
        description="Profile a bundled graph kernel with the sim backend, advise a "
        "placement at a 20%% DRAM budget, run it with the placement (checksum must equal "
        "the unplaced run), simulate the placement and compare it with the baselines.",
    )
    p.add_argument(
        "--example",
        default="pagerank-push",
        metavar="NAME",
        help="example in build/examples (default pagerank-push)",
    )
    p.add_argument(
        "--scale",
        type=int,
        default=14,
        metavar="S",
        help="Kronecker graph with 2^S vertices (default 14)",
    )
    p.add_argument(
        "--llc-size",
        default="256K",
        metavar="SIZE",
        help="simulated LLC, small so that the small graph does not fit (default 256K)",
    )
    p.add_argument("--dram-budget", default="20%", metavar="SIZE|N%", help="default 20%%")
    add_whole_sites(p)
    p.add_argument(
        "--roi",
        default="markers",
        metavar="all|markers|FUNC",
        help="what the profile counts (tierwise profile --roi); default markers: the "
        "examples mark their timed kernel, so graph loading is left out",
    )
    p.add_argument(
        "-o",
        "--output",
        default="tierwise-demo",
        metavar="DIR",
        help="output directory (default tierwise-demo)",
    )
    return p


def _step(msg):
    print(f"tierwise demo: {msg}", file=sys.stderr, flush=True)


def _tw(args, env=None, capture=False):
    cmd = [sys.executable, "-m", "tierwise", *args]
    r = subprocess.run(cmd, env=env, text=True, capture_output=capture)
    if r.returncode != 0:
        tail = (r.stderr or "").strip().splitlines()[-1:] if capture else []
        raise UserError(
            f"`tierwise {' '.join(args[:1])}` failed (exit status {r.returncode})"
            + (f": {tail[0]}" if tail else "")
        )
    return r


def _checksum(text, what):
    m = CHECKSUM.search(text)
    if not m:
        raise UserError(f"{what} printed no 'checksum: <hex>' line")
    return m.group(1)


def run(args):
    try:
        exe = paths.artifact(f"examples/{args.example}")
    except paths.MissingBuildError as e:
        raise UserError(str(e)) from None
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    cmd = [str(exe), "-g", str(args.scale)]
    env1 = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
    t0 = time.monotonic()

    _step(f"1/5 profile {' '.join(cmd)} (sim backend, LLC {args.llc_size}, --roi {args.roi})")
    prof = out / "profile"
    _tw(
        ["profile", "--backend", "sim", "--llc-size", args.llc_size, "--roi", args.roi]
        + ["-o", str(prof), "--", *cmd],
        env=env1,
    )

    whole = ["--whole-sites"] if args.whole_sites else []
    _step(f"2/5 advise at a {args.dram_budget} DRAM budget")
    placement = out / "placement.json"
    r = _tw(
        [
            "advise",
            str(prof),
            "--dram-budget",
            args.dram_budget,
            "-o",
            str(placement),
            "--plot",
            str(out / "budget.png"),
        ]
        + whole,
        capture=True,
    )
    (out / "advise.txt").write_text(r.stdout)

    _step("3/5 run unplaced and with the placement; compare checksums")
    plain = subprocess.run(cmd, text=True, capture_output=True)
    if plain.returncode != 0:
        raise UserError(f"{exe.name} failed (exit status {plain.returncode})")
    report = out / "run-report.json"
    placed = _tw(
        [
            "run",
            "--placement",
            str(placement),
            "--pmem-dir",
            str(out),
            "--report",
            str(report),
            "--",
            *cmd,
        ],
        capture=True,
    )
    c0, c1 = _checksum(plain.stdout, exe.name), _checksum(placed.stdout, "placed run")
    if c0 != c1:
        raise UserError(f"checksum differs with the placement: {c1} vs {c0} unplaced")
    rep = json.loads(report.read_text())

    _step("4/5 simulate the placement")
    sim = _tw(
        [
            "simulate",
            "--placement",
            str(placement),
            "-o",
            str(out / "simulate"),
            "--json",
            str(out / "simulate.json"),
            "--",
            *cmd,
        ],
        env=env1,
        capture=True,
    )
    simres = json.loads((out / "simulate.json").read_text())

    _step("5/5 compare with all-DRAM, all-PMem, first-fit, static ratio and the policies")
    cmp = _tw(
        ["compare", "-o", str(out / "compare"), "--profile", str(prof), "--oracle"] + whole,
        capture=True,
    )

    print(r.stdout.rstrip())
    print(
        f"checksum {c0} unplaced = {c1} placed; runtime put "
        + ", ".join(f"{t} {b / 2**20:.1f} MiB" for t, b in rep.get("totals", {}).items())
    )
    print(sim.stdout.rstrip())
    print(cmp.stdout.rstrip())
    print(
        f"done in {time.monotonic() - t0:.0f} s; plots: {out / 'compare' / 'compare.png'}, "
        f"{out / 'budget.png'}; simulated ratio to all-DRAM {simres['ratio_to_dram']:.3f}x"
    )
    return 0
