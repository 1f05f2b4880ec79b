# SPDX-License-Identifier: MIT
"""Checks of the framework end-to-end tests (test/frameworks, test/mpi) on
tierwise's own outputs, printing one summary line per check for FileCheck
and exiting non-zero with a reason when a check fails:

  sites PROFILE --module PREFIX ...   the big sites are in the framework's
      shared library, symbolized, and several of them share one allocation
      wrapper as innermost frame yet are told apart by deeper frames;
  report REPORT... --placement P ...  the run reports show the placement's
      slow-tier sites matched, with bytes actually in the slow tier, each
      in the process whose program it names;
  budget PLACEMENT --ranks DIR...     a placement merged from rank profiles
      has a per-rank footprint;
  profiles DIR... --command NAME ...  a set of per-process profiles (child
      processes, MPI ranks): one complete profile per expected command.

Formats: advisor/FORMATS.md (tierwise-profile v1, tierwise-placement v1,
tierwise-run-report v1)."""

import argparse
import csv
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path


def fail(msg):
    print(f"fwcheck: FAIL: {msg}")
    sys.exit(1)


def num(text):
    return int(text) if text not in (None, "") else 0


def misses(row):
    return num(row["llc_load_misses"]) + num(row["llc_store_misses"])


def module_of(frame):
    return frame.rsplit("+0x", 1)[0]


def function_of(location):
    """'GB_malloc_memory ??:?' -> 'GB_malloc_memory' ('' if unknown)."""
    fn = (location or "").split(" ", 1)[0]
    return "" if fn in ("", "??") else fn


def read_sites(profile):
    path = Path(profile) / "sites.csv"
    if not path.exists():
        fail(f"{path}: no sites.csv (profile missing or incomplete)")
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def check_sites(args):
    rows = read_sites(args.profile)
    meta = json.loads((Path(args.profile) / "meta.json").read_text())
    if not meta.get("complete", False):
        fail(f"{args.profile}/meta.json: profile is not complete")
    placeable = [r for r in rows if not r["stack"].startswith("[")]
    lib = [
        r
        for r in placeable
        if module_of(r["stack"].split(";")[0]).startswith(args.module)
    ]
    total_miss = sum(misses(r) for r in rows)
    total_peak = sum(num(r["peak_bytes"]) for r in placeable) or 1
    lib_peak = sum(num(r["peak_bytes"]) for r in lib)
    measured = total_miss > 0
    print(
        f"backend {meta.get('backend')}: {len(placeable)} placeable sites, "
        f"{len(lib)} in {args.module}*"
    )
    if measured:
        share = sum(misses(r) for r in placeable) / total_miss
        lib_share = sum(misses(r) for r in lib) / total_miss
        print(
            f"LLC misses: {share:.1%} in placeable sites, {lib_share:.1%} in {args.module}* sites"
        )
        if lib_share < args.min_lib_share:
            fail(
                f"{args.module}* sites have {lib_share:.1%} of the LLC misses, "
                f"expected at least {args.min_lib_share:.0%}"
            )
    print(f"peak bytes: {lib_peak / total_peak:.1%} in {args.module}* sites")
    if lib_peak / total_peak < args.min_lib_bytes:
        fail(
            f"{args.module}* sites hold {lib_peak / total_peak:.1%} of the peak bytes, "
            f"expected at least {args.min_lib_bytes:.0%}"
        )
    big = [r for r in lib if num(r["peak_bytes"]) >= args.big_bytes]
    if len(big) < args.min_lib_sites:
        fail(
            f"{len(big)} sites of at least {args.big_bytes} bytes in {args.module}*, "
            f"expected at least {args.min_lib_sites}"
        )
    unsymbolized = [r["stack"] for r in big if not function_of(r["location"])]
    print(
        f"{len(big)} big {args.module}* sites, {len(big) - len(unsymbolized)} symbolized, "
        f"e.g. {next((r['location'] for r in big if r['location']), '-')}"
    )
    if len(unsymbolized) > args.max_unsymbolized:
        fail(
            f"{len(unsymbolized)} big {args.module}* sites have no location "
            f"(at most {args.max_unsymbolized} allowed), e.g. {unsymbolized[0]}"
        )
    if args.wrapper:
        check_wrapper(args, lib, module_paths(args.profile))


