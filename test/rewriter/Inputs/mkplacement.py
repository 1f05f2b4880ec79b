# SPDX-License-Identifier: MIT
"""Writes a placement for a rewriter test from a template in this directory.

usage: mkplacement.py TEMPLATE SRC [MORE_SRC...] > placement.json

In TEMPLATE, @FILE@ becomes SRC's absolute path, @BASE@ its basename and
@tag@ the number of the line of SRC that carries the marker comment `// @tag`
(comment-only lines, such as CHECK lines, are not markers), so tests do not hard-code
line numbers; a marker may also be in one of MORE_SRC (a header of SRC). A
marker that is missing or not unique is an error."""

import os
import re
import sys


def main(template, src, *more):
    files = [open(f).read().splitlines() for f in (src, *more)]
    text = open(template).read()
    text = text.replace("@FILE@", os.path.abspath(src)).replace("@BASE@", os.path.basename(src))

    def line_of(m):
        tag = m.group(1)
        hits = [
            i + 1
            for lines in files
            for i, l in enumerate(lines)
            if re.search(r"//.*@" + re.escape(tag) + r"\b", l) and not l.lstrip().startswith("//")
        ]
        if len(hits) != 1:
            sys.exit(f"mkplacement: marker // @{tag} found {len(hits)} times in {src}")
        return str(hits[0])

    sys.stdout.write(re.sub(r"@([a-z][a-z0-9_]*)@", line_of, text))


if __name__ == "__main__":
    main(*sys.argv[1:])
