"""A study's compact results: what the validation needs of a run, small enough to commit.

    validation/data/<study>/cells.json        every cell: its labels and flows
    validation/data/<study>/replications.csv  every replication: status, duration, metrics
    validation/data/<study>/study.json        scenario, run, revision, rounds and their times

`export_study` writes them from an analysed run (`validation.run.load_cells`), `merge_round`
puts one round's replications (a run of replication k alone, `squall run --first-replication k`)
in place of that round's rows, beside the other rounds' (so a study grows over sittings on
machines that keep nothing but the committed files), `load_study`
turns them back into the cells `validation.measures.measure` takes, so the report rendered
from the committed files is the one rendered from the run directories (floats are written
with `repr`, which reads back to the same number). replications.csv has the columns `cell`,
`replication`, `status`, `reason`, `analysed`, `duration_s` and then one per metric, in the
names of the run's summary/runs.csv (docs: analysis/README.md) plus `conn.spurious_rtos` and
`conn.rto_events` (validation.measures.connection_totals) and `conn.rto_too_early`,
`conn.rto_after_ack_loss` (validation.rto_causes); an empty field is a metric the
replication has no value of. Read back, `duration_s` (the replication's wall time from its
status.json) is one of the replication's values.
"""
from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict, replace
from pathlib import Path

from analysis.results.atomic_file import write_text_atomically
from analysis.aggregate.run_analysis import CellResult, cell_summaries
from analysis.results.layout import ReplicationRef
from analysis.aggregate.replication_values import FlowInfo, ReplicationResult

CELLS = "cells.json"
REPLICATIONS = "replications.csv"
STUDY = "study.json"
FIXED_COLUMNS = ("cell", "replication", "status", "reason", "analysed", "duration_s")


class DataError(ValueError):
    pass


def _duration(ref: ReplicationRef) -> float | None:
    try:
        return float(json.loads((ref.directory / "status.json").read_text())["duration_s"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _field(value: float | None) -> str:
    return "" if value is None else repr(float(value))


def _with_duration(r: ReplicationResult) -> ReplicationResult:
    """The replication with its wall time among its values, as load_study reads it back."""
    if "duration_s" in r.values:
        return r
    duration = _duration(r.ref)
    return replace(r, values=r.values | ({} if duration is None else {"duration_s": duration}))


def _csv_text(cells: list[CellResult]) -> str:
    metrics = sorted({name for c in cells for r in c.replications for name in r.values} - {"duration_s"})
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*FIXED_COLUMNS, *metrics])
    for cell in cells:
        for r in sorted(cell.replications, key=lambda r: r.ref.rep):
            writer.writerow([cell.cell, r.ref.rep, r.ref.status, r.ref.reason, int(r.analysed),
                             _field(r.values.get("duration_s")), *(_field(r.values.get(m)) for m in metrics)])
    return out.getvalue()


def _described(cells: list[CellResult]) -> list[dict]:
    return [{"cell": c.cell, "labels": c.labels, "flows": [asdict(f) for f in c.flows]} for c in cells]


def export_study(cells: list[CellResult], target: Path, study: dict) -> list[Path]:
    """Write the three files of one study into `target` (each replaced whole, never half)."""
    target.mkdir(parents=True, exist_ok=True)
    cells = [replace(c, replications=[_with_duration(r) for r in c.replications]) for c in cells]
    described = _described(cells)
    written = [target / CELLS, target / REPLICATIONS, target / STUDY]
    write_text_atomically(written[0], json.dumps(described, indent=1) + "\n")
    write_text_atomically(written[1], _csv_text(cells))
    write_text_atomically(written[2], json.dumps(study, indent=1, sort_keys=True) + "\n")
    return written


