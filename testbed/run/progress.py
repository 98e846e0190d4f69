"""The runner's progress line on stderr: time elapsed, the cells running now, cells and
replications done/failed/degraded/timed out/total, and an ETA.

The ETA is there from the start: before a replication has ended it comes from each cell's
planned replication time (`planned_replication_s`: set-up plus the flows' planned durations,
testbed/scenario/flows/, at most the timeout); once replications end, a cell's measured mean
replaces its plan, and cells not yet measured have their plan scaled by how the measured ones
compared with theirs. The work left (replications not started, and what the running ones
still have to do) is divided by the lanes.

On a terminal the line is rewritten in place; into a pipe or a file a new line is written at
most once a second, when something other than the times changed, or a minute after the last.
"""
from __future__ import annotations

import statistics
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Mapping, TextIO

from testbed.scenario.cell import ResolvedCell

SETUP_ESTIMATE_S = 5.0        # lane, link, TCP profile, captures, servers; then the checks of the instruments
HEARTBEAT_S = 60.0            # into a pipe: a line at least this often while something runs
RUNNING_SHOWN = 2             # running replications named in the line; "and N more" after them


def planned_replication_s(cell: ResolvedCell, timeout_us: int) -> float:
    """What one replication of the cell is expected to take before any has been measured."""
    ends = [flow.start_us + flow.planned_us(cell.link, timeout_us) for flow in cell.flows]
    return SETUP_ESTIMATE_S + min(timeout_us, max(ends, default=0)) / 1e6


@dataclass
class Progress:
    name: str
    planned: Mapping[str, int]            # cell id -> replications to run in this invocation
    parallel: int
    stream: TextIO = sys.stderr
    clock: Callable[[], float] = time.monotonic
    min_interval_s: float = 1.0
    estimates: Mapping[str, float] = field(default_factory=dict)   # cell id -> planned seconds per replication
    done: dict[str, int] = field(default_factory=dict)
    failed: int = 0
    timed_out: int = 0
    degraded: int = 0
    durations: list[float] = field(default_factory=list)
    measured: dict[str, list[float]] = field(default_factory=dict)      # cell id -> durations
    running: dict[tuple[str, int], float] = field(default_factory=dict)  # (cell, rep) -> clock at its start
    started_at: float | None = None
    _last_print: float = float("-inf")
    _last_state: str = ""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        if self.started_at is None:
            self.started_at = self.clock()

    @property
    def total(self) -> int:
        return sum(self.planned.values())

    @property
    def finished(self) -> int:
        return sum(self.done.values())

    def start(self, cell_id: str, rep: int) -> None:
        """A replication has started on a lane."""
        with self._lock:
            self.running[(cell_id, rep)] = self.clock()

    def record(self, cell_id: str, status: str, duration_s: float, rep: int | None = None) -> None:
        with self._lock:
            self.done[cell_id] = self.done.get(cell_id, 0) + 1
            if status == "degraded":
                self.degraded += 1
            elif status == "timeout":
                self.timed_out += 1
            elif status != "ok":
                self.failed += 1
            self.durations.append(duration_s)
            self.measured.setdefault(cell_id, []).append(duration_s)
            started = self.running.pop((cell_id, rep), None) if rep is not None else None
            if started is None:       # a caller that does not say which: the cell's oldest running one
                oldest = min((k for k in self.running if k[0] == cell_id), key=self.running.get, default=None)
                if oldest is not None:
                    del self.running[oldest]

    def _state(self) -> str:
        """The line without its times: what a pipe gets a new line for."""
        cells_done = sum(1 for cell, n in self.planned.items() if self.done.get(cell, 0) >= n)
        running = sorted(self.running, key=self.running.get)
        names = [f"{cell} rep-{rep:02d}" for cell, rep in running[:RUNNING_SHOWN]]
        if len(running) > RUNNING_SHOWN:
            names.append(f"{len(running) - RUNNING_SHOWN} more")
        now = f"; running {', '.join(names)}" if names else ""
        return (f"cells {cells_done}/{len(self.planned)}, replications {self.finished}/{self.total} done, "
                f"{self.failed} failed, {self.degraded} degraded"
                + (f", {self.timed_out} timed out" if self.timed_out else "") + now)

    def line(self) -> str:
        elapsed = _duration(self.clock() - (self.started_at or 0.0))
        return f"[{self.name}] {elapsed} elapsed, {self._state()}, ETA {self.eta()}"

    def eta(self) -> str:
        remaining = self.total - self.finished
        if remaining <= 0:
            return "0s"
        seconds = self._work_left_s()
        return "?" if seconds is None else _duration(seconds / max(1, self.parallel))

    def _work_left_s(self) -> float | None:
        """Seconds of replication time still to run, over all lanes; None: nothing to go on."""
        if not self.estimates:     # no plan: the mean measured time of the replications left
            if not self.durations:
                return None
            return statistics.fmean(self.durations) * (self.total - self.finished)
        measured_cells = [c for c in self.measured if c in self.estimates]
        planned = sum(self.estimates[c] * len(self.measured[c]) for c in measured_cells)
        actual = sum(sum(self.measured[c]) for c in measured_cells)
        scale = actual / planned if planned > 0 else 1.0

        def expected(cell: str) -> float:
            if self.measured.get(cell):
                return statistics.fmean(self.measured[cell])
            return self.estimates.get(cell, SETUP_ESTIMATE_S) * scale

        now = self.clock()
        running = {}
        for (cell, _), started in self.running.items():
            running.setdefault(cell, []).append(max(0.0, expected(cell) - (now - started)))
        left = 0.0
        for cell, n in self.planned.items():
            waiting = n - self.done.get(cell, 0) - len(running.get(cell, []))
            left += max(0, waiting) * expected(cell) + sum(running.get(cell, []))
        return left

    def tick(self, force: bool = False) -> None:
        with self._lock:
            text, state = self.line(), self._state()
            now = self.clock()
            tty = self.stream.isatty()
            since = now - self._last_print
            if not force and (since < (0.2 if tty else self.min_interval_s)
                              or (not tty and state == self._last_state and since < HEARTBEAT_S)):
                return
            self._last_print, self._last_state = now, state
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