def module_paths(profile):
    with open(Path(profile) / "modules.csv", newline="") as f:
        return {r["module"]: r["path"] for r in csv.DictReader(f)}


def function_at(path, frame):
    """Function name of frame 'MODULE+0xOFF' from the module's symbol tables
    (addr2line -f; .dynsym suffices for stripped libraries)."""
    out = subprocess.run(
        ["addr2line", "-f", "-e", path, frame.rsplit("+", 1)[1]],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.split("\n")
    return out[0] if out and out[0] != "??" else ""


def check_wrapper(args, lib, paths):
    """Several sites share one innermost frame inside the library (its
    allocation wrapper) and differ only deeper down."""
    by_frame = defaultdict(list)
    for r in lib:
        by_frame[r["stack"].split(";")[0]].append(r)
    frame, group = max(by_frame.items(), key=lambda kv: len(kv[1]))
    fn = function_at(paths.get(module_of(frame), ""), frame)
    callers = {r["stack"].split(";", 1)[-1] for r in group}
    print(
        f"wrapper {fn or '??'}: innermost frame of {len(group)} sites, "
        f"{len(callers)} distinct deeper stacks"
    )
    if fn not in args.wrapper:
        fail(
            f"the most shared innermost frame {frame} is {fn or '??'}, "
            f"not one of {', '.join(args.wrapper)}"
        )
    if len(callers) < args.min_wrapper_sites:
        fail(
            f"only {len(callers)} sites behind {fn} are told apart, "
            f"expected at least {args.min_wrapper_sites}"
        )


def slow_bytes(entry):
    return sum(n for t, n in (entry.get("bytes") or {}).items() if t != "dram")


def check_report(args):
    """Each report: the placement's slow-tier sites that got slow-tier bytes;
    with --command, a site naming another expected program's module must
    not have matched in this process (placement applied to the wrong one)."""
    placement = json.loads(Path(args.placement).read_text())
    slow = {s["stack"] for s in placement["sites"] if s["tier"] != "dram"}
    expected = dict(c.split("=") for c in args.command)
    print(
        f"placement: {len(slow)} slow-tier sites (default "
        f"{placement.get('default_tier', 'dram')})"
    )
    seen = defaultdict(int)
    for path in args.reports:
        report = json.loads(Path(path).read_text())
        if report.get("format") != "tierwise-run-report":
            fail(
                f"{path}: format {report.get('format')!r}, expected tierwise-run-report"
            )
        cmd = str(report.get("command") or "?").split()
        name = Path(cmd[0]).name if cmd else "?"
        placed = [
            s
            for s in report.get("sites", [])
            if s["stack"] in slow and slow_bytes(s) > 0
        ]
        foreign = [
            s["stack"]
            for s in placed
            if any(
                module_of(f) in expected and module_of(f) != name
                for f in s["stack"].split(";")
            )
        ]
        if foreign:
            fail(
                f"{path}: process {name} placed a site of another program: {foreign[0]}"
            )
        lib = [
            s
            for s in placed
            if module_of(s["stack"].split(";")[0]).startswith(args.module)
        ]
        totals = report.get("totals", {})
        where = f"; {len(lib)} in {args.module}*" if args.module else ""
        totals_text = ", ".join(f"{t} {n}" for t, n in sorted(totals.items()))
        print(
            f"{name}: {len(placed)} slow-tier sites with bytes, all its own{where}; "
            f"totals {totals_text}"
        )
        if placed:
            seen[name] += 1
            if sum(n for t, n in totals.items() if t != "dram") <= 0:
                fail(f"{path}: totals show no slow-tier bytes")
        if args.module and not lib and (not expected or name in expected):
            fail(f"{path}: no {args.module}* site got bytes in the slow tier")
    if not expected and not seen:
        fail("no slow-tier site of the placement got bytes in the slow tier")
    for name, count in expected.items():
        if seen[name] != int(count):
            fail(
                f"expected {count} process(es) of {name} with slow-tier bytes, found {seen[name]}"
            )


def check_budget(args):
    """A placement merged from rank profiles must have a per-rank footprint
    (the advisor's footprint is the sum of placeable sites' peak_bytes): at
    most 25% above the largest single rank's, not the sum over ranks."""
    merged = json.loads(Path(args.placement).read_text())
    ranks = [
        sum(
            num(r["peak_bytes"])
            for r in read_sites(d)
            if not r["stack"].startswith("[")
        )
        for d in args.ranks
    ]
    fm = merged.get("footprint_bytes")
    if not fm:
        fail(f"{args.placement}: no footprint_bytes")
    print(
        f"merged: budget {merged.get('budget_bytes')} of footprint {fm}; ranks: "
        + ", ".join(map(str, ranks))
    )
    if fm > 1.25 * max(ranks):
        fail(
            f"merged footprint {fm} exceeds the largest rank's {max(ranks)}: not per rank"
        )
    print("per-rank budget")


def check_profiles(args):
    found = defaultdict(list)
    for d in args.dirs:
        meta_path = Path(d) / "meta.json"
        if not meta_path.exists():
            fail(f"{d}: no meta.json (profile not finished)")
        meta = json.loads(meta_path.read_text())
        cmd = meta.get("command") or [""]
        name = Path(cmd[0]).name
        found[name].append((d, meta))
        tag = f" rank {meta['rank']}" if "rank" in meta else ""
        print(
            f"profile {Path(d).name}: {name} pid {meta.get('pid')}{tag} "
            f"complete={meta.get('complete')}"
        )
        if not meta.get("complete"):
            fail(f"{d}: profile is not complete")
    for name, count in (c.split("=") for c in args.command):
        if len(found.get(name, [])) != int(count):
            fail(
                f"expected {count} profile(s) of {name}, found {len(found.get(name, []))}"
            )
    if args.ranks:
        ranks = sorted(m.get("rank", -1) for v in found.values() for _, m in v)
        if ranks != list(range(args.ranks)):
            fail(
                f"profiles are tagged with ranks {ranks}, expected 0..{args.ranks - 1}"
            )


def main(argv):
    p = argparse.ArgumentParser(prog="fwcheck.py", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="what", required=True)
    s = sub.add_parser("sites")
    s.add_argument("profile")
    s.add_argument(
        "--module", required=True, help="library basename prefix, e.g. libgraphblas.so"
    )
    s.add_argument("--min-lib-sites", type=int, default=3)
    s.add_argument("--big-bytes", type=int, default=64 << 10)
    s.add_argument("--min-lib-share", type=float, default=0.0, help="of all LLC misses")
    s.add_argument(
        "--min-lib-bytes", type=float, default=0.0, help="of placeable peak bytes"
    )
    s.add_argument(
        "--wrapper", nargs="*", default=[], help="allowed wrapper function names"
    )
    s.add_argument("--min-wrapper-sites", type=int, default=3)
    s.add_argument(
        "--max-unsymbolized", type=int, default=0, help="big sites without location"
    )
    r = sub.add_parser("report")
    r.add_argument("reports", nargs="+")
    r.add_argument("--placement", required=True)
    r.add_argument("--module", default="")
    r.add_argument("--command", action="append", default=[], metavar="NAME=COUNT")
    b = sub.add_parser("budget")
    b.add_argument("placement")
    b.add_argument("--ranks", nargs="+", required=True, help="the rank profiles")
    f = sub.add_parser("profiles")
    f.add_argument("dirs", nargs="+")
    f.add_argument("--command", action="append", default=[], metavar="NAME=COUNT")
    f.add_argument("--ranks", type=int, default=0)
    args = p.parse_args(argv)
    {
        "sites": check_sites,
        "report": check_report,
        "profiles": check_profiles,
        "budget": check_budget,
    }[args.what](args)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
