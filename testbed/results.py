"""The results directory of a run (DESIGN.md §3.4).

    results/<scenario>-<UTC timestamp>/
      scenario.toml  expanded.json  meta.json
      cells/<cell-id>/rep-<NN>/ status.json, emulator.log, captures, ...
      cells/<cell-id>/attempts/rep-<NN>-<k>/   earlier failed attempts, kept

A replication is written into `rep-NN.partial/` and renamed to `rep-NN/` only when
its status.json is in place, so every replication directory is complete or absent.
A failed replication that is redone on resume is moved to `attempts/`, never deleted.
"""
from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterator

STATUSES = ("ok", "failed", "timeout")


@dataclass(frozen=True)
class Status:
    status: str                  # ok | failed | timeout
    reason: str
    started_utc: str
    duration_s: float
    details: dict[str, Any]

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")


def utc_stamp(t: float | None = None) -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(t))


def write_json_atomic(path: Path, data: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w") as f:
        json.dump(data, f, indent=2, sort_keys=True, default=str)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


@dataclass(frozen=True)
class RunDir:
    root: Path

    @classmethod
    def create(cls, results: Path, scenario_name: str, scenario_source: str,
               expanded: Any, meta: dict[str, Any]) -> "RunDir":
        results.mkdir(parents=True, exist_ok=True)
        root = results / f"{scenario_name}-{utc_stamp()}"
        suffix = 1
        while True:
            try:
                root.mkdir()
                break
            except FileExistsError:   # two runs in one second: never overwrite
                suffix += 1
                root = results / f"{scenario_name}-{utc_stamp()}-{suffix}"
        (root / "scenario.toml").write_text(scenario_source)
        write_json_atomic(root / "expanded.json", expanded)
        write_json_atomic(root / "meta.json", meta)
        return cls(root)

    @classmethod
    def open(cls, root: Path) -> "RunDir":
        if not (root / "scenario.toml").is_file():
            raise FileNotFoundError(f"{root} is not a squall run directory (no scenario.toml)")
        return cls(root)

    def replication(self, cell_id: str, rep: int) -> Path:
        return self.root / "cells" / cell_id / f"rep-{rep:02d}"

    def status(self, cell_id: str, rep: int) -> Status | None:
        path = self.replication(cell_id, rep) / "status.json"
        if not path.is_file():
            return None
        return Status(**json.loads(path.read_text()))

    def needs_run(self, cell_id: str, rep: int) -> bool:
        status = self.status(cell_id, rep)
        return status is None or status.status != "ok"

    def begin(self, cell_id: str, rep: int) -> Path:
        """A fresh work directory for the replication; a failed result is moved aside."""
        final = self.replication(cell_id, rep)
        if final.exists():
            self._keep_attempt(final)
        work = final.with_name(final.name + ".partial")
        if work.exists():       # an interrupted attempt: keep it for inspection too
            self._keep_attempt(work)
        work.mkdir(parents=True)
        return work

    def finish(self, cell_id: str, rep: int, work: Path, status: Status) -> Path:
        write_json_atomic(work / "status.json", asdict(status))
        final = self.replication(cell_id, rep)
        os.replace(work, final)
        return final

    def _keep_attempt(self, path: Path) -> None:
        attempts = path.parent / "attempts"
        attempts.mkdir(exist_ok=True)
        base = path.name.removesuffix(".partial")
        k = 1
        while (attempts / f"{base}-{k}").exists():
            k += 1
        shutil.move(str(path), attempts / f"{base}-{k}")

    def statuses(self) -> Iterator[tuple[str, int, Status]]:
        for status_file in sorted(self.root.glob("cells/*/rep-*/status.json")):
            rep_dir = status_file.parent
            yield rep_dir.parent.name, int(rep_dir.name.split("-")[1]), Status(**json.loads(status_file.read_text()))
