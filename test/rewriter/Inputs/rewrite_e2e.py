# SPDX-License-Identifier: MIT
"""End to end check of `tierwise rewrite` on one example kernel:

    rewrite_e2e.py [--head | --head-in=FUNCTION] [--odd | --all-pmem] [--advise=BUDGET] [--bytes-min=PCT] [--werror] TIERWISE EXE ARGS... -- WORKDIR

1. allocation census (`tierwise profile --backend alloc`); 2. a placement of
the example's big sites (>= 16 KiB) in its sources, alternately pmem and dram, largest
first (with --odd the other half: dram, pmem, ...; with --all-pmem every one pmem); with --head every pmem site gets a DRAM head (`dram_bytes`: a
quarter of its mean object size, in whole pages; none where that is 0; with --head-in=FUNCTION only
the sites whose innermost frame is in FUNCTION), and
each must be rewritten to its head form (tw_malloc_head, ...,
tw_realloc_head, tw_aligned_alloc_head, new (tw::head_tag{...}));
3. `tierwise rewrite -o PATCH` over the example's sources, run from /; sites it
reports as not rewritable (e.g. anonymous mmap) are dropped from the
placement and the rewrite repeated, which must then succeed; 4. the patch is
applied to a copy of examples/ and the kernel rebuilt from the copy with the
build's compile commands plus `tierwise config --cflags --libs` (and with --werror
`-Wall -Werror`); 5. the
original runs with `tierwise run` (LD_PRELOAD) and the rebuilt one without
LD_PRELOAD, both with a run report. Checks: the rebuilt program's checksum
equals the unplaced run's, and for every placed (pmem) site the rebuilt
report's bytes per tier (its sites symbolized, inline frames expanded, and
summed per first three user frames: function, file, line, lines mapped
through the patch; tierwise.compare_runs, also run as `tierwise
compare-runs`) equal the
LD_PRELOAD report's (for the head's site: its DRAM and pmem bytes, both
non-zero). With --advise=BUDGET the placement is instead the advisor's
(`tierwise profile --backend sim`, `tierwise advise --dram-budget BUDGET`:
DRAM heads where it gives them, every site with its tier), and at least 90% of its placed sites whose
allocation is in the given files must be rewritten. The share of the placed
(non-default tier) bytes at rewritten sites is printed; with --bytes-min=PCT
it must be at least PCT%. The patch must apply from the project root with
`git apply` (in a git work tree) and with `patch -p1`, to the same files
(symlinks kept). Prints `ok ...` lines, exits non-zero on a failure."""

import csv
import difflib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from tierwise.compare_runs import bytes_by_site, patch_line_map, site_key
from tierwise.symbolize import Symbolizer, innermost_line, split_location

BIG = 16 << 10


def run(cmd, env=None, ok=(0,), **kw):
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, **kw)
    if r.returncode not in ok:
        sys.exit(f"FAIL {shlex.join(map(str, cmd))}: exit {r.returncode}\n{r.stderr[-3000:]}")
    return r


def checksum(out):
    m = re.search(r"checksum: (\S+)", out)
    if not m:
        sys.exit("FAIL: no `checksum:` line in the program's output")
    return m[1]


def line_map(old_dir, new_dir, names):
    """(basename, new line) -> old line, for lines the patch kept or
    replaced one for one."""
    m = {}
    for name in names:
        a = (old_dir / name).read_text().splitlines()
        b = (new_dir / name).read_text().splitlines()
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
            if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
                for k in range(i2 - i1):
                    m[(Path(name).name, j1 + k + 1)] = i1 + k + 1
    return m


