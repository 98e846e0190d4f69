"""The cells' metrics whose names match a pattern (`<flow>.probes`, `<flow>.rtt.<state>.probes`):
how a report table finds the flows and states it has rows for."""
from __future__ import annotations

import re
from typing import Iterator

from analysis.aggregate.run_analysis import CellResult


def matching(cells: list[CellResult], pattern: re.Pattern[str]) -> Iterator[tuple[CellResult, re.Match[str]]]:
    """Each cell with each of its metric names `pattern` matches, in name order."""
    for c in cells:
        for metric in sorted(c.summaries):
            m = pattern.match(metric)
            if m is not None:
                yield c, m
