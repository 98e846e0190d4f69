"""summary/ files of a run: connections, runs, cells, throughput, delays, tcpinfo and kernel (each
as .csv and .parquet), and analysis.json.

Tidy tables: one row per observation, and after `cell` one column per matrix axis with the
cell's label on that axis (the axis name; `axis.<name>` where it would clash with another
column), and beside a label that is a time, rate or size its value in SI units
(`<axis>_s`, `_bps`, `_bytes`: axis_values.py).
- connections: one row per TCP connection / UDP flow (cell, axes, replication, status,
  flow, flow_kind, class, then the metrics of `analysis.metrics.rows`).
- runs: one row per replication (cell, axes, replication, status, reason, analysed, error,
  counted (whether it enters the cell statistics: analysis/metrics/censoring.py), then every run-level
  value, e.g. `<flow>.response_time_s`, `run.congestion_drops`).
- cells: one row per cell and metric: min, p25, median, p75, max, mean, n, failed,
  median_ci_low, median_ci_high, censored (of the n, times beyond the timeout; statistics.py).
- throughput: one row per flow, replication and time bin (metrics/series.py).
- delays: one row per packet the link took in (metrics/series.py).
- tcpinfo: one row per TCP connection, host and 50 ms sample of the kernel's tcp_info (cwnd,
  ssthresh, RTT, RTO, retransmissions; read/tcp_samples.py).
- round_trips: one row per request of a flow's UDP requests and replies (irtt's probes): its
  round-trip time and the link's state then (metrics/round_trips.py); written only, not among the
  TABLES `analysis.load_run` reads (most runs have none).
- probes: one row per probe of a probe flow: irtt's own RTT and one-way delays beside the
  log's fate, link delay and end-to-end delay of its request and reply (probes.py); written
  only, like round_trips.
- kernel: per replication, host and quantity the analysis' count beside the kernel's
  counters (analysis.metrics.kernel_truth).
- analysis.json: the run-level data for `squall report` and `squall plot`.

The Parquet files hold the same rows with typed columns (integers, floats, booleans,
strings; empty cells are nulls) and say where they came from and each column's unit in
their metadata (analysis/results/provenance.py); `analysis.load_run` reads either."""

from __future__ import annotations

import csv
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from analysis.aggregate.statistics import Summary
from analysis.results.atomic_file import refuse_symlinks, write_atomically, write_text_atomically
from analysis.results.provenance import run_metadata, with_provenance
from analysis.aggregate.axis_values import AxisValues, axis_values
from analysis.metrics.kernel_truth import KERNEL_FIELDS, kernel_rows
from analysis.aggregate.run_analysis import CellResult, RunAnalysis
from analysis.results.directory import ANALYSIS_JSON, SUMMARY_DIR
from analysis.results.layout import CellInfo, ReplicationRef, RunLayout
from analysis.aggregate.replication_values import FlowInfo, ReplicationResult
from analysis.metrics.series import DELAY_COLUMNS, empty_delays
from analysis.read.tcp_samples import TCPINFO_FIELDS
from analysis.metrics.round_trips import ROUND_TRIP_COLUMNS
from analysis.metrics.probes import PROBE_COLUMNS

STAT_FIELDS = ("min", "p25", "median", "p75", "max", "mean", "n", "failed", "median_ci_low",
               "median_ci_high", "censored")
RUN_FIELDS = ("cell", "replication", "status", "reason", "analysed", "error", "counted")
CONNECTION_FIELDS = ("cell", "replication", "status", "flow", "flow_kind", "class")
TABLES = ("connections", "runs", "cells", "throughput", "delays", "tcpinfo", "kernel")


def _cell_text(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, float):
        # 12 significant digits: µs in times of days, without binary noise (1.1124999…);
        # a float stays one when read back ("3.0", not "3")
        text = f"{value:.12g}"
        return text if any(c in text for c in ".en") else text + ".0"
    return value


def _write_csv(path: Path, fields: list[str], rows: Iterable[dict[str, Any]]) -> None:
    def write(tmp: Path) -> None:
        with open(tmp, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields, restval="", extrasaction="raise")
            w.writeheader()
            for row in rows:
                w.writerow({k: _cell_text(v) for k, v in row.items()})
    write_atomically(path, write)


def _arrow_column(values: list[Any]):
    """A typed column: bool, int64, float64 or string; None and "" as null (as in the CSV,
    where they are one and the same empty cell)."""
    import pyarrow as pa

    present = [v for v in values if v is not None and v != ""]
    if present and all(isinstance(v, bool) for v in present):
        kind = pa.bool_()
    elif present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        kind = pa.int64()
    elif present and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                         for v in present):
        kind = pa.float64()
        values = [None if v is None or v == "" else float(v) for v in values]
        return pa.array(values, kind)
    else:
        kind = pa.string()
        return pa.array([None if v is None or v == "" else str(v) for v in values], kind)
    return pa.array([None if v == "" else v for v in values], kind)


