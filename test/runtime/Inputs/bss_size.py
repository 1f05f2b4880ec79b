# SPDX-License-Identifier: MIT
"""For bss.test: each runtime library's .bss size (binutils `size -A`) against
2 MiB. Usage: python bss_size.py PATH/libtierwise-runtime.so"""

import os
import subprocess
import sys

d = os.path.dirname(sys.argv[1])
for name in ("libtierwise-runtime.so", "libtierwise.so", "libtierwise-pmu.so"):
    out = subprocess.run(["size", "-A", os.path.join(d, name)], capture_output=True, text=True, check=True).stdout
    bss = next(int(line.split()[1]) for line in out.splitlines() if line.startswith(".bss "))
    print(name, "bss ok" if bss < 2 << 20 else f"bss too big: {bss} bytes")
