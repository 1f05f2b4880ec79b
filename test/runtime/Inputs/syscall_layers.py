# SPDX-License-Identifier: MIT
"""test/runtime/syscall-layers.test: which runtime sources make raw page-moving, memory-policy,
futex or affinity system calls, and the layer each one's first comment
names. Prints `layers ok FILE:LAYER ...`, or the offenders and exits 1."""
import re
import sys
from pathlib import Path

CALL = re.compile(r"\bsyscall\s*\(\s*SYS_(move_pages|migrate_pages|mbind|set_mempolicy|futex)\b"
                  r"|\bsched_setaffinity\s*\(")
found, bad = [], []
for f in sorted(Path(sys.argv[1]).glob("*.c*")):
    text = f.read_text()
    code = re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.S)  # (comments out)
    if not CALL.search(code):
        continue
    m = re.search(r"Layer (\d)", "\n".join(text.splitlines()[:6]))
    layer = int(m[1]) if m else None
    (found if layer in (0, 1) else bad).append(f"{f.name}:{layer}")
if bad:
    print("layers: raw system calls in", *bad)
    sys.exit(1)
print("layers ok", *found)
