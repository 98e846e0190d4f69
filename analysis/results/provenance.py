"""Where a summary file came from, written into every Parquet file's own metadata so that a
file copied out of its run still says it (pyarrow alone reads it: `pq.read_schema(path)`).

Schema metadata (text): `squall_version` (the squall that wrote the file), `run_squall_revision`
and `run_squall_version` (the squall that ran the replications, from meta.json), `scenario`,
`scenario_sha256`, `description`, `title` and `note` (`squall run --title/--note`), `run` (the
run directory's name). Every column's field metadata has `unit`: "s", "ms", "µs", "B", "B/s",
"bit/s", "kbit/s", "%", "segments", "1" (a count or another number without a dimension),
"of metric" (the cells table's statistics: the unit of the row's `metric`, by the same rules)
or "" (text and booleans)."""

from __future__ import annotations

import json
import re
import subprocess
import tomllib
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]

# by the name's end (its last dotted part for runs-table values such as web.response_time_s)
_SUFFIX_UNITS = (("kbit_per_s", "kbit/s"), ("_Bps", "B/s"), ("_bps", "bit/s"), ("_pct", "%"),
                 ("_ms", "ms"), ("_us", "µs"), ("_s", "s"))
_BYTES = re.compile(r"(^|_)(bytes|len)$|^mss$|^bytes_")
_SEGMENTS = {"cwnd", "ssthresh"}
STATISTICS = {"min", "p25", "median", "p75", "max", "mean", "median_ci_low", "median_ci_high"}


def squall_version() -> str:
    """The version the C programs report (scripts/squall-version): pyproject.toml's version, then
    "+git.<short revision>" in a git checkout and ".dirty" when tracked files differ from it."""
    try:
        version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        from importlib.metadata import PackageNotFoundError, version as installed
        try:
            version = installed("squall")
        except PackageNotFoundError:
            version = "unknown"
    rev = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    if rev.returncode != 0:
        return version
    dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return f"{version}+git.{rev.stdout.strip()}" + (".dirty" if dirty else "")


def column_unit(name: str, numeric: bool, table: str = "") -> str:
    if not numeric:
        return ""
    if table == "cells" and name in STATISTICS:
        return "of metric"
    last = name.rsplit(".", 1)[-1]
    for suffix, unit in _SUFFIX_UNITS:
        if last.endswith(suffix):
            return unit
    if _BYTES.search(last):
        return "B"
    return "segments" if last in _SEGMENTS else "1"


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def run_metadata(root: Path) -> dict[str, str]:
    """The schema metadata of every Parquet file of the run at `root` (module docstring)."""
    meta, scenario = _read_json(root / "meta.json"), _read_json(root / "expanded.json")
    found = {"squall_version": squall_version(),
             "run_squall_revision": meta.get("squall_revision"),
             "run_squall_version": meta.get("squall_version"),
             "scenario": scenario.get("name"), "scenario_sha256": meta.get("scenario_sha256"),
             "description": scenario.get("description"), "title": meta.get("title"),
             "note": meta.get("note"), "run": root.name}
    return {k: str(v) for k, v in found.items() if v not in (None, "")}


def with_provenance(table, metadata: dict[str, str], name: str):
    """The pyarrow table with the run's metadata added to its schema's (pandas' own kept) and
    each column's unit."""
    import pyarrow as pa

    fields = [f.with_metadata({"unit": column_unit(f.name, pa.types.is_integer(f.type)
                                                   or pa.types.is_floating(f.type), name)})
              for f in table.schema]
    schema = pa.schema(fields, metadata={**(table.schema.metadata or {}),
                                         **{k.encode(): v.encode() for k, v in metadata.items()}})
    return table.cast(schema)
