"""Stopping a run on SIGINT/SIGTERM: the one place squall catches them. While replications run
(the runner on this machine, a cluster worker on its node) the signal sets a Stop event instead
of killing the process, so the workers wind down: the replication running is stopped and
recorded, every lane is torn down, and the run can be resumed. Before any runs (loading and
planning, testbed/run/planning.py) it raises Stopped, which `squall run` turns into its stop
message."""
from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, TextIO

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Stop(threading.Event):
    """Set when the work must stop; `signal_number` says which signal stopped it first (0: none,
    e.g. a lane that could not be built)."""
    signal_number = 0

    @property
    def signal_name(self) -> str:
        return signal.Signals(self.signal_number).name if self.signal_number else "a stop"


@contextmanager
def _handled(handle: Callable[[int, object], None]) -> Iterator[None]:
    """While inside, SIGINT and SIGTERM go to `handle`, and the previous handlers come back after.
    Signal handlers belong to the main thread: elsewhere nothing is caught."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous: dict[int, Any] = {sig: signal.signal(sig, handle) for sig in SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextmanager
def stop_on_signals(stop: Stop, first: Callable[[int], None] | None = None) -> Iterator[Stop]:
    """While inside, SIGINT and SIGTERM set `stop`; `first(signum)` is told of the first one (to
    say what happens now)."""
    def handle(signum: int, frame: object) -> None:
        if not stop.signal_number:
            stop.signal_number = signum
            if first is not None:
                first(signum)
        stop.set()

    with _handled(handle):
        yield stop


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


@contextmanager
def raise_on_signals(stream: TextIO) -> Iterator[None]:
    """While inside, SIGINT and SIGTERM raise Stopped (said on `stream` first)."""
    def handle(signum: int, frame: object) -> None:
        print(f"\nsquall run: {signal.Signals(signum).name} received, stopping ...", file=stream, flush=True)
        raise Stopped(signum)

    with _handled(handle):
        yield
