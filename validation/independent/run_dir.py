"""A squall run directory as the cross-check reads it (DESIGN.md §3.4): `cells/<cell>/rep-NN/`
with its `status.json`, and squall's values in `summary/runs.csv`. A few lines of its own, so
that the layout squall reads is not also what checks it."""
from __future__ import annotations

import csv
import fnmatch
import json
import re
from dataclasses import dataclass
from pathlib import Path

REP_DIR = re.compile(r"^rep-(\d+)$")
RUNS_CSV = Path("summary") / "runs.csv"


class UsageError(ValueError):
    """The command cannot run as given; the message names the file or argument."""


@dataclass(frozen=True)
class Replication:
    run: str                 # the run directory's name
    cell: str
    number: int
    directory: Path
    status: str              # status.json's, or `unreadable`

    @property
    def label(self) -> str:
        return f"{self.cell}/rep-{self.number:02d}"


def _status(directory: Path) -> str:
    try:
        status = json.loads((directory / "status.json").read_text()).get("status")
    except (OSError, ValueError, AttributeError):
        return "unreadable"
    return status if isinstance(status, str) else "unreadable"


def _selected(cell: str, globs: list[str] | None) -> bool:
    return globs is None or any(fnmatch.fnmatchcase(cell, g) for g in globs)


def replications(root: Path, globs: list[str] | None, numbers: set[int] | None) -> list[Replication]:
    """Every `rep-NN` of the selected cells (globs on the whole cell id) and numbers, in order."""
    cells = root / "cells"
    if not cells.is_dir():
        raise UsageError(f"{cells}: no such directory; is {root} a squall run directory?")
    found = []
    for cell in sorted(d for d in cells.iterdir() if d.is_dir() and _selected(d.name, globs)):
        for rep in sorted(cell.iterdir()):
            m = REP_DIR.match(rep.name)
            if m and rep.is_dir() and (numbers is None or int(m.group(1)) in numbers):
                found.append(Replication(root.name, cell.name, int(m.group(1)), rep, _status(rep)))
    return found


def squall_rows(root: Path) -> dict[tuple[str, int], dict[str, str]]:
    """runs.csv by (cell, replication), as squall wrote it."""
    path = root / RUNS_CSV
    try:
        with open(path, newline="") as f:
            return {(row["cell"], int(row["replication"])): row for row in csv.DictReader(f)}
    except FileNotFoundError:
        raise UsageError(f"{path}: missing; analyse the run first (`squall analyze {root}`)") from None
    except (OSError, KeyError, ValueError, csv.Error) as e:
        raise UsageError(f"{path}: cannot read as squall's runs.csv: {e}") from e
