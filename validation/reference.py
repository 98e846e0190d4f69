"""The studies' result tables (scenarios/reference/*.csv) keyed like squall's cells.

A key is (study, link, variant, workload, http, metric) in the vocabularies of
scenarios/reference/README.md, which are those of the profiles. The mixture tables have no
HTTP version; their diffserv, queue and flow_role columns are folded into the key the way
scenarios/iip-mixture.toml labels its cells:
- workload: 2tcp+1udp workloads get "-ds" / "-nods" (3tcp ones have one class only);
- variant: "baseline+red" for the baseline with a RED queue (a router setting);
- metric: "<flow_role>.<metric>", e.g. "fastest.Elapsed_median", "udp.Jitter_max".

A row whose `corrupt` column gives a reason (the mixture tables' copying errors, tables 32 and
36; docs/reference-tables.md) is a value the source printed but that cannot be the measurement:
`load_reference` leaves it out, so no comparison and no conclusion uses it.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

REFERENCE_DIR = Path(__file__).resolve().parent.parent / "scenarios" / "reference"
HTTP_COLUMNS = ("study", "table", "http", "link", "variant", "source_label", "workload",
                "metric", "value", "unit", "relative_to")
MIXTURE_COLUMNS = ("study", "table", "workload", "diffserv", "link", "variant", "queue",
                   "source_label", "flow_role", "metric", "value", "unit", "corrupt")


@dataclass(frozen=True, order=True)
class Key:
    study: str
    link: str
    variant: str
    workload: str
    http: str          # "1.0" | "1.1" | "" (mixtures)
    metric: str


@dataclass(frozen=True)
class RefRow:
    key: Key
    value: float | None      # None: the source prints "-" or gives nothing
    unit: str
    table: str               # source table: IIP number or the slides' table name
    source_label: str
    relative_to: str = ""    # response_time_diff: the variant it is relative to
    corrupt: str = ""        # "corrupt: <reason>" for a value that cannot be the measurement


def mixture_workload(workload: str, diffserv: str) -> str:
    if workload.startswith("2tcp"):
        return f"{workload}-{'ds' if diffserv == 'yes' else 'nods'}"
    return workload


def mixture_variant(variant: str, queue: str) -> str:
    return f"{variant}+red" if queue == "red" else variant


def _data_lines(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines()
            if line and not line.startswith("#")]


def _value(text: str, path: Path) -> float | None:
    if text == "":
        return None
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{path}: value {text!r} is not a number; expected a decimal "
                         "number or an empty cell") from None


def read_reference_file(path: Path) -> list[RefRow]:
    """Rows of one result table; configuration tables (other columns) give []."""
    reader = csv.DictReader(_data_lines(path))
    columns = tuple(reader.fieldnames or ())
    if columns == HTTP_COLUMNS:
        return [RefRow(Key(r["study"], r["link"], r["variant"], r["workload"], r["http"],
                           r["metric"]), _value(r["value"], path), r["unit"], r["table"],
                       r["source_label"], r["relative_to"]) for r in reader]
    if columns == MIXTURE_COLUMNS:
        return [RefRow(Key(r["study"], r["link"], mixture_variant(r["variant"], r["queue"]),
                           mixture_workload(r["workload"], r["diffserv"]), "",
                           f"{r['flow_role']}.{r['metric']}"), _value(r["value"], path),
                       r["unit"], r["table"], r["source_label"], corrupt=r["corrupt"])
                for r in reader]
    return []


def load_reference(directory: Path = REFERENCE_DIR, *, keep_corrupt: bool = False) -> list[RefRow]:
    """Every result row, one per key: a key printed in two tables (the slides repeat the
    baseline response times) keeps its first row in file-name order. Rows marked corrupt are
    left out unless `keep_corrupt`."""
    rows: dict[Key, RefRow] = {}
    for path in sorted(directory.glob("*.csv")):
        for row in read_reference_file(path):
            if keep_corrupt or not row.corrupt:
                rows.setdefault(row.key, row)
    if not rows:
        raise ValueError(f"{directory}: no reference result tables (*.csv with the columns of "
                         "scenarios/reference/README.md)")
    return list(rows.values())
