# SPDX-License-Identifier: MIT
"""What bin/tierwise runs: `python -E -s [-S] tierwise-boot.py ARGS`. Python
puts this file's directory first on sys.path, and it holds the tierwise
package (advisor/ in the source tree, PREFIX/lib/tierwise/python in an
install), so the CLI finds its own code wherever the prefix was moved; -E
and -s keep the user's PYTHONPATH (set by `module load python` on HPC
systems), PYTHONHOME and user site-packages from changing what it imports
(issue 36: a numpy.py on PYTHONPATH broke every verb), while the programs it
runs get the environment unchanged.

`tierwise-boot.py __tierwise_run_finish__ ARGS` is the finish step of
`tierwise run` (commands/run_finish.py; commands/run.py starts it)."""

import sys

FINISH = "__tierwise_run_finish__"

if sys.argv[1:2] == [FINISH]:
    from tierwise.commands.run_finish import main as finish

    sys.exit(finish(sys.argv[2:]))

from tierwise.cli import main  # noqa: E402

sys.exit(main())
