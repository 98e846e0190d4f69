"""report.html's wide tables in parts (analysis/report/table_parts.py): every part has the
rows' names, together they have every column once, in order; a narrow table stays whole."""

from __future__ import annotations

from analysis.report.table import Table
from analysis.report.table_parts import PAGE_CHARS, column_chars, key_columns, parts


def _wide() -> Table:
    header = ["cell", "link", *(f"metric number {i} median (packets)" for i in range(20))]
    rows = [[f"cell-{k}", "e0", *(float(k * i) for i in range(20))] for k in range(3)]
    return Table("t", header, rows, "a note")


def test_a_wide_table_in_parts_that_each_fit() -> None:
    t = _wide()
    assert key_columns(t) == 2
    pieces = parts(t)
    assert len(pieces) > 1
    assert all(p.header[:2] == ["cell", "link"] for p in pieces)
    assert [h for p in pieces for h in p.header[2:]] == t.header[2:]
    assert all([row[:2] for row in p.rows] == [row[:2] for row in t.rows] for p in pieces)
    assert all(sum(column_chars(p, i) for i in range(len(p.header))) <= PAGE_CHARS
               for p in pieces)


def test_a_narrow_table_stays_whole() -> None:
    t = Table("t", ["cell", "n"], [["a", 3]])
    assert parts(t) == [t]
