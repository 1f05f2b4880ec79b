# SPDX-License-Identifier: MIT
"""Helper of internal-sites.test: counts the sites (or a run report's
unmatched stacks) that name no user frame. Usage: sites SITES.CSV |
report REPORT.JSON"""

import csv
import json
import re
import sys

# FORMATS.md "Site identity": the allocator modules
ALLOCATOR = re.compile(r"(libtierwise|vgpreload_|libmemkind\.so|libc\.so|libstdc\+\+\.so|libgcc_s\.so|ld-linux|libjemalloc)")


def no_user_frame(stack):
    return all(ALLOCATOR.match(f) for f in stack.split(";"))


kind, path = sys.argv[1:3]
if kind == "sites":
    rows = [r for r in csv.DictReader(open(path)) if not r["stack"].startswith("[")]
    print(
        f"sites {len(rows)}, without a user frame {sum(no_user_frame(r['stack']) for r in rows)}, "
        f"in the runtime's sources {sum('runtime/src' in r['location'] for r in rows)}, "
        f"of 72704 bytes {sum(r['bytes_allocated'] == '72704' for r in rows)}"
    )
else:
    un = json.load(open(path))["unmatched"]
    print(f"unmatched {len(un)}, without a user frame {sum(no_user_frame(u['stack']) for u in un)}")
