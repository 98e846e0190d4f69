"""`squall run` before its replications run: how far planning is.

A study of 10 000 cells x 10 000 replications takes a while to load and plan. While it does,
`progress` says how far planning is (at most once a second); SIGINT/SIGTERM meanwhile end the
command with squall's stop message (run/stop.py `raise_on_signals`).
"""
from __future__ import annotations

import time
from typing import Callable, TextIO

PROGRESS_EVERY_S = 1.0


def progress_printer(stream: TextIO, clock: Callable[[], float] = time.monotonic) -> Callable[[int, int], None]:
    """progress(cells planned, cells): `squall run: planning: K of N cells` now and then."""
    last = [float("-inf")]

    def progress(done: int, total: int) -> None:
        now = clock()
        if now - last[0] >= PROGRESS_EVERY_S or done == total:
            last[0] = now
            print(f"squall run: planning: {done} of {total} cells (finished replications are kept)",
                  file=stream, flush=True)
    return progress
