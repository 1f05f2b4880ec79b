# SPDX-License-Identifier: MIT
"""`python -m tierwise` runs the CLI."""

import sys

from tierwise.cli import main

sys.exit(main())
