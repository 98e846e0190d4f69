"""A table of the report: what report.md and report.html render, whatever built it, and how
its values are written."""
from __future__ import annotations

from dataclasses import dataclass

from analysis.metrics.censoring import UNFINISHED_S, UNFINISHED_TEXT

Cell = str | float | int | None


@dataclass
class Table:
    title: str
    header: list[str]
    rows: list[list[Cell]]
    note: str = ""


class Count(float):
    """A number of packets, connections, …: written as an integer when it is one (a median
    of counts may fall between two)."""


def count(value: float | None) -> Count | None:
    return None if value is None else Count(value)


def fmt(value: Cell) -> str:
    """Counts as integers (one decimal for a median between two), other values >= 100 with
    1 decimal and smaller ones with 3, like the studies' tables; `–` for undefined, `∞` for
    a time beyond the timeout (analysis/metrics/censoring.py)."""
    if value is None:
        return "–"
    if value == UNFINISHED_S:
        return UNFINISHED_TEXT
    if isinstance(value, Count):
        return f"{value:.0f}" if value == int(value) else f"{value:.1f}"
    if isinstance(value, float):
        return f"{value:.1f}" if abs(value) >= 100 else f"{value:.3f}"
    return str(value)


def kbit(bytes_per_s: float | None) -> float | None:
    """B/s as the report's kbit/s (1 kbit = 1000 bit)."""
    return None if bytes_per_s is None else bytes_per_s * 8 / 1000


def markdown_table(header: list[str], rows: list[list[str]]) -> list[str]:
    """The lines of a Markdown table; a `|` inside a cell is escaped."""
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
    return out
