#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Site identity across backends (site-identity.test): for each profile
directory (final or raw), the sites of at least MIN bytes whose stack names
one of MODULES, as (stack, bytes_allocated, allocs), and the modules those
stacks name as (module, build_id) from its modules.csv. Prints each
directory's sites and modules, `build-id NAME ok` when every directory gives
module NAME the build-id its file has (read with pyelftools, through the
path in the first directory's modules.csv), and `EQUAL` when every directory
gives the same sites and modules, else `DIFFERENT`.

  identity.py MIN MODULE[,MODULE...] DIR...
"""

import csv
import sys
from pathlib import Path

from elftools.elf.elffile import ELFFile


def build_id(path):
    with open(path, "rb") as f:
        for sec in ELFFile(f).iter_sections():
            if sec.header.sh_type == "SHT_NOTE":
                for note in sec.iter_notes():
                    if note["n_type"] == "NT_GNU_BUILD_ID":
                        return note["n_desc"]
    return ""


def profile(d, min_bytes, modules):
    d = Path(d)
    sites = sorted(
        (r["stack"], r["bytes_allocated"], r["allocs"])
        for r in csv.DictReader(open(d / "sites.csv"))
        if r["bytes_allocated"]
        and int(r["bytes_allocated"]) >= min_bytes
        and any(f.split("+")[0] in modules for f in r["stack"].split(";"))
    )
    named = {f.split("+")[0] for s in sites for f in s[0].split(";")}
    rows = {r["module"]: r for r in csv.DictReader(open(d / "modules.csv"))}
    mods = sorted((m, rows[m]["build_id"] if m in rows else "(missing)") for m in named)
    return sites, mods, {m: rows[m]["path"] for m in named if m in rows}


def main():
    min_bytes, modules, dirs = int(sys.argv[1]), sys.argv[2].split(","), sys.argv[3:]
    got = [profile(d, min_bytes, modules) for d in dirs]
    for d, (sites, mods, _) in zip(dirs, got):
        print(f"== {Path(d).name}")
        for s in sites:
            print("site", *s)
        for m in mods:
            print("module", *m)
    for m in modules:
        path = got[0][2].get(m)
        want = build_id(path) if path else None
        ok = want and all(dict(g[1]).get(m) == want for g in got)
        print(f"build-id {m} {'ok' if ok else 'WRONG'} {want}")
    same = all(g[:2] == got[0][:2] for g in got) and got[0][0]
    print("EQUAL" if same else "DIFFERENT")


if __name__ == "__main__":
    main()