def merge_round(cells: list[CellResult], k: int, target: Path, study: dict, only_selected: bool = False
                ) -> list[Path]:
    """Replication k of every cell (from a run of that round) in place of round k's committed
    rows, the other rounds' rows kept. The cells must be the committed ones: a study whose
    scenario changed between rounds is refused, not mixed. `only_selected`: the run had some
    of the cells only (`squall run --cells`); each must be a committed one, the others keep
    their rows."""
    fresh = [replace(c, replications=[r for r in c.replications if r.ref.rep == k]) for c in cells]
    if not (target / CELLS).exists():
        if only_selected:
            raise DataError(f"{target}: no committed rounds for a run of some cells to join; run every cell first")
        return export_study(fresh, target, study)
    committed = load_study(target)
    by_cell = {c.cell: c for c in fresh}
    expected = [c for c in committed if c.cell in by_cell] if only_selected else committed
    if _described(expected) != _described(fresh):
        ours = {c.cell for c in fresh}
        theirs = {c.cell for c in expected}
        differ = sorted(ours ^ theirs) or [a["cell"] for a, b in zip(_described(expected), _described(fresh))
                                           if a != b]
        extra = _extra_connections(expected, fresh)
        if extra and set(differ) == set(extra):
            raise DataError(f"{target / CELLS}: round {k}'s captures hold connections no flow declares ("
                            + "; ".join(f"{cell}: {', '.join(names)}" for cell, names in extra.items())
                            + "): traffic squall did not start crossed the link; find its source in the run "
                            "(e.g. an earlier replication's connection on the same lane) and run those "
                            "replications again; nothing was written")
        raise DataError(f"{target / CELLS}: round {k}'s cells differ from the committed rounds' (first: "
                        f"{differ[0] if differ else '?'}): the scenario changed since; start the study again "
                        "in a new data directory rather than mix them")
    merged = [replace(c, replications=sorted([r for r in c.replications if r.ref.rep != k]
                                             + by_cell[c.cell].replications, key=lambda r: r.ref.rep))
              if c.cell in by_cell else c for c in committed]
    return export_study(merged, target, study)


def _extra_connections(expected: list[CellResult], fresh: list[CellResult]) -> dict[str, list[str]]:
    """Per cell, the flows of `fresh` that `expected` does not have, where the two differ in
    nothing else."""
    extra = {}
    for a, b in zip(expected, fresh):
        known = {f.name for f in a.flows}
        names = [f.name for f in b.flows if f.name not in known]
        if names and _described([a]) == _described([replace(b, flows=[f for f in b.flows if f.name in known])]):
            extra[b.cell] = names
    return extra


def _number(text: str, where: str) -> float | None:
    if text == "":
        return None
    try:
        return float(text)
    except ValueError:
        raise DataError(f"{where}: {text!r} is not a number") from None


def _replication(row: dict[str, str], path: Path, line: int) -> ReplicationResult:
    where = f"{path}:{line}"
    try:
        rep = int(row["replication"])
    except (TypeError, ValueError):
        raise DataError(f"{where}: replication {row.get('replication')!r} is not a number") from None
    ref = ReplicationRef(row["cell"], rep, Path(row["cell"]) / f"rep-{rep:02d}",
                         row["status"], row["reason"])
    values = {name: _number(text, f"{where}: {name}") for name, text in row.items()
              if name not in FIXED_COLUMNS or name == "duration_s"}
    return ReplicationResult(ref, analysed=row["analysed"] == "1",
                             values={k: v for k, v in values.items() if v is not None})


def load_study(directory: Path) -> list[CellResult]:
    """The cells of one study's committed data, with their replications and summaries."""
    try:
        described = json.loads((directory / CELLS).read_text())
        with open(directory / REPLICATIONS, newline="") as f:
            reader = csv.DictReader(f)
            missing = [c for c in FIXED_COLUMNS if c not in (reader.fieldnames or ())]
            if missing:
                raise DataError(f"{directory / REPLICATIONS}: columns {', '.join(missing)} missing")
            replications = [_replication(row, directory / REPLICATIONS, i)
                            for i, row in enumerate(reader, start=2)]
    except OSError as e:
        raise DataError(f"{directory}: {e.strerror or e} ({e.filename})") from None
    except json.JSONDecodeError as e:
        raise DataError(f"{directory / CELLS}: not JSON ({e})") from None
    cells = []
    for entry in described:
        mine = [r for r in replications if r.ref.cell == entry["cell"]]
        flows = [FlowInfo(**f) for f in entry["flows"]]
        cells.append(CellResult(entry["cell"], dict(entry["labels"]), flows, mine, cell_summaries(mine)))
    return cells


def load_study_record(directory: Path) -> dict:
    return json.loads((directory / STUDY).read_text())
