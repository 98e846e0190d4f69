"""Stopping a run on SIGINT/SIGTERM: the one place squall catches them (the runner on this
machine, and a cluster worker on its node). The signal sets a Stop event instead of killing the
process, so the workers wind down: the replication running is stopped and recorded, every lane
is torn down, and the run can be resumed."""
from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Stop(threading.Event):
    """Set when the work must stop; `signal_number` says which signal stopped it first (0: none,
    e.g. a lane that could not be built)."""
    signal_number = 0

    @property
    def signal_name(self) -> str:
        return signal.Signals(self.signal_number).name if self.signal_number else "a stop"


@contextmanager
def stop_on_signals(stop: Stop, first: Callable[[int], None] | None = None) -> Iterator[Stop]:
    """While inside, SIGINT and SIGTERM set `stop`; `first(signum)` is told of the first one (to
    say what happens now). Signal handlers belong to the main thread: elsewhere nothing is caught."""
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return

    def handle(signum: int, frame: object) -> None:
        if not stop.signal_number:
            stop.signal_number = signum
            if first is not None:
                first(signum)
        stop.set()

    previous: dict[int, Any] = {sig: signal.signal(sig, handle) for sig in SIGNALS}
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
