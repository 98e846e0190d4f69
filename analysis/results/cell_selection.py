"""Which cells a run selected (`squall run --cells`): one or more globs, comma-separated.

The selection is stored as given in the run's meta.json, so the runner, `squall status` and the
analysis read it through this one rule. Cell ids never contain a comma (they are built from
axis labels, docs/scenarios.md)."""
from __future__ import annotations

import fnmatch


def globs(selection: str) -> list[str]:
    return [g for g in (part.strip() for part in selection.split(",")) if g]


def selected(cell_id: str, selection: str | None) -> bool:
    """True when no selection was given or one of its globs matches the whole cell id."""
    return selection is None or any(fnmatch.fnmatchcase(cell_id, g) for g in globs(selection))
