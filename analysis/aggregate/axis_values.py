"""The axis columns of every summary table: after `cell`, each matrix axis's label ("50ms")
and, beside it, the label's value in SI units where the scenario read the label as a time,
rate or size (expanded.json's `axis_si`, testbed/units.py `si_quantity`): the
column `<axis>_s` (seconds), `<axis>_bps` (bit/s) or `<axis>_bytes`, a number pandas can
sort and plot against ("delay_s" = 0.05)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from analysis.results.layout import RunLayout

SI_SUFFIXES = {"s": "_s", "bit/s": "_bps", "B": "_bytes"}


@dataclass(frozen=True)
class AxisValues:
    names: list[str]                        # the columns, in order
    numbers: frozenset[str]                 # of them, the SI values (the others are labels)
    by_cell: dict[str, dict[str, Any]]

    def of(self, cell: str) -> dict[str, Any]:
        return self.by_cell.get(cell) or dict.fromkeys(self.names)


def _si(spec: dict[str, Any]) -> dict[str, tuple[float, str]]:
    given = spec.get("axis_si")
    return {str(a): (float(q[0]), str(q[1])) for a, q in given.items()} if isinstance(given, dict) else {}


def axis_values(layout: RunLayout, columns: dict[str, str]) -> AxisValues:
    """`columns`: each axis -> its label's column (summary.axis_columns)."""
    si_columns: dict[str, dict[str, str]] = {}
    for c in layout.cells:
        for axis, (_, unit) in _si(c.spec).items():
            if axis in columns:
                si_columns.setdefault(axis, {}).setdefault(
                    unit, columns[axis] + SI_SUFFIXES.get(unit, "_si"))
    names = [n for axis, col in columns.items() for n in (col, *si_columns.get(axis, {}).values())]
    by_cell = {}
    for c in layout.cells:
        given, row = _si(c.spec), {}
        for axis, col in columns.items():
            row[col] = c.labels.get(axis)
            for unit, si_col in si_columns.get(axis, {}).items():
                value = given.get(axis)
                row[si_col] = value[0] if value and value[1] == unit else None
        by_cell[c.cell] = row
    numbers = frozenset(n for units in si_columns.values() for n in units.values())
    return AxisValues(names, numbers, by_cell)
