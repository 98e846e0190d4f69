"""summary/ files of a run: connections.csv, runs.csv, cells.csv and analysis.json.

- connections.csv: one row per TCP connection / UDP flow (cell, replication, status, flow,
  flow_kind, class, then the metrics of `analysis.rows`).
- runs.csv: one row per replication (cell, replication, status, reason, analysed, error,
  then every run-level value, e.g. `<flow>.response_time_s`, `run.congestion_drops`).
- cells.csv: one row per cell and metric: min, p25, median, p75, max, mean, n, failed.
- analysis.json: the same run-level data for `squall report` and `squall plot`."""

from __future__ import annotations

import csv
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any, Iterable

from analysis.aggregate import Summary
from analysis.run import CellResult, RunAnalysis
from analysis.run_layout import CellInfo, ReplicationRef, RunLayout
from analysis.run_metrics import FlowInfo, ReplicationResult

SUMMARY_DIR = "summary"
ANALYSIS_JSON = "analysis.json"
STAT_FIELDS = ("min", "p25", "median", "p75", "max", "mean", "n", "failed")
RUN_FIELDS = ("cell", "replication", "status", "reason", "analysed", "error")


def _cell_text(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}" if abs(value) < 1e6 else f"{value:.1f}"
    return value


def _write_csv(path: Path, fields: list[str], rows: Iterable[dict[str, Any]]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, restval="", extrasaction="raise")
        w.writeheader()
        for row in rows:
            w.writerow({k: _cell_text(v) for k, v in row.items()})
    tmp.replace(path)


def _union_keys(rows: Iterable[dict[str, Any]], first: tuple[str, ...]) -> list[str]:
    keys = list(first)
    seen = set(keys)
    for row in rows:
        for k in row:
            if k not in seen:
                seen.add(k)
                keys.append(k)
    return keys


def run_row(r: ReplicationResult) -> dict[str, Any]:
    return {"cell": r.ref.cell, "replication": r.ref.rep, "status": r.ref.status,
            "reason": r.ref.reason, "analysed": r.analysed, "error": r.error or "",
            **r.values}


def write_summary(analysis: RunAnalysis, out: Path | None = None) -> Path:
    out = out or analysis.layout.root / SUMMARY_DIR
    out.mkdir(parents=True, exist_ok=True)
    reps = analysis.replications
    conn_rows = [row for r in reps for row in r.rows]
    _write_csv(out / "connections.csv",
               _union_keys(conn_rows, ("cell", "replication", "status", "flow", "flow_kind",
                                       "class")), conn_rows)
    run_rows = [run_row(r) for r in reps]
    value_keys = sorted({k for r in reps for k in r.values})
    _write_csv(out / "runs.csv", [*RUN_FIELDS, *value_keys], run_rows)
    cell_rows = [{"cell": c.cell, "metric": name, **asdict(s)}
                 for c in analysis.cells for name, s in c.summaries.items()]
    _write_csv(out / "cells.csv", ["cell", "metric", *STAT_FIELDS], cell_rows)
    (out / ANALYSIS_JSON).write_text(json.dumps(_to_json(analysis), indent=1) + "\n")
    return out


def _relative(path: Path, root: Path) -> str:
    """Relative to the run directory, so that a moved run still finds its files."""
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def _to_json(a: RunAnalysis) -> dict[str, Any]:
    return {
        "format": 1, "name": a.layout.name,
        "cells": [{"cell": c.cell, "labels": c.labels, "flows": [asdict(f) for f in c.flows],
                   "summaries": {k: asdict(s) for k, s in c.summaries.items()},
                   "replications": [{"rep": r.ref.rep,
                                     "directory": _relative(r.ref.directory, a.layout.root),
                                     "status": r.ref.status, "reason": r.ref.reason,
                                     "analysed": r.analysed, "error": r.error,
                                     "values": r.values, "warnings": r.warnings}
                                    for r in c.replications]}
                  for c in a.cells]}


def load_analysis(root: Path) -> RunAnalysis:
    """The analysis `write_summary` saved for the run at `root` (without connection rows)."""
    path = root / SUMMARY_DIR / ANALYSIS_JSON
    data = json.loads(path.read_text())
    if data.get("format") != 1:
        raise ValueError(f"{path}: format {data.get('format')!r}, expected 1")
    cells, infos, refs = [], [], []
    for c in data["cells"]:
        infos.append(CellInfo(c["cell"], c["labels"]))
        results = []
        for r in c["replications"]:
            ref = ReplicationRef(c["cell"], r["rep"], root / r["directory"], r["status"],
                                 r["reason"])
            refs.append(ref)
            results.append(ReplicationResult(ref, r["analysed"], r["error"], [], r["values"],
                                             [], r["warnings"]))
        cells.append(CellResult(c["cell"], c["labels"], [FlowInfo(**f) for f in c["flows"]],
                                results, {k: Summary(**s) for k, s in c["summaries"].items()}))
    return RunAnalysis(RunLayout(root, data["name"], infos, refs), cells)