def main(argv):
    head = odd = all_pmem = werror = False
    head_in = None
    advise = bytes_min = None
    while argv[0].startswith("--"):
        opt, argv = argv[0], argv[1:]
        if opt == "--head":
            head = True
        elif opt == "--odd":
            odd = True
        elif opt == "--werror":
            werror = True
        elif opt == "--all-pmem":
            all_pmem = True
        elif opt.startswith("--head-in="):
            head, head_in = True, opt.split("=", 1)[1]
        elif opt.startswith("--advise="):
            advise = opt.split("=", 1)[1]
        elif opt.startswith("--bytes-min="):
            bytes_min = float(opt.split("=", 1)[1])
        else:
            sys.exit(f"FAIL: unknown option {opt}")
    sep = argv.index("--")
    tierwise, cmd, work = Path(argv[0]), argv[1:sep], Path(argv[sep + 1])
    build, exe = tierwise.parents[1], Path(cmd[0])
    src = Path(__file__).resolve().parents[3]
    name = exe.name
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    env = dict(os.environ, OMP_NUM_THREADS="2")
    plain = checksum(run(cmd, env).stdout)

    prof = work / "prof"
    run([tierwise, "profile", "--backend", "alloc", "-o", prof, "--"] + cmd, env)
    rows = [r for r in csv.DictReader(open(prof / "sites.csv")) if r["bytes_allocated"]]
    exdir = src / "examples"
    def where(location):  # "fn /b/examples/../../examples/x.c:12 (via y.h:3)"
        parts = split_location(location)
        return parts[1] if parts else location.rsplit(" ", 1)[-1]

    def in_examples(location):
        path = where(location).rsplit(":", 1)[0]
        return os.path.normpath(path).startswith(f"{exdir}/")

    big = sorted(
        (r for r in rows if int(r["bytes_allocated"]) >= BIG and in_examples(r["location"])),
        key=lambda r: -int(r["bytes_allocated"]),
    )
    sites = [
        {
            "stack": r["stack"],
            "location": r["location"],
            "tier": "pmem" if all_pmem or i % 2 == odd else "dram",
        }
        for i, r in enumerate(big)
    ]
    for r, s in zip(big, sites):
        n = int(r["bytes_allocated"]) // int(r["allocs"]) // 4 // 4096 * 4096
        fn = (split_location(r["location"]) or ("",))[0]
        if head_in and not re.match(rf"(.*::)?{re.escape(head_in)}\b", fn):
            continue
        if head and s["tier"] == "pmem" and n:
            s["dram_bytes"] = n
    # Each site's bytes (the census's), for the share of placed bytes
    # rewritten.
    site_bytes = {r["stack"]: int(r["bytes_allocated"]) for r in rows}

    # The example's sources: its main file and the shared common/*.c.
    db = json.loads((build / "compile_commands.json").read_text())
    exdir = src / "examples"
    mains = [
        e
        for e in db
        if exdir in Path(e["file"]).parents
        and re.search(rf"-o \S*/{re.escape(name)}\.dir/", e.get("command", ""))
    ]
    units = mains + [e for e in db if Path(e["file"]).parent == exdir / "common"]
    files = [e["file"] for e in units]

    def rewrite(placement_sites, ok):
        p = work / "placement.json"
        p.write_text(
            json.dumps(
                {
                    "format": "tierwise-placement",
                    "version": 1,
                    "default_tier": "dram",
                    "sites": placement_sites,
                }
            )
        )
        return run(
            [
                tierwise,
                "rewrite",
                "--placement",
                p,
                "-p",
                build,
                "-o",
                work / "rewrite.patch",
                "--binary",
                exe,
            ]
            + files,
            ok=ok,
            cwd="/",  # the patch must not depend on where the rewrite runs
        )

    if advise:
        # The advisor's cost placement from a sim profile, as a user has it.
        run([tierwise, "profile", "--backend", "sim", "-o", work / "sim", "--"] + cmd, env)
        advised = work / "advised.json"
        # As a user has it: DRAM heads where the advisor gives them (a
        # wrapper shared by sites with heads takes a tw_place).
        run([tierwise, "advise", work / "sim", "--dram-budget", advise, "-o", advised])
        doc = json.loads(advised.read_text())
        if doc["default_tier"] != "dram":
            sys.exit(f"FAIL {name}: advised default tier {doc['default_tier']}")
        keep = ("stack", "location", "tier", "dram_bytes")
        for s in doc["sites"]:
            site_bytes[s["stack"]] = int(s.get("bytes", site_bytes.get(s["stack"], 0)))
        sites = [{k: s[k] for k in keep if k in s} for s in doc["sites"]]
    r = rewrite(sites, ok=(0, 1))
    (work / "rewrite-first.err").write_text(r.stderr)
    bad = {}
    for m in re.finditer(r"not rewritten: site (\d+) \(.*?\): (.*)", r.stderr):
        bad[int(m[1])] = m[2]
    for i, why in sorted(bad.items()):
        print(f"note {name}: not rewritten: {innermost_line(sites[i]['location'])}: {why}")
    if advise:
        # Of the placed sites whose allocation is in the given files, the
        # share rewritten (the others: libraries' and libc's own).
        outside = ("outside the given files", "not in the given files", "libc's own allocation")
        pmem = [i for i, s in enumerate(sites) if s["tier"] != "dram"]
        mine = [i for i in pmem if not any(o in bad.get(i, "") for o in outside)]
        done = [i for i in mine if i not in bad]
        share = len(done) / len(mine) if mine else 0
        verdict = "ok" if share >= 0.9 else "FAIL"
        print(
            f"{verdict} {name}: {len(done)} of {len(mine)} placed sites in the given files "
            f"rewritten ({share:.0%}; {len(pmem) - len(mine)} placed sites allocate elsewhere)"
        )
        if share < 0.9:
            sys.exit(1)
    # Of the placed (non-default tier) bytes, the share at rewritten sites.
    pmem = [i for i, s in enumerate(sites) if s["tier"] != "dram"]
    placed_b = sum(site_bytes.get(sites[i]["stack"], 0) for i in pmem)
    done_b = sum(site_bytes.get(sites[i]["stack"], 0) for i in pmem if i not in bad)
    share_b = 100 * done_b / placed_b if placed_b else 0
    low = bytes_min is not None and share_b < bytes_min
    verdict = "note" if bytes_min is None else "FAIL" if low else "ok"
    print(
        f"{verdict} {name}: {done_b} of {placed_b} placed bytes rewritten ({share_b:.1f}%), "
        f"{len(pmem) - len(set(pmem) & set(bad))} of {len(pmem)} placed sites"
    )
    if low:
        sys.exit(1)
    sites = [s for i, s in enumerate(sites) if i not in bad]
    headed = [s for s in sites if "dram_bytes" in s]
    if head and not headed:
        sys.exit(f"FAIL {name}: no site with a DRAM head was rewritten")
    placed = [s for s in sites if s["tier"] == "pmem"]
    if not placed:
        sys.exit(f"FAIL {name}: no rewritable pmem site among {len(big)} big sites")
    rewrite(sites, ok=(0,))
    print(f"ok {name}: {len(placed)} pmem sites rewritten, {len(sites) - len(placed)} dram sites listed")

    # The patch applies from the project root with both tools: `git apply`
    # in a git work tree (examples/ copied with its symlinks), `patch -p1`
    # in another copy; both give the same files.
    copy, other = work / "src", work / "src-patch"
    for d in (copy, other):
        shutil.copytree(exdir, d / "examples", symlinks=True)
    genv = dict(os.environ, GIT_CEILING_DIRECTORIES=str(work))
    run(["git", "init", "-q", copy], genv)
    run(["git", "apply", "--check", work / "rewrite.patch"], genv, cwd=copy)
    run(["git", "apply", work / "rewrite.patch"], genv, cwd=copy)
    run(["patch", "-s", "-p1", "-d", other, "-i", work / "rewrite.patch"])
    for f in sorted((copy / "examples").rglob("*")):
        g = other / f.relative_to(copy)
        if f.is_symlink() or g.is_symlink():
            if not (f.is_symlink() and g.is_symlink()):
                sys.exit(f"FAIL {name}: {f.relative_to(copy)}: a symlink in one copy only")
        elif f.is_file() and f.read_bytes() != g.read_bytes():
            sys.exit(f"FAIL {name}: `git apply` and `patch -p1` differ on {f.relative_to(copy)}")
    n_files = len(re.findall(r"^\+\+\+ b/", (work / "rewrite.patch").read_text(), re.M))
    print(f"ok {name}: the patch ({n_files} files) applies with git apply and patch -p1, same result")
    flags = run([tierwise, "config", "--cflags", "--libs"]).stdout.split()
    cflags = [f for f in flags if f.startswith("-I")]
    libs = [f for f in flags if not f.startswith("-I")]
    objs = []
    for i, e in enumerate(units):
        args = shlex.split(e["command"]) if "command" in e else list(e["arguments"])
        args = [a.replace(str(exdir), str(copy / "examples")) for a in args]
        k = args.index("-o")
        args[k + 1] = str(work / f"u{i}.o")
        objs.append(args[k + 1])
        run(args + cflags + (["-Wall", "-Werror"] if werror else []), cwd=e["directory"])
    # The head sites' lines in the rewritten copy: the _head form with N.
    patched = re.findall(r"^\+\+\+ b/examples/(\S+)", (work / "rewrite.patch").read_text(), re.M)
    lmap = line_map(
        exdir, copy / "examples", sorted({Path(f).relative_to(exdir) for f in files} | set(map(Path, patched)))
    )
    names = {Path(f).relative_to(exdir) for f in files} | set(map(Path, patched))
    new_text = {n.name: (copy / "examples" / n).read_text().splitlines() for n in names}
    patch_text = (work / "rewrite.patch").read_text()
    heads = r"tw_(?:malloc|calloc|realloc|aligned_alloc|memalign|posix_memalign)_head"
    for s in headed:
        base, line = innermost_line(s["location"]).rsplit(":", 1)
        base, n = Path(base).name, s["dram_bytes"]
        j = next((nl for (b, nl), ol in lmap.items() if b == base and ol == int(line)), None)
        text = new_text[base][j - 1] if j and base in new_text else ""
        form = re.search(
            rf"\b({heads})\(TW_TIER_PMEM, {n}, |(tw::head_tag)\{{TW_TIER_PMEM, {n}\}}", text
        )
        # A wrapper or template several sites share: the head form takes
        # its tw_place parameter, and a call passes TW_PLACE(tier, N).
        param = re.search(
            rf"\b({heads})\((\w+)\.tier, \2\.dram_bytes, "
            rf"|(tw::head_tag)\{{(\w+)\.tier, \4\.dram_bytes\}}",
            text,
        )
        if form:
            print(f"ok {name}: {base}:{line} rewritten to {form[1] or form[2]} with dram_bytes {n}")
        elif param and f"TW_PLACE(TW_TIER_PMEM, {n})" in patch_text:
            print(
                f"ok {name}: {base}:{line} rewritten to {param[1] or param[3]} with a tw_place "
                f"parameter, passed TW_PLACE(TW_TIER_PMEM, {n})"
            )
        else:
            sys.exit(f"FAIL {name}: {base}:{line} has no DRAM-head form with {n} after the patch")
    rebuilt = work / name
    run(["c++", "-fopenmp", "-o", rebuilt] + objs + libs)

    preload_rep, rebuilt_rep = work / "preload.json", work / "rebuilt.json"
    run(
        [
            tierwise,
            "run",
            "--placement",
            work / "placement.json",
            "--pmem-dir",
            work,
            "--report",
            preload_rep,
            "--",
        ]
        + cmd,
        env,
    )
    renv = dict(
        env, TIERWISE_REPORT=str(rebuilt_rep), TIERWISE_PMEM_DIR=str(work), TIERWISE_UNMATCHED_MIN="1"
    )
    renv.pop("LD_PRELOAD", None)
    out = run([rebuilt] + cmd[1:], renv)
    if checksum(out.stdout) != plain:
        sys.exit(f"FAIL {name}: rebuilt checksum {checksum(out.stdout)} != unplaced {plain}")
    print(f"ok {name}: rebuilt checksum equals the unplaced run")

    pre = json.loads(preload_rep.read_text())
    reb = json.loads(rebuilt_rep.read_text())
    # Both sides per location (tierwise.compare_runs, as `compare-runs`
    # keys them): the first three user frames, inline frames expanded,
    # the rebuilt program's lines mapped back through the patch, so the
    # callers of a shared wrapper, macro or pool are told apart.
    sym_pre = Symbolizer({exe.name: str(exe)})
    sym_reb = Symbolizer({rebuilt.name: str(rebuilt)})
    want_all = bytes_by_site(
        {"sites": [s for s in pre["sites"] if s["tier"] == "pmem"]}, sym_pre
    )
    got_all = bytes_by_site(
        {"sites": [], "unmatched": reb["unmatched"]}, sym_reb, lines=patch_line_map(patch_text)
    )
    for key, want in want_all.items():
        got = got_all.get(key, {})
        if want != got:
            sys.exit(f"FAIL {name}: {key}: LD_PRELOAD {want}, rebuilt {got}")
        if not want.get("pmem"):
            sys.exit(f"FAIL {name}: {key}: no pmem bytes under LD_PRELOAD")
    print(
        f"ok {name}: rebuilt report has the LD_PRELOAD bytes per tier at all {len(want_all)} placed locations"
    )
    # The same by `tierwise compare-runs`, lines mapped through the patch.
    cr = run(
        [tierwise, "compare-runs", preload_rep, rebuilt_rep, "--binary-a", exe, "--binary-b", rebuilt,
         "--patch", work / "rewrite.patch"],
        ok=(0, 1),
    )
    (work / "compare-runs.txt").write_text(cr.stdout)
    if cr.returncode:
        sys.exit(f"FAIL {name}: compare-runs: {cr.stdout.splitlines()[-1]}\n{cr.stdout[-3000:]}")
    print(f"ok {name}: compare-runs: {cr.stdout.splitlines()[-1]}")
    # Nothing else moved: every other call path of the rebuilt program (the
    # placement's dram sites, paths nobody profiled) allocates in DRAM only.
    moved = {k: v for k, v in got_all.items() if k not in want_all and set(v) - {"dram"}}
    if moved:
        key, got = next(iter(moved.items()))
        sys.exit(f"FAIL {name}: {key}: not placed, rebuilt {got} ({len(moved)} such call paths)")
    print(f"ok {name}: the other {len(got_all) - len(want_all)} call paths of the rebuilt program allocate in DRAM only")
    for s in headed:
        key = site_key(sym_pre, s["stack"])
        want = want_all.get(key, {})
        if not (want.get("dram") and want.get("pmem")):
            sys.exit(f"FAIL {name}: {key}: the DRAM head was not applied under LD_PRELOAD: {want}")
        print(
            f"ok {name}: head site {key[0][1]}:{key[0][2]}: dram={want['dram']} pmem={want['pmem']} "
            "under LD_PRELOAD and rebuilt"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
