# SPDX-License-Identifier: MIT
"""Progress of a long step on stderr: what it is doing and how far (N of M),
every `every` seconds while it runs. A daemon thread prints; the work, in
the caller's thread, only sets `what`, `done` and `total` (plain attribute
stores: no lock on the hot path). A step that ends sooner prints nothing,
nor does one before its first part is named (`doing`)."""

from __future__ import annotations

import sys
import threading
import time
from typing import IO, Any, Optional

# Seconds between lines: issue 38 asks for one at least every 10 s.
EVERY_S = 5.0


class Progress:
    """`with Progress("tierwise profile: post-processing") as p: p.who =
    "mpi-pagerank"; p.doing("locating sites", 11890); ... p.advance()`
    prints `PREFIX WHO: locating sites, 4,000 of 11,890 (12 s)` every
    `every` seconds (`who`: what the step is working on, if anything)."""

    def __init__(self, prefix: str, every: float = EVERY_S, stream: Optional[IO[str]] = None):
        self.prefix = prefix
        self.every = every
        self.stream = stream
        self.who = ""
        self.what = ""  # (nothing printed until the first part)
        self.done = 0
        self.total = 0
        self.lines = 0  # how many it printed
        self._t0 = time.monotonic()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None

    def doing(self, what: str, total: int = 0) -> None:
        """A new part of the step, of `total` items (0: not counted)."""
        self.what, self.done, self.total = what, 0, total

    def advance(self, n: int = 1) -> None:
        self.done += n

    def line(self) -> str:
        count = f", {self.done:,} of {self.total:,}" if self.total else ""
        who = f" {self.who}" if self.who else ""
        return f"{self.prefix}{who}: {self.what}{count} ({time.monotonic() - self._t0:.0f} s)"

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            if not self.what:
                continue
            print(self.line(), file=self.stream or sys.stderr, flush=True)
            self.lines += 1

    def __enter__(self) -> "Progress":
        self._t0 = time.monotonic()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join()
