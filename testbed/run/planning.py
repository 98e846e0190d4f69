"""`squall run` before its replications run: loading, checking and planning, said and stoppable.

A study of 10 000 cells x 10 000 replications takes a while to load and plan. While it does,
`progress` says how far planning is (at most once a second), and SIGINT/SIGTERM end the command
with squall's stop message and exit 128 + the signal (instead of the default death without a
word); once the replications run, the runner's own handlers take over (runner._signals_stop).
"""
from __future__ import annotations

import signal
import threading
import time
from pathlib import Path
from typing import Any, Callable, TextIO

PROGRESS_EVERY_S = 1.0


class Stopped(BaseException):
    """A signal came before the replications ran (a BaseException, like KeyboardInterrupt, so that
    no `except Exception` on the way takes it for an error of the scenario)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum
        self.run_dir: Path | None = None      # set once the run directory exists

    def message(self) -> str:
        name = signal.Signals(self.signum).name
        if self.run_dir is None:
            return f"squall run: {name} received before any replication ran; nothing was created"
        return (f"squall run: {name} received while planning; no replication ran. Resume with:\n"
                f"  squall run --resume {self.run_dir}")


class StopBeforeRunning:
    """Within it, SIGINT and SIGTERM raise Stopped (main thread only; elsewhere it does nothing)."""

    def __init__(self, stream: TextIO):
        self.stream = stream
        self.previous: dict[int, Any] = {}

    def __enter__(self) -> "StopBeforeRunning":
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self.previous[sig] = signal.signal(sig, self._raise)
        return self

    def _raise(self, signum: int, frame: object) -> None:
        print(f"\nsquall run: {signal.Signals(signum).name} received, stopping ...", file=self.stream, flush=True)
        raise Stopped(signum)

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)


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
