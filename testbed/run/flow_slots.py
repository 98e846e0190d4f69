"""Flow slots: how many replications of a run are between START and their flows' end at once.

With `squall run --parallel K --prepare-ahead` the runner has K + 1 lane workers but K slots.
A replication builds its lane and sets up (link, TCP profile, captures, servers) without a
slot, takes one just before START and gives it back when its flows end; its drain, stop and
checks then run beside the next replication's flows. The lane work that surrounds every
replication stops adding to a study's wall time, which approaches K replications per
emulated flow time (docs/runner.md "Prepare-ahead").
"""
from __future__ import annotations

import threading

POLL_S = 0.05     # how soon a replication waiting for a slot notices a stop


class FlowSlots:
    def __init__(self, count: int):
        if count < 1:
            raise ValueError(f"flow slots: {count}; expected at least 1")
        self._free = threading.Semaphore(count)

    def acquire(self, stop: threading.Event) -> bool:
        """Waits for a free slot; False when `stop` was set first."""
        while not self._free.acquire(timeout=POLL_S):
            if stop.is_set():
                return False
        return True

    def release(self) -> None:
        self._free.release()
