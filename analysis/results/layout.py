"""A run directory's cells and replications as the analysis sees them (DESIGN.md §3.4).

Cells come from `expanded.json` (in its order; each entry has its id under `cell` or
`cell_id` and its axis labels under `axes` or `labels`), then any other `cells/*`
directory. Replications are the `rep-NN` directories; replications the scenario asks for
(`replications` in scenario.toml) but that have no directory are listed as `missing`.
A status.json that cannot be read makes its replication `failed` with the reason.
`degraded` (the replication ran to its end, but its end-to-end timing error was beyond the
scenario's tolerance: docs/runner.md) is kept as it is: it is analysed, but like failed ones
it enters the statistics only as failed; the report counts and lists it with its reason."""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analysis.results import cell_selection
from analysis.results.directory import (CELLS_DIR, EXPANDED_FILE, META_FILE, SCENARIO_FILE, STATUS_FILE,
                                        STATUSES, partial_dir, rep_number, replication_dir)


@dataclass(frozen=True)
class ReplicationRef:
    cell: str
    rep: int
    directory: Path
    status: str      # ok | degraded | failed | timeout | missing
    reason: str


@dataclass
class CellInfo:
    cell: str
    labels: dict[str, str] = field(default_factory=dict)   # axis -> label, in axis order
    spec: dict[str, Any] = field(default_factory=dict)     # the expanded.json entry


@dataclass
class RunLayout:
    root: Path
    name: str
    cells: list[CellInfo]
    replications: list[ReplicationRef]

    def cell(self, cell_id: str) -> CellInfo:
        return next(c for c in self.cells if c.cell == cell_id)


def _expanded_cells(root: Path) -> list[CellInfo]:
    path = root / EXPANDED_FILE
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: cannot read as JSON: {e}") from e
    entries = data.get("cells", []) if isinstance(data, dict) else data
    cells = []
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        cell_id = entry.get("cell", entry.get("cell_id", entry.get("id")))
        labels = entry.get("axes", entry.get("labels", {}))
        if isinstance(cell_id, str):
            cells.append(CellInfo(cell_id, {str(k): str(v) for k, v in dict(labels).items()},
                                  entry))
    return cells


def _scenario(root: Path) -> tuple[str, int]:
    path = root / SCENARIO_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{root} is not a squall run directory (no {SCENARIO_FILE})")
    try:
        table = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise ValueError(f"{path}: cannot read as TOML: {e}") from e
    name = str(table.get("name", root.name))
    reps = table.get("replications", 1)
    return name, reps if isinstance(reps, int) and reps > 0 else 1


def _status(rep_dir: Path) -> tuple[str, str]:
    path = rep_dir / STATUS_FILE
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return "failed", f"{path}: missing"
    except (OSError, json.JSONDecodeError) as e:
        return "failed", f"{path}: cannot read as JSON: {e}"
    status = data.get("status") if isinstance(data, dict) else None
    if status not in STATUSES:
        return "failed", f"{path}: status {status!r}, expected one of {', '.join(STATUSES)}"
    return status, str(data.get("reason", ""))


def _run_selection(root: Path) -> tuple[str | None, int | None, int | None]:
    """The cells glob, last and first replication `squall run` was given (meta.json testbed.run):
    cells and replications a run did not select are not its missing replications."""
    try:
        run = json.loads((root / META_FILE).read_text()).get("testbed", {}).get("run", {})
    except (OSError, json.JSONDecodeError, AttributeError):
        return None, None, None
    if not isinstance(run, dict):
        return None, None, None
    reps, first, cells = run.get("replications"), run.get("first_replication"), run.get("cells")
    return (cells if isinstance(cells, str) else None,
            reps if isinstance(reps, int) and reps > 0 else None,
            first if isinstance(first, int) and first > 0 else None)


def _missing_reason(rep_dir: Path) -> str:
    """A replication with no directory was never run, or is being run or was cut short (the
    runner works in rep-NN.partial and renames it when the replication is recorded)."""
    partial = partial_dir(rep_dir)
    if partial.is_dir():
        return f"not finished: {partial.name} exists (running now, or cut short; --resume redoes it)"
    return "never run"


def read_layout(root: Path) -> RunLayout:
    root = Path(root)
    name, expected_reps = _scenario(root)
    pattern, selected_reps, selected_first = _run_selection(root)
    expected_reps = selected_reps or expected_reps
    cells = [c for c in _expanded_cells(root) if cell_selection.selected(c.cell, pattern)]
    known = {c.cell for c in cells}
    cells_dir = root / CELLS_DIR
    for d in sorted(cells_dir.iterdir()) if cells_dir.is_dir() else []:
        if d.is_dir() and d.name not in known:
            cells.append(CellInfo(d.name))
    refs = []
    for cell in cells:
        found = {}
        for d in sorted((cells_dir / cell.cell).glob("rep-*")):
            rep = rep_number(d.name)
            if rep is not None and d.is_dir():
                found[rep] = d
        if selected_first is not None:       # squall run --first-replication: first..last
            wanted = set(range(selected_first, expected_reps + 1)) | set(found)
        else:
            first = min(found, default=1)
            wanted = set(range(first, first + expected_reps)) | set(found)
        for rep in sorted(wanted):
            d = found.get(rep, replication_dir(root, cell.cell, rep))
            status, reason = _status(d) if rep in found else ("missing", _missing_reason(d))
            refs.append(ReplicationRef(cell.cell, rep, d, status, reason))
    return RunLayout(root, name, cells, refs)
