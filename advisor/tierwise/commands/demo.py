# SPDX-License-Identifier: MIT
"""`tierwise demo`: the whole pipeline on a bundled example with defaults:
profile (sim), advise at a 20% DRAM budget, run with the placement and check
the checksum against the unplaced run, simulate the placement, compare."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator

from tierwise import paths, pipeline
from tierwise.cli import UserError, VERBS, add_whole_sites
from tierwise.backends.sim import LLC_SIZE
from tierwise.formats import report as report_format
from tierwise.sizes import count_option, format_size, share_option

CHECKSUM = re.compile(r"^checksum: ([0-9a-f]+)$", re.MULTILINE)


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "demo",
        help=VERBS["demo"],
        description="Profile a bundled graph kernel with the sim backend, advise a "
        "placement at a 20% DRAM budget, run it with the placement (checksum must equal "
        "the unplaced run), simulate the placement and compare it with the baselines.",
    )
    p.add_argument(
        "--example",
        default="pagerank-push",
        metavar="NAME",
        help="a bundled example: build/examples in the build tree, lib/tierwise/examples "
        "in an install (default pagerank-push)",
    )
    p.add_argument(
        "--scale",
        type=count_option(1, 30),
        default=14,
        metavar="S",
        help="Kronecker graph with 2^S vertices (default 14)",
    )
    p.add_argument(
        "--llc-size",
        type=LLC_SIZE,
        default="256K",
        metavar="SIZE",
        help="simulated LLC, small so that the small graph does not fit (default 256K)",
    )
    p.add_argument("--dram-budget", type=share_option("--dram-budget"), default="20%",
                   metavar="SIZE|N%", help="default 20%%")
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


def _step(msg: str) -> None:
    print(f"tierwise demo: {msg}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def _environ(**env: str) -> Iterator[None]:
    """os.environ with `env` set while a step runs (the programs it starts
    inherit it), as it was afterwards."""
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextlib.contextmanager
def _captured() -> Iterator[list[str]]:
    """File descriptors 1 and 2 - this process's and those of the programs a
    step starts - into temporary files while the step runs; yields a list
    that then holds the step's stdout. Its stderr is shown only when the
    step fails."""
    out: list[str] = []
    saved = [os.dup(1), os.dup(2)]
    files = [tempfile.TemporaryFile(), tempfile.TemporaryFile()]
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(files[0].fileno(), 1)
    os.dup2(files[1].fileno(), 2)
    failed = True
    try:
        yield out
        failed = False
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        for fd, old in ((1, saved[0]), (2, saved[1])):
            os.dup2(old, fd)
            os.close(old)
        text = []
        for f in files:
            f.seek(0)
            text.append(f.read().decode(errors="replace"))
            f.close()
        out.append(text[0])
        if failed:
            sys.stderr.write(text[1])


def _verb(argv: list[str]) -> None:
    """Run the verb `tierwise ARGV...` in this process; its exit status must
    be 0."""
    from tierwise.cli import build_parser

    args = build_parser(argv[:1]).parse_args(argv)
    rc = int(args._run(args) or 0)
    if rc != 0:
        raise UserError(f"`tierwise {argv[0]}` failed (exit status {rc})")


def _checksum(text: str, what: str) -> str:
    m = CHECKSUM.search(text)
    if not m:
        raise UserError(f"{what} printed no 'checksum: <hex>' line")
    return m.group(1)


def run(args: argparse.Namespace) -> int:
    try:
        exe = paths.artifact(f"examples/{args.example}")
    except paths.MissingBuildError as e:
        raise UserError(str(e)) from None
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    cmd = [str(exe), "-g", str(args.scale)]
    threads = os.environ.get("OMP_NUM_THREADS", "1")  # profiled runs: one thread
    t0 = time.monotonic()

    _step(f"1/5 profile {' '.join(cmd)} (sim backend, LLC {format_size(args.llc_size)}, --roi {args.roi})")
    prof = out / "profile"
    opts = pipeline.backend_options("sim", ["--llc-size", str(args.llc_size), "--roi", args.roi])
    with _environ(OMP_NUM_THREADS=threads):
        res = pipeline.profile(cmd, prof, "sim", opts)
    if res.returncode != 0:
        raise UserError(f"{exe.name} failed under the sim profiler (exit status {res.returncode})")

    whole = ["--whole-sites"] if args.whole_sites else []
    _step(f"2/5 advise at a {args.dram_budget} DRAM budget")
    placement = out / "placement.json"
    with _captured() as advised:
        _verb(
            ["advise", str(prof), "--dram-budget", args.dram_budget, "-o", str(placement)]
            + ["--plot", str(out / "budget.png")]
            + whole
        )
    (out / "advise.txt").write_text(advised[0])

    _step("3/5 run unplaced and with the placement; compare checksums")
    plain = subprocess.run(cmd, text=True, capture_output=True)
    if plain.returncode != 0:
        raise UserError(f"{exe.name} failed (exit status {plain.returncode})")
    report = out / "run-report.json"
    with _captured():
        placed = pipeline.run_placed(cmd, placement, report, out, capture=True)
    if placed.returncode != 0:
        raise UserError(f"{exe.name} failed with the placement (exit status {placed.returncode})")
    c0, c1 = _checksum(plain.stdout, exe.name), _checksum(placed.stdout or "", "placed run")
    if c0 != c1:
        raise UserError(f"checksum differs with the placement: {c1} vs {c0} unplaced")
    rep = report_format.read(report)

    _step("4/5 simulate the placement")
    with _environ(OMP_NUM_THREADS=threads), _captured() as sim:
        _verb(
            ["simulate", "--placement", str(placement), "-o", str(out / "simulate")]
            + ["--json", str(out / "simulate.json"), "--", *cmd]
        )
    simres = json.loads((out / "simulate.json").read_text())

    _step("5/5 compare with all-DRAM, all-PMem, first-fit, static ratio and the policies")
    with _captured() as cmp:
        _verb(["compare", "-o", str(out / "compare"), "--profile", str(prof), "--oracle"] + whole)

    print(advised[0].rstrip())
    print(
        f"checksum {c0} unplaced = {c1} placed; runtime put "
        + ", ".join(f"{t} {b / 2**20:.1f} MiB" for t, b in rep.get("totals", {}).items())
    )
    print(sim[0].rstrip())
    print(cmp[0].rstrip())
    print(
        f"done in {time.monotonic() - t0:.0f} s; plots: {out / 'compare' / 'compare.png'}, "
        f"{out / 'budget.png'}; simulated ratio to all-DRAM {simres['ratio_to_dram']:.3f}x"
    )
    return 0
