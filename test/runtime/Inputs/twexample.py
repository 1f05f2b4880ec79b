# SPDX-License-Identifier: MIT
"""End-to-end check of the runtime on one example kernel (test/runtime/
examples.test): `python twexample.py TIERWISE EXE ARGS... -- WORKDIR`.
1. the census lists each big structure (`object NAME ADDR BYTES`, -v) as a
   site with an object of exactly that size, distinct structures distinct
   sites; 2. a placement naming one structure's site pmem puts exactly that
   site's bytes in pmem (run report) and the structure's address in a mapping
   of the pmem directory's file, the others outside; 3. the checksum equals
   the unplaced run. Prints `ok ...` lines; exits non-zero on a failure."""

import csv
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from twcheck import where  # noqa: E402

OBJ = re.compile(r"object (\S+) 0x([0-9a-f]+) (\d+)")


def run(cmd, env=None, err=None):
    r = subprocess.run(
        cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    if r.returncode:
        sys.exit(f"FAIL {cmd}: exit {r.returncode}\n{r.stderr[-2000:]}")
    if err:
        Path(err).write_text(r.stderr)
    return r


def checksum(out):
    m = re.search(r"checksum: (\S+)", out)
    return m and m[1]


def main(argv):
    sep = argv.index("--")
    tierwise, cmd, work = argv[0], argv[1:sep], Path(argv[sep + 1])
    name = Path(cmd[0]).name
    work.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, OMP_NUM_THREADS="2")
    plain = run(cmd, env)
    objs = [(m[1], int(m[3])) for m in OBJ.finditer(plain.stderr)]
    big = [(n, b) for n, b in objs if b >= 4096]
    prof = work / "prof"
    run([tierwise, "profile", "--backend", "alloc", "-o", str(prof), "--"] + cmd, env)
    sites = {r["site"]: r for r in csv.DictReader(open(prof / "sites.csv"))}
    by_size = {}
    for r in csv.DictReader(open(prof / "objects.csv")):
        by_size.setdefault(int(r["size"]), set()).add(r["site"])
    need = Counter(b for _, b in big)
    for n, b in big:
        have = by_size.get(b, set())
        if len(have) < need[b]:
            sys.exit(
                f"FAIL {name}: object {n} ({b} bytes): {len(have)} census "
                f"site(s) with objects of that size, need {need[b]}"
            )
    print(f"ok {name}: {len(big)} big structures are census sites of their size")
    # Place the largest structure whose size belongs to exactly one site.
    cands = [(b, n) for n, b in big if need[b] == 1 and len(by_size[b]) == 1]
    b, n = max(cands)
    site = sites[next(iter(by_size[b]))]
    placement = work / "placement.json"
    placement.write_text(
        json.dumps(
            {
                "format": "tierwise-placement",
                "version": 1,
                "default_tier": "dram",
                "sites": [
                    {
                        "stack": site["stack"],
                        "location": site["location"],
                        "tier": "pmem",
                    }
                ],
            }
        )
    )
    pmem = work / "pmem"
    pmem.mkdir(exist_ok=True)
    penv = dict(
        env,
        LD_PRELOAD=str(Path(tierwise).parents[1] / "lib" / "libtierwise-runtime.so"),
        TIERWISE_PLACEMENT=str(placement),
        TIERWISE_PMEM_DIR=str(pmem),
        TIERWISE_REPORT=str(work / "report.json"),
        TIERWISE_MAPS_COPY=str(work / "maps"),
    )
    (work / "maps").unlink(missing_ok=True)
    placed = run(cmd, penv, err=work / "placed.err")
    if checksum(placed.stdout) != checksum(plain.stdout) or not checksum(plain.stdout):
        sys.exit(
            f"FAIL {name}: checksum {checksum(placed.stdout)} != {checksum(plain.stdout)}"
        )
    print(f"ok {name}: placed checksum equals the unplaced run")
    rep = json.loads((work / "report.json").read_text())
    s = rep["sites"][0]
    want = int(site["bytes_allocated"])
    if s["bytes"].get("pmem") != want or s["bytes"].get("dram") or s["fallback_bytes"]:
        sys.exit(
            f"FAIL {name}: report {s['bytes']} fallback {s['fallback_bytes']}, "
            f"census says {want} bytes"
        )
    print(f"ok {name}: report has exactly the site's {want} bytes in pmem")
    import io
    from contextlib import redirect_stdout

    buf = io.StringIO()
    with redirect_stdout(buf):
        where([str(work / "maps"), str(work / "placed.err"), str(pmem)])
    loc = dict(line.split() for line in buf.getvalue().splitlines())
    for on, ob in big:
        expect = "in-dir" if on == n else "not-in-dir"
        if loc.get(on) != expect:
            sys.exit(f"FAIL {name}: object {on} is {loc.get(on)}, expected {expect}")
    print(f"ok {name}: {n} lies in the pmem file, the other structures do not")


if __name__ == "__main__":
    main(sys.argv[1:])
