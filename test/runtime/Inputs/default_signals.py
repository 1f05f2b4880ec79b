#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs a command with SIGTERM, SIGINT and SIGHUP at their default actions
(lit's shell starts commands with SIGINT ignored, which exec keeps).

  default_signals.py CMD ARG..."""

import os
import signal
import sys

for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(s, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])
