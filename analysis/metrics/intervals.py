"""A set of half-open integer intervals (sequence-number ranges)."""

from __future__ import annotations

import bisect


class IntervalSet:
    def __init__(self) -> None:
        self._starts: list[int] = []
        self._ends: list[int] = []

    def add(self, start: int, end: int) -> None:
        if end <= start:
            return
        starts, ends = self._starts, self._ends
        if starts and start >= starts[-1]:  # in-order data: at or after the last interval
            if start <= ends[-1]:
                ends[-1] = max(ends[-1], end)
            else:
                starts.append(start)
                ends.append(end)
            return
        i = bisect.bisect_left(self._ends, start)       # first interval that may touch
        j = bisect.bisect_right(self._starts, end)      # past the last that may touch
        if i < j:
            start = min(start, self._starts[i])
            end = max(end, self._ends[j - 1])
        self._starts[i:j] = [start]
        self._ends[i:j] = [end]

    def covers(self, start: int, end: int) -> bool:
        """True when every point of [start, end) is in the set."""
        if end <= start:
            return True
        i = bisect.bisect_right(self._starts, start) - 1
        return i >= 0 and self._ends[i] >= end

    def __len__(self) -> int:
        return len(self._starts)
