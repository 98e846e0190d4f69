"""The runner's progress line on stderr: cells, replications done/failed/total, ETA.

On a terminal the line is rewritten in place; into a pipe or a file a new line is
written at most once a second, and only when something changed.
"""
from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Mapping, TextIO


@dataclass
class Progress:
    name: str
    planned: Mapping[str, int]            # cell id -> replications to run in this invocation
    parallel: int
    stream: TextIO = sys.stderr
    clock: Callable[[], float] = time.monotonic
    min_interval_s: float = 1.0
    done: dict[str, int] = field(default_factory=dict)
    failed: int = 0
    durations: list[float] = field(default_factory=list)
    _last_print: float = float("-inf")
    _last_text: str = ""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def total(self) -> int:
        return sum(self.planned.values())

    @property
    def finished(self) -> int:
        return sum(self.done.values())

    def record(self, cell_id: str, status: str, duration_s: float) -> None:
        with self._lock:
            self.done[cell_id] = self.done.get(cell_id, 0) + 1
            if status != "ok":
                self.failed += 1
            self.durations.append(duration_s)

    def line(self) -> str:
        cells_done = sum(1 for cell, n in self.planned.items() if self.done.get(cell, 0) >= n)
        return (f"[{self.name}] cells {cells_done}/{len(self.planned)}, replications "
                f"{self.finished}/{self.total} done, {self.failed} failed, ETA {self.eta()}")

    def eta(self) -> str:
        remaining = self.total - self.finished
        if remaining <= 0:
            return "0s"
        if not self.durations:
            return "?"
        seconds = sum(self.durations) / len(self.durations) * remaining / max(1, self.parallel)
        return _duration(seconds)

    def tick(self, force: bool = False) -> None:
        with self._lock:
            text = self.line()
            now = self.clock()
            tty = self.stream.isatty()
            if not force and (now - self._last_print < (0.2 if tty else self.min_interval_s)
                              or (not tty and text == self._last_text)):
                return
            self._last_print, self._last_text = now, text
            self.stream.write(f"\r\x1b[K{text}" if tty else f"{text}\n")
            self.stream.flush()

    def close(self) -> None:
        self.tick(force=True)
        if self.stream.isatty():
            self.stream.write("\n")
            self.stream.flush()


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
