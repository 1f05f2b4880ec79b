# SPDX-License-Identifier: MIT
"""Writes a placement whose sites are the real calls of FUNC@plt in BINARY,
in address order, as stacks in the site identity format (module+offset of
the call instruction), with no location: what `tierwise profile` would
record for them, for tests that symbolize through `tierwise rewrite`.

usage: callsites.py BINARY FUNC TIER [TIER...]   (one tier per call)"""

import json
import os
import re
import subprocess
import sys


def main(binary, func, *tiers):
    dis = subprocess.run(
        ["objdump", "-d", "--no-show-raw-insn", binary], capture_output=True, text=True, check=True
    ).stdout
    calls = [
        int(m.group(1), 16)
        for m in re.finditer(r"^\s*([0-9a-f]+):\s+call\s+[0-9a-f]+ <" + re.escape(func) + r"@plt>", dis, re.M)
    ]
    if len(calls) != len(tiers):
        sys.exit(f"callsites: {len(calls)} calls of {func} in {binary}, {len(tiers)} tiers given")
    mod = os.path.basename(binary)
    sites = [{"stack": f"{mod}+0x{addr:x}", "tier": t} for addr, t in zip(calls, tiers)]
    json.dump(
        {"format": "tierwise-placement", "version": 1, "default_tier": "dram", "sites": sites}, sys.stdout
    )


if __name__ == "__main__":
    main(*sys.argv[1:])
