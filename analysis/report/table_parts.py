"""A wide table as several narrower ones, so that report.html reads without scrolling
sideways at 1280 px: its leading name columns (cell, axes, flow: the columns of words) are
repeated in each part, and its other columns are packed into parts whose estimated width fits
PAGE_CHARS. report.md keeps the table whole."""

from __future__ import annotations

from analysis.report.table import Table, fmt

# The report's text width at 1280 px (1216 px between the margins) in characters of its table
# font (0.85em sans-serif, ~7.5 px, header words bold), with room to spare.
PAGE_CHARS = 120
PADDING_CHARS = 2            # a cell's padding and border
WRAPPED_CHARS = 30           # a text longer than this wraps (a reason, a description)


def key_columns(t: Table) -> int:
    """How many leading columns hold only words (the row's names); at least the first, and
    never all but one is left to the values."""
    n = 0
    for i in range(len(t.header) - 1):
        if not all(isinstance(row[i], str) or row[i] is None for row in t.rows):
            break
        n = i + 1
    return max(n, 1)


def column_chars(t: Table, i: int) -> int:
    """A column's estimated width: its longest header word (headers wrap between words) or
    value, and the cell's padding."""
    words = max((len(w) for w in t.header[i].split()), default=0)
    values = max((_value_chars(fmt(row[i])) for row in t.rows), default=0)
    return max(words, values) + PADDING_CHARS


def _value_chars(text: str) -> int:
    """A long text wraps between its words: its longest word, or WRAPPED_CHARS."""
    if len(text) <= WRAPPED_CHARS:
        return len(text)
    return max(WRAPPED_CHARS, *(len(w) for w in text.split()))


def parts(t: Table) -> list[Table]:
    """The table itself when it fits, else parts of it, each with the name columns."""
    keys = list(range(key_columns(t)))
    width = sum(column_chars(t, i) for i in keys)
    groups: list[list[int]] = [[]]
    used = width
    for i in range(len(keys), len(t.header)):
        chars = column_chars(t, i)
        if groups[-1] and used + chars > PAGE_CHARS:
            groups.append([])
            used = width
        groups[-1].append(i)
        used += chars
    if len(groups) == 1:
        return [t]
    return [Table(t.title, [t.header[i] for i in keys + g], [[row[i] for i in keys + g]
                                                             for row in t.rows])
            for g in groups]
