# SPDX-License-Identifier: MIT
"""tierwise: profiling-guided data placement for tiered memory."""

__version__ = "0.1.0"
