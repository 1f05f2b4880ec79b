# SPDX-License-Identifier: MIT
"""Checks the CLI's placement reader (advisor/tierwise/formats/placement.py)
and the runtime's (runtime/src/tw_placement.c, preloaded into /bin/true with
TIERWISE_PLACEMENT) against the shared vectors, as tier_check.py does tier
names: one FAIL line per disagreement with the expected result, then
"placements: N vectors ok" or "placements: N failed". A valid placement
naming a numa:N tier this machine lacks (made on another machine) must also
get the runtime's warning that its sites are served from DRAM.
Usage: python placement_check.py placement-vectors.txt RUNTIME.so TMPDIR"""

import json
import os
import re
import subprocess
import sys

from tierwise import machine
from tierwise.formats.placement import validate

vectors, lib, tmp = sys.argv[1:4]
rows = [
    line.rsplit("\t", 1)
    for line in open(vectors, encoding="utf-8").read().splitlines()
    if "\t" in line and not line.startswith("#")
]


def cli(text):
    try:
        validate(json.loads(text), "vector")
        return "ok", ""
    except ValueError as e:  # json.JSONDecodeError is one
        return "error", str(e)


def runtime(text, path):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    env = dict(os.environ, LD_PRELOAD=lib, TIERWISE_PLACEMENT=path)
    env.pop("TIERWISE_REPORT", None)
    err = subprocess.run(["/bin/true"], env=env, capture_output=True, text=True).stderr
    if "running unplaced" in err:
        return "error", err.strip()
    nodes = machine.nodes()
    for tier in set(re.findall(r'"(numa:[0-9]+)"', text)):
        if not machine.servable(tier, nodes)[0] and f"tier {tier}: this machine has no" not in err:
            return "ok without the warning that its sites are in DRAM", err.strip()
    return "ok", err.strip()


failed = 0
for n, (text, want) in enumerate(rows):
    for who, (got, said) in (("cli", cli(text)), ("runtime", runtime(text, f"{tmp}/v{n}.json"))):
        if got != want:
            failed += 1
            print(f"FAIL: {who} gives {got}, expected {want}: {text} ({said})")
print(f"placements: {failed} failed" if failed else f"placements: {len(rows)} vectors ok")
sys.exit(1 if failed else 0)
