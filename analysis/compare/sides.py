"""What `squall compare` compares: runs read from their summary tables (the `runs` table
through analysis.aggregate.loader; a run analysed first when it was never analysed or is
stale), the cells chosen by glob, and the pairs (cell of A, cell of B).

Two or more runs: the first is A, each other one B; a cell of A is paired with the cell of B
of the same name; when neither has a cell of the other's name and each has exactly one
selected cell, those two. One run with `--vs`: A is the cells matching `--cells`, B those
matching `--vs`, and each A cell is paired with the B cell that has the same label on the
most axes (a tie is an error naming the cells; so is a B cell claimed twice).

A replication's values enter when the runs table's `counted` is true (ok and analysed:
the cell statistics' own rule, analysis/censoring.py)."""

from __future__ import annotations

import fnmatch
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analysis.aggregate.loader import read_table, stale
from analysis.results.directory import read_run_json as read_json
from analysis.aggregate.summary import ANALYSIS_JSON, RUN_FIELDS, SUMMARY_DIR

# the flows' main values, compared when no --metric is given
DEFAULT_METRIC = re.compile(
    r"^[^.]+\.(response_time_s|elapsed_s|throughput_Bps|loss_pct|jitter_mean_ms)$")


@dataclass
class Run:
    root: Path
    name: str
    description: str
    labels: dict[str, dict[str, str]]     # cell -> axis -> label
    values: Any = field(repr=False)       # the runs table's counted rows (pandas.DataFrame)
    meta: dict[str, Any] = field(default_factory=dict, repr=False)   # meta.json

    def cells(self, pattern: str) -> list[str]:
        return [c for c in self.labels if fnmatch.fnmatchcase(c, pattern)]

    def metric_values(self, cell: str, metric: str) -> list[float]:
        if metric not in self.values.columns:
            return []
        column = self.values.loc[self.values["cell"] == cell, metric]
        return [float(v) for v in column.dropna()]


@dataclass(frozen=True)
class Pair:
    a_run: Run
    a_cell: str
    b_run: Run
    b_cell: str
    several_b: bool = False     # more than one B run: each pair names its B run

    @property
    def what(self) -> str:
        if self.a_run is self.b_run:
            return f"{self.b_cell} vs {self.a_cell}"
        cells = self.a_cell if self.a_cell == self.b_cell else f"{self.b_cell} vs {self.a_cell}"
        return f"{self.b_run.root.name}: {cells}" if self.several_b else cells

    @property
    def sides(self) -> tuple[str, str]:
        """How A and B are named in plots: the runs' directories, or in one run the labels
        on which the two cells differ."""
        if self.a_run is not self.b_run:
            return self.a_run.root.name, self.b_run.root.name
        a, b = self.a_run.labels[self.a_cell], self.b_run.labels[self.b_cell]
        differ = [k for k in a if a[k] != b.get(k)]
        if not differ:
            return self.a_cell, self.b_cell
        return (" ".join(f"{k}={a[k]}" for k in differ),
                " ".join(f"{k}={b.get(k)}" for k in differ))

    @property
    def short(self) -> str:
        """The pair on a plot's axis: the cell, or in one run the labels both cells share."""
        if self.a_run is not self.b_run:
            return f"{self.b_run.root.name}: {self.a_cell}" if self.several_b else self.a_cell
        a, b = self.a_run.labels[self.a_cell], self.b_run.labels[self.b_cell]
        return " ".join(f"{k}={v}" for k, v in a.items() if b.get(k) == v) or self.what


def load(root: Path) -> Run:
    if not (root / "scenario.toml").exists():
        raise FileNotFoundError(f"{root} is not a squall run directory (no scenario.toml)")
    if stale(root):
        from analysis.aggregate.loader import load_run
        load_run(root, analyse=True)
    saved = json.loads((root / SUMMARY_DIR / ANALYSIS_JSON).read_text())
    scenario = json.loads((root / "expanded.json").read_text())
    axes = [str(a) for a in saved.get("axes", [])]
    runs = read_table(root, "runs", text_columns=tuple(c for a in axes for c in (a, f"axis.{a}")))
    counted = runs["counted"].fillna(False).astype(bool) if "counted" in runs.columns else (
        (runs["status"] == "ok") & runs["analysed"].fillna(False).astype(bool))
    labels = {str(c["cell"]): {str(k): str(v) for k, v in c.get("labels", {}).items()}
              for c in saved.get("cells", [])}
    return Run(root, str(saved.get("name") or scenario.get("name") or root.name),
               str(scenario.get("description", "")), labels, runs[counted],
               read_json(root / "meta.json"))


def metrics(pairs: list[Pair], patterns: list[str]) -> list[str]:
    """The runs-table columns to compare: matching a --metric glob (or the flows' main values)
    and with a value on both sides of some pair."""
    found: list[str] = []
    for p in pairs:
        for m in p.a_run.values.columns:
            if m in RUN_FIELDS or m in found or m in p.a_run.labels.get(p.a_cell, {}):
                continue
            chosen = (any(fnmatch.fnmatchcase(m, g) for g in patterns) if patterns
                      else DEFAULT_METRIC.match(m))
            if chosen and p.a_run.metric_values(p.a_cell, m) and p.b_run.metric_values(p.b_cell, m):
                found.append(m)
    return sorted(found)


def _selected(run: Run, pattern: str) -> list[str]:
    cells = run.cells(pattern)
    if not cells:
        raise ValueError(f"{run.root}: no cell matches {pattern!r} (cells: "
                         f"{', '.join(run.labels) or 'none'})")
    return cells


def pairs_of_runs(runs: list[Run], pattern: str) -> list[Pair]:
    a, pairs = runs[0], []
    a_cells = _selected(a, pattern)
    for b in runs[1:]:
        b_cells = _selected(b, pattern)
        common = [c for c in a_cells if c in b_cells]
        if common:
            pairs += [Pair(a, c, b, c, len(runs) > 2) for c in common]
        elif len(a_cells) == len(b_cells) == 1:
            pairs.append(Pair(a, a_cells[0], b, b_cells[0], len(runs) > 2))
        else:
            raise ValueError(f"{b.root}: none of its cells {b_cells} has the name of a cell of "
                             f"{a.root} {a_cells}; choose one cell of each with --cells")
    return pairs


def _shared(x: dict[str, str], y: dict[str, str]) -> int:
    return sum(x.get(k) == v for k, v in y.items())


def pairs_in_run(run: Run, a_pattern: str, b_pattern: str) -> list[Pair]:
    a_cells, b_cells = _selected(run, a_pattern), _selected(run, b_pattern)
    both = set(a_cells) & set(b_cells)
    if both:
        raise ValueError(f"cells {sorted(both)} match both --cells {a_pattern!r} and "
                         f"--vs {b_pattern!r}: the two sides must not overlap")
    pairs, taken = [], {}
    for a in a_cells:
        scores = {b: _shared(run.labels[a], run.labels[b]) for b in b_cells}
        best = max(scores.values())
        match = [b for b, s in scores.items() if s == best]
        if len(match) > 1:
            raise ValueError(f"{a} is as like {match[0]} as {match[1]} (same labels on "
                             f"{best} axes): narrow --cells or --vs")
        if match[0] in taken:
            raise ValueError(f"{match[0]} would be compared with both {taken[match[0]]} and "
                             f"{a}: narrow --cells")
        taken[match[0]] = a
        pairs.append(Pair(run, a, run, match[0]))
    return pairs
