"""A run's tidy tables as pandas DataFrames: `analysis.load_run(RUN_DIR)`.

```python
import analysis
run = analysis.load_run("results/umts-mix-20261123T201244Z")
run.connections      # one row per TCP connection / UDP flow and replication
run.runs             # one row per replication: every run-level value
run.cells            # one row per cell and metric: min … max, mean, n, failed, median CI
run.throughput       # one row per flow, replication and time bin
run.delays           # one row per packet the link took in: its link delay and fate
run.tcpinfo          # one row per TCP connection and 50 ms sample: cwnd, ssthresh, RTT, RTO ...
run.kernel           # one row per replication, host and quantity: the analysis' count, the kernel's
run.axes             # the matrix axes: a column of each table above
run.scenario, run.meta   # expanded.json and meta.json as dicts
```

The tables are those `squall analyze` writes into summary/ (analysis/aggregate/summary.py): read from
the Parquet files or, with `source="csv"` or when there is no Parquet file, the CSVs; either
way with pandas' nullable types (Int64, Float64, boolean, string; <NA> where a value is
undefined), so a count stays an integer when some replications lack it. A run that was never analysed, or analysed before a replication finished, is
analysed first (`analyse="auto"`; `True` always, `False` never: then a missing table is an
error)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from analysis.aggregate.current import AnalysisOptions, analyse_and_summarise, stale
from analysis.aggregate.summary import ANALYSIS_JSON, TABLES
from analysis.results.directory import EXPANDED_FILE, META_FILE, SCENARIO_FILE, SUMMARY_DIR, read_run_json


@dataclass
class RunData:
    root: Path
    name: str
    axes: list[str]
    scenario: dict[str, Any] = field(repr=False)
    meta: dict[str, Any] = field(repr=False)
    connections: Any = field(repr=False)   # pandas.DataFrame
    runs: Any = field(repr=False)
    cells: Any = field(repr=False)
    throughput: Any = field(repr=False)
    delays: Any = field(repr=False)
    tcpinfo: Any = field(repr=False)
    kernel: Any = field(repr=False)

    @property
    def description(self) -> str:
        return str(self.scenario.get("description", ""))


# columns of numbers with a fraction that a CSV may write without one ("100" ms)
FLOAT_COLUMNS = {"delays": ("t_s", "delay_ms", "e2e_delay_ms"), "tcpinfo": ("t_s", "srtt_ms", "rttvar_ms", "rto_ms")}
TEXT_COLUMNS = ("cell", "status", "reason", "error", "flow", "flow_kind", "class", "metric",
                "fate", "dir", "host", "src", "dst", "quantity", "relation", "counters", "na_reason")


def read_table(root: Path, name: str, source: Literal["parquet", "csv"] = "parquet",
               text_columns: tuple[str, ...] = ()):
    """One summary table as a DataFrame (the Parquet file unless source="csv" or it is
    missing). `text_columns`: columns read as text from a CSV besides TEXT_COLUMNS (the
    axes: a label such as "1.0" must not become 1)."""
    import pandas as pd

    summary = Path(root) / SUMMARY_DIR
    parquet, csv = summary / f"{name}.parquet", summary / f"{name}.csv"
    text = (*TEXT_COLUMNS, *text_columns)
    if source == "parquet" and parquet.exists():
        frame = pd.read_parquet(parquet, dtype_backend="numpy_nullable")
    elif csv.exists():
        types = {c: "string" for c in text} | {c: "Float64" for c in FLOAT_COLUMNS.get(name, ())}
        frame = pd.read_csv(csv, dtype=types, keep_default_na=False, na_values=[""],
                            dtype_backend="numpy_nullable")
    else:
        raise FileNotFoundError(f"{csv}: missing; run `squall analyze {root}` first")
    # a value undefined in every row (e.g. no median CI with 2 replications) is a number
    for column in frame.columns:
        if column not in text and frame[column].isna().all():
            frame[column] = frame[column].astype("Float64")
    return frame


def load_run(run_dir: str | os.PathLike[str], analyse: bool | Literal["auto"] = "auto",
             source: Literal["parquet", "csv"] = "parquet", jobs: int | None = None) -> RunData:
    root = Path(run_dir)
    if not (root / SCENARIO_FILE).exists():
        raise FileNotFoundError(f"{root} is not a squall run directory (no {SCENARIO_FILE})")
    if analyse is True or (analyse == "auto" and stale(root)):
        analyse_and_summarise(root, AnalysisOptions(jobs=jobs, progress=None))
    saved = read_run_json(root / SUMMARY_DIR / ANALYSIS_JSON)
    scenario = read_run_json(root / EXPANDED_FILE)
    axes = [str(a) for a in saved.get("axes", [])]
    text = tuple(c for a in axes for c in (a, f"axis.{a}"))
    tables = {name: read_table(root, name, source, text) for name in TABLES}
    return RunData(root, str(saved.get("name") or scenario.get("name") or root.name), axes,
                   scenario, read_run_json(root / META_FILE), **tables)
