# SPDX-License-Identifier: MIT
"""Progress of long steps (issue 36 item 7): while a step runs, a line on
stderr at least every INTERVAL_S seconds saying it is still running and for
how long, so that no step over 10 s is silent. Standard library only."""

from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, Iterator

INTERVAL_S = 10.0


@contextmanager
def ticking(verb: str, step: str, alive: Callable[[], bool] | None = None) -> Iterator[None]:
    """Within the block, every INTERVAL_S: `tierwise VERB: STEP: still
    running, N s` (while `alive()`, where given, says so)."""
    stop = threading.Event()
    t0 = time.monotonic()

    def tick() -> None:
        while not stop.wait(INTERVAL_S):
            if alive is None or alive():
                print(
                    f"tierwise {verb}: {step}: still running, {time.monotonic() - t0:.0f} s",
                    file=sys.stderr,
                    flush=True,
                )

    threading.Thread(target=tick, daemon=True).start()
    try:
        yield
    finally:
        stop.set()
