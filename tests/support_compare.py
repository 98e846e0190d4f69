"""Run directories for `squall compare` tests: the files compare reads (scenario.toml,
expanded.json, meta.json and summary/ as `squall analyze` writes them), with per-replication
values given by the test, and the summary made newer than every status.json so that it is
not analysed again."""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

from analysis.aggregate.summary import RUN_FIELDS, TABLES

Cells = dict[str, tuple[dict[str, str], dict[str, list[float | None]]]]


def write_run(root: Path, name: str, cells: Cells, description: str = "",
              meta: dict | None = None) -> Path:
    """cells: cell -> (axis labels, metric -> one value per replication, None = failed)."""
    summary = root / "summary"
    summary.mkdir(parents=True)
    (root / "scenario.toml").write_text(f'name = "{name}"\n')
    (root / "meta.json").write_text(json.dumps(meta or {}))
    (root / "expanded.json").write_text(json.dumps({"name": name, "description": description,
                                                    "cells": []}))
    axes = list(dict.fromkeys(a for labels, _ in cells.values() for a in labels))
    metrics = sorted({m for _, values in cells.values() for m in values})
    rows = []
    for cell, (labels, values) in cells.items():
        for rep in range(max(len(v) for v in values.values())):
            failed = any(v[rep] is None for v in values.values())
            rows.append({"cell": cell, **labels, "replication": rep + 1,
                         "status": "failed" if failed else "ok", "reason": "",
                         "analysed": not failed, "error": "", "counted": not failed,
                         **{m: "" if v[rep] is None else repr(float(v[rep]))
                            for m, v in values.items()}})
    with open(summary / "runs.csv", "w", newline="") as f:
        w = csv.DictWriter(f, ["cell", *axes, *RUN_FIELDS[1:], *metrics])
        w.writeheader()
        w.writerows(rows)
    for table in TABLES:
        if table != "runs":
            (summary / f"{table}.csv").write_text("cell\n")
    (summary / "analysis.json").write_text(json.dumps(
        {"format": 1, "name": name, "axes": axes,
         "cells": [{"cell": c, "labels": labels} for c, (labels, _) in cells.items()]}))
    return root


def _without(labels: dict[str, str], axis: str | None) -> dict[str, str]:
    return {a: v for a, v in labels.items() if a != axis}


def run_from_study(root: Path, study: Path, fixed: tuple[str, str] | None = None) -> Path:
    """A run directory holding a study's exported replications (validation/data/<study>:
    real runs' per-replication values, the runs table's columns). `fixed` = (axis, label):
    only the cells with that label, the axis left out of the matrix and the cells' names (as
    a run of a scenario that sets it once: two such runs have cells of the same names)."""
    summary = root / "summary"
    summary.mkdir(parents=True)
    expanded = json.loads(gzip.open(study / "expanded.json.gz").read())
    axis, label = fixed or (None, None)
    described = [c for c in json.loads((study / "cells.json").read_text())
                 if axis is None or c["labels"].get(axis) == label]
    names = {c["cell"]: "_".join(f"{a}-{v}" for a, v in _without(c["labels"], axis).items())
             if axis else c["cell"] for c in described}
    described = [{**c, "cell": names[c["cell"]], "labels": _without(c["labels"], axis)}
                 for c in described]
    labels = {c["cell"]: c["labels"] for c in described}
    axes = list(dict.fromkeys(a for c in described for a in c["labels"]))
    (root / "scenario.toml").write_text(f'name = "{expanded["name"]}"\n')
    (root / "meta.json").write_text("{}\n")
    (root / "expanded.json").write_text(json.dumps(expanded))
    with open(study / "replications.csv", newline="") as f:
        rows = [{**r, "cell": names[r["cell"]]} for r in csv.DictReader(f) if r["cell"] in names]
    with open(summary / "runs.csv", "w", newline="") as f:
        w = csv.DictWriter(f, ["cell", *axes, *rows[0].keys() - {"cell"}, "counted"])
        w.writeheader()
        w.writerows({**r, **labels[r["cell"]],
                     "counted": r["status"] == "ok" and r["analysed"] == "1"} for r in rows)
    for table in TABLES:
        if table != "runs":
            (summary / f"{table}.csv").write_text("cell\n")
    (summary / "analysis.json").write_text(json.dumps(
        {"format": 1, "name": expanded["name"], "axes": axes, "cells": described}))
    return root