def _write_parquet(path: Path, fields: list[str], rows: list[dict[str, Any]],
                   provenance: dict[str, str]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({f: _arrow_column([row.get(f) for row in rows]) for f in fields})
    table = with_provenance(table, provenance, path.stem)
    write_atomically(path, lambda tmp: pq.write_table(table, tmp))


def write_table(out: Path, name: str, fields: list[str], rows: list[dict[str, Any]],
                provenance: dict[str, str] | None = None) -> None:
    """summary/NAME.csv and NAME.parquet with the same rows; the Parquet file also says where
    it came from and each column's unit (analysis/results/provenance.py)."""
    _write_csv(out / f"{name}.csv", fields, rows)
    _write_parquet(out / f"{name}.parquet", fields, rows, provenance or {})


def axis_columns(layout: RunLayout, reserved: Iterable[str]) -> dict[str, str]:
    """Each matrix axis (in the order the cells give them) -> its column name."""
    taken = set(reserved)
    axes = dict.fromkeys(a for c in layout.cells for a in c.labels)
    return {a: f"axis.{a}" if a in taken else a for a in axes}


def _with_axes(row: dict[str, Any], axes: AxisValues) -> dict[str, Any]:
    """The row with the cell's axis labels (and their SI values) after `cell`."""
    return {"cell": row["cell"], **axes.of(row["cell"]), **row}


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
            "counted": r.counts, **r.values}


def write_delays(out: Path, analysis: RunAnalysis, axes: AxisValues,
                 provenance: dict[str, str]) -> None:
    """summary/delays.csv and .parquet: one row per packet (millions for a long transfer),
    written column-wise from the replications' arrays."""
    import pandas as pd

    frames = []
    for r in analysis.replications:
        d = r.delays or empty_delays()
        n = len(d["flow"])
        head = {"cell": r.ref.cell, **axes.of(r.ref.cell), "status": r.ref.status}
        frame = pd.DataFrame({k: pd.Series([v] * n, dtype="Float64" if k in axes.numbers
                                           else "string") for k, v in head.items()})
        frame.insert(1 + len(axes.names), "replication", pd.Series([r.ref.rep] * n, dtype="Int64"))
        for c in DELAY_COLUMNS:
            values = d[c]
            if values.dtype == object:
                frame[c] = pd.array(values.astype(str), dtype="string")
            elif c == "payload_len":      # -1: the log has none
                frame[c] = pd.arrays.IntegerArray(values.astype(np.int64), values < 0)
            elif values.dtype.kind == "f":
                frame[c] = pd.array(values, dtype="Float64")   # NaN: not delivered -> <NA>
            else:
                frame[c] = pd.array(values, dtype="Int64")
        frames.append(frame)
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=["cell", *axes.names, "replication", "status", *DELAY_COLUMNS])
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrow = with_provenance(pa.Table.from_pandas(table, preserve_index=False), provenance, "delays")
    for name, write in (("delays.parquet", lambda p: pq.write_table(arrow, p)),
                        ("delays.csv", lambda p: table.to_csv(p, index=False, na_rep="",
                                                              float_format="%.12g"))):
        write_atomically(out / name, write)


def write_summary(analysis: RunAnalysis, out: Path | None = None) -> Path:
    out = out or analysis.layout.root / SUMMARY_DIR
    refuse_symlinks(out / ANALYSIS_JSON)      # before anything is written: summary/ itself a link?
    out.mkdir(parents=True, exist_ok=True)
    reps = analysis.replications
    conn_rows = [row for r in reps for row in r.rows]
    conn_fields = _union_keys(conn_rows, CONNECTION_FIELDS)
    run_rows = [run_row(r) for r in reps]
    value_keys = sorted({k for r in reps for k in r.values})
    throughput = [{"cell": r.ref.cell, "replication": r.ref.rep, "status": r.ref.status, **row}
                  for r in reps for row in r.throughput]
    tables = {
        "connections": (conn_fields, conn_rows),
        "runs": ([*RUN_FIELDS, *value_keys], run_rows),
        "cells": (["cell", "metric", *STAT_FIELDS],
                  [{"cell": c.cell, "metric": name, **asdict(s)}
                   for c in analysis.cells for name, s in c.summaries.items()]),
        "throughput": (_union_keys(throughput, ("cell", "replication", "status", "flow",
                                                 "flow_kind", "t_s", "interval_s", "bytes",
                                                 "kbit_per_s")), throughput),
        "kernel": (KERNEL_FIELDS, kernel_rows(reps)),
        "tcpinfo": (["cell", "replication", "status", *TCPINFO_FIELDS],
                    [{"cell": r.ref.cell, "replication": r.ref.rep, "status": r.ref.status, **row}
                     for r in reps for row in r.tcpinfo]),
        "round_trips": (["cell", "replication", "status", *ROUND_TRIP_COLUMNS],
                        [{"cell": r.ref.cell, "replication": r.ref.rep, "status": r.ref.status, **row}
                         for r in reps for row in r.round_trips]),
        "probes": (["cell", "replication", "status", *PROBE_COLUMNS],
                   [{"cell": r.ref.cell, "replication": r.ref.rep, "status": r.ref.status, **row}
                    for r in reps for row in r.probes]),
    }
    columns = axis_columns(analysis.layout, [*(f for fields, _ in tables.values() for f in fields),
                                             "status", *DELAY_COLUMNS])
    provenance, axes = run_metadata(analysis.layout.root), axis_values(analysis.layout, columns)
    for name, (fields, rows) in tables.items():
        write_table(out, name, ["cell", *axes.names, *fields[1:]],
                    [_with_axes(row, axes) for row in rows], provenance)
    write_delays(out, analysis, axes, provenance)
    write_text_atomically(out / ANALYSIS_JSON, json.dumps(_to_json(analysis), indent=1) + "\n")
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
        "axes": list(dict.fromkeys(ax for c in a.cells for ax in c.labels)),
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
