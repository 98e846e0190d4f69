"""A flent flow's data file (testbed/scenario/flows/flent.py): Flent's own record of its test,
`<test>-<time>.<flow>.flent.gz` in the replication's directory (gzip JSON: `raw_values` maps each
data series, e.g. "Ping (ms) ICMP", to its tool's measurements `{"t": ..., "val": ...}`; `results`
holds them interpolated onto Flent's time grid, for its plots), reduced to per-series statistics
of the measurements, as Flent's own summary: the run values `<flow>.flent.<series>.n|mean|median|p95`
(the series' name in lower case, other characters `_`: `ping_ms_icmp`) and the report's Flent
table."""
from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

import numpy as np

from analysis.join.flows import FlowSpec

IRTT_PORT = 2112            # where Flent's irtt runner finds irtt's server (irtt's default port)
SUFFIX = ".flent.gz"
STATS = ("n", "mean", "median", "p95")


def data_file(directory: Path, flow: str) -> Path | None:
    """The flow's Flent data file (its title is the flow's name), None where Flent wrote none."""
    found = sorted(directory.glob(f"*.{flow}{SUFFIX}"))
    return found[-1] if found else None


def series_slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def read_series(path: Path) -> dict[str, list[float]]:
    """Each data series' measurements (`raw_values`: what its tool measured, not the samples
    Flent interpolated onto its time grid), by Flent's series name."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        data = json.load(f)
    raw = data.get("raw_values") if isinstance(data, dict) else None
    if not isinstance(raw, dict):
        raise ValueError("no `raw_values` object")
    return {name: [float(m["val"]) for m in values if isinstance(m, dict) and isinstance(m.get("val"), (int, float))]
            for name, values in raw.items() if isinstance(values, list)}


def flent_values(directory: Path, specs: list[FlowSpec] | None, warnings: list[str]) -> dict[str, Any]:
    """The run values of every flent flow of the replication (module docstring)."""
    values: dict[str, Any] = {}
    for spec in specs or []:
        if spec.kind != "flent":
            continue
        path = data_file(directory, spec.name)
        if path is None:
            warnings.append(f"{directory}: no *.{spec.name}{SUFFIX}: Flent wrote no data file for flow {spec.name}")
            continue
        try:
            series = read_series(path)
        except (OSError, ValueError, EOFError) as e:
            warnings.append(f"{path}: not a Flent data file ({e}); flow {spec.name}'s series are left out")
            continue
        for name, samples in series.items():
            prefix = f"{spec.name}.flent.{series_slug(name)}"
            values[f"{prefix}.n"] = len(samples)
            values[f"{prefix}.mean"] = float(np.mean(samples)) if samples else None
            values[f"{prefix}.median"] = float(np.median(samples)) if samples else None
            values[f"{prefix}.p95"] = float(np.percentile(samples, 95)) if samples else None
    return values
