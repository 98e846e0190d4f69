"""The join of the reference rows with squall's values, one row per key both have.

`ratio` = ours / reference for quantities (times, throughputs, drop counts); None when the
reference is 0. Percentages (Saarto's response time differences) are signed, so a ratio means
nothing: they get `difference` = ours − reference in percentage points instead.
"""
from __future__ import annotations

from dataclasses import dataclass

from .measures import Measurements
from .reference import Key, RefRow


@dataclass(frozen=True)
class Comparison:
    key: Key
    table: str
    unit: str
    reference: float
    ours: float
    ratio: float | None
    difference: float | None


@dataclass(frozen=True)
class Coverage:
    compared: int
    reference_rows: int            # with a value in the source
    not_run: int                   # reference rows whose cell squall did not run (or could not measure)


def compare_row(ref: RefRow, ours: float) -> Comparison:
    assert ref.value is not None
    if ref.unit == "%":
        return Comparison(ref.key, ref.table, ref.unit, ref.value, ours, None, ours - ref.value)
    ratio = None if ref.value == 0 else ours / ref.value
    return Comparison(ref.key, ref.table, ref.unit, ref.value, ours, ratio, None)


def join(reference: list[RefRow], ours: Measurements) -> tuple[list[Comparison], Coverage]:
    rows = []
    with_value = [r for r in reference if r.value is not None]
    for ref in with_value:
        value = ours.values.get(ref.key)
        if value is not None:
            rows.append(compare_row(ref, value))
    rows.sort(key=lambda c: (c.key.study, _table_order(c.table), c.key))
    return rows, Coverage(len(rows), len(with_value), len(with_value) - len(rows))


def _table_order(table: str) -> tuple[int, str]:
    return (int(table), "") if table.isdigit() else (10**6, table)
