"""Writing the results directory of a run (DESIGN.md §3.4); its names and which replications
are recorded are analysis/results/directory.py's, the one home of the format the analysis reads.

A replication is written into `rep-NN.partial/` and renamed to `rep-NN/` only when
its status.json is in place, so every replication directory is complete or absent. Its
emulator log and captures are gzip-compressed just before (analysis/results/stored.py); what could not
be compressed (a full disk) stays plain and is named in status.json's `kept_uncompressed`.
A cluster worker writes it in node-local storage instead; it is then copied beside its
place as a hidden `.rep-NN.incoming-…` directory and renamed in, so it still appears whole.
A failed replication that is redone on resume is moved to `attempts/`, never deleted.

Statuses: `ok`; `failed` (a program or an instrument failed: the numbers cannot be trusted);
`timeout` (flows still running at the scenario's timeout: a result of the link, whose unfinished
times count as longer than the timeout, analysis/metrics/censoring.py); `degraded` (everything ran and was
captured, but the end-to-end timing error was beyond the scenario's `timing_tolerance`: the
numbers are there, their times less exact). A resume redoes failed and missing replications;
degraded and timed-out ones only when asked (running a timeout again until it finishes would
keep only the link's lucky draws).
"""
from __future__ import annotations

import errno
import json
import os
import shutil
import socket
import time
from collections.abc import Collection
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterator

from analysis.results.atomic_file import write_text_atomically
from analysis.results.directory import (ATTEMPTS_DIR, CELLS_DIR, EXPANDED_FILE, META_FILE, PARTIAL_SUFFIX, RUN_FILES,
                                        SCENARIO_FILE, STATUS_FILE, STATUSES, is_recorded, partial_dir,
                                        rep_name, rep_number, replication_dir)
from analysis.results.stored import compress_replication
from testbed.errors import ConfigError


@dataclass(frozen=True)
class Status:
    status: str                  # ok | failed | timeout | degraded
    reason: str
    started_utc: str
    duration_s: float
    details: dict[str, Any]

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")


def check_results_dir(results: Path) -> None:
    """ConfigError at --results unless this user (root, for lanes) alone can write where the run
    directories go. squall writes captures, logs and summaries there as root: in a directory another
    user may write to, a link or a renamed directory could send them anywhere. An existing
    directory must be this user's and not writable by its group or others (nor reached through a
    link of someone else's); one squall is to create, the existing directory it is created in
    likewise, or a root-owned one with the sticky bit (such as /tmp)."""
    uid = os.geteuid()
    if results.is_symlink() and results.lstat().st_uid not in (uid, 0):
        raise ConfigError("--results", f"{str(results)!r} is a symbolic link of user {results.lstat().st_uid}; "
                          "expected a directory (or a link) of this user")
    existing = next((p for p in [results, *results.absolute().parents] if p.exists()), None)
    if existing is None:
        return
    st = existing.stat()
    if existing != results and st.st_uid == 0 and st.st_mode & 0o1000:
        return                      # a sticky directory such as /tmp: no one can move squall's away
    if st.st_uid != uid or st.st_mode & 0o022:
        who = f"owned by user {st.st_uid}" if st.st_uid != uid else \
            f"writable by its group or others (mode {st.st_mode & 0o7777:04o})"
        role = "is the results directory" if existing == results else "is where the results directory would be made"
        raise ConfigError("--results", f"{str(existing)!r} {role} but is {who}; squall writes its runs there as "
                          f"user {uid}, so another user could redirect them: use a directory of user {uid} that "
                          "no one else can write to (chown, chmod go-w)")


def utc_stamp(t: float | None = None) -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(t))


def failure_text(e: BaseException, results: Path) -> str:
    """What went wrong, for a status or the runner's errors; a full results disk says so."""
    if isinstance(e, OSError) and e.errno == errno.ENOSPC:
        return f"no space left on the disk of {results} ({e}); free some, then resume the run"
    return f"{type(e).__name__}: {e}"


def write_json_atomic(path: Path, data: Any) -> None:
    write_text_atomically(path, json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")


def _move_in(work: Path, final: Path) -> None:
    """Renames work to final; across file systems (node-local work, shared results) it copies
    to a hidden sibling first, so final appears complete or not at all."""
    try:
        os.replace(work, final)
        return
    except OSError as e:
        if e.errno != errno.EXDEV:
            raise
    incoming = final.with_name(f".{final.name}.incoming-{socket.gethostname()}-{os.getpid()}")
    shutil.rmtree(incoming, ignore_errors=True)
    try:
        shutil.copytree(work, incoming)
        _fsync_tree(incoming)
        os.replace(incoming, final)
    except BaseException:
        shutil.rmtree(incoming, ignore_errors=True)
        raise
    shutil.rmtree(work)


def _fsync_tree(root: Path) -> None:
    for path in root.rglob("*"):
        if path.is_file():
            with open(path, "rb") as f:
                os.fsync(f.fileno())


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
        try:
            write_text_atomically(root / SCENARIO_FILE, scenario_source)
            write_json_atomic(root / EXPANDED_FILE, expanded)
            write_json_atomic(root / META_FILE, meta)
        except BaseException:       # a run directory is whole or absent too
            shutil.rmtree(root, ignore_errors=True)
            raise
        return cls(root)

    @classmethod
    def open(cls, root: Path, where: str | None = None) -> "RunDir":
        """An existing run directory; a ConfigError at `where` (default: the path) when it is none."""
        where = where or str(root)
        if not root.is_dir():
            raise ConfigError(where, "no such directory; expected a run directory "
                              "(results/<name>-<UTC timestamp>)")
        missing = [name for name in RUN_FILES if not (root / name).is_file()]
        if missing:
            raise ConfigError(where, f"is not a squall run directory (no {', '.join(missing)}); "
                              "expected one that squall run created")
        run_dir = cls(root)
        run_dir.read_json(META_FILE)
        run_dir.read_json(EXPANDED_FILE, expect=(dict, list))
        return run_dir

    def read_json(self, name: str, expect: type | tuple[type, ...] = dict) -> Any:
        """One of the run's own JSON files (an object unless said); a ConfigError naming it when damaged."""
        path = self.root / name
        try:
            data = json.loads(path.read_bytes())
        except (OSError, ValueError) as e:
            raise ConfigError(str(path), f"cannot be read as the run's {name} ({e}); the run directory is damaged")
        if not isinstance(data, expect):
            raise ConfigError(str(path), "is not what squall run writes there; the run directory is damaged")
        return data

    def replication(self, cell_id: str, rep: int) -> Path:
        return replication_dir(self.root, cell_id, rep)

    def status(self, cell_id: str, rep: int) -> Status | None:
        path = self.replication(cell_id, rep) / STATUS_FILE
        if not path.is_file():
            return None
        return Status(**json.loads(path.read_text()))

    def present(self, cell_id: str) -> set[int]:
        """The numbers of the cell's replications that have a directory (`rep-NN`): one listing,
        so planning a study of 10 000 x 10 000 replications does not look for each status.json."""
        try:
            names = os.listdir(self.root / "cells" / cell_id)
        except (FileNotFoundError, NotADirectoryError):
            return set()
        return {int(n[4:]) for n in names if n.startswith("rep-") and n[4:].isdigit()}

    def needs_run(self, cell_id: str, rep: int, redo: Collection[str] = (), redo_before_utc: str | None = None
                  ) -> bool:
        """Missing or failed; degraded or timed out too when `redo` names them, and then only
        one started before `redo_before_utc` when given (a requeued cluster task does not redo
        what its own submission made)."""
        status = self.status(cell_id, rep)
        if status is None or not is_recorded(status.status):
            return True
        return status.status in redo and (redo_before_utc is None or status.started_utc < redo_before_utc)

    def begin(self, cell_id: str, rep: int, work_root: Path | None = None) -> Path:
        """A fresh work directory for the replication (under `work_root` when given, e.g. a
        cluster node's local disk); an earlier result (failed, degraded) is moved aside."""
        final = self.replication(cell_id, rep)
        if final.exists():
            self._keep_attempt(final)
        work = partial_dir(final)
        if work_root is not None:
            work = work_root / cell_id / work.name
            shutil.rmtree(work, ignore_errors=True)     # this node's own leftover, never results
        elif work.exists():       # an interrupted attempt: keep it for inspection too
            self._keep_attempt(work)
        work.mkdir(parents=True)
        return work

    def finish(self, cell_id: str, rep: int, work: Path, status: Status) -> Path:
        """The replication moved in place, its log and captures compressed (analysis/results/stored.py)."""
        kept_plain = compress_replication(work)
        if kept_plain:
            status.details["kept_uncompressed"] = kept_plain
        write_json_atomic(work / STATUS_FILE, asdict(status))
        final = self.replication(cell_id, rep)
        final.parent.mkdir(parents=True, exist_ok=True)
        _move_in(work, final)
        return final

    def _keep_attempt(self, path: Path) -> None:
        attempts = path.parent / ATTEMPTS_DIR
        attempts.mkdir(exist_ok=True)
        base = path.name.removesuffix(PARTIAL_SUFFIX)
        k = 1
        while (attempts / f"{base}-{k}").exists():
            k += 1
        shutil.move(str(path), attempts / f"{base}-{k}")

    def incomplete(self, cell_ids: list[str], reps: range) -> list[str]:
        """`cell rep-NN: missing` (or partial: abandoned mid-way; or failed) for every selected
        replication without a result to analyse (ok; degraded: complete but beyond a tolerance;
        timeout: a result of the link)."""
        found = []
        for cell_id in cell_ids:
            for rep in reps:
                status = self.status(cell_id, rep)
                if status is not None and is_recorded(status.status):
                    continue
                partial = partial_dir(self.replication(cell_id, rep)).exists()
                what = status.status if status is not None else "partial" if partial else "missing"
                found.append(f"{cell_id} {rep_name(rep)}: {what}")
        return found

    def statuses(self) -> Iterator[tuple[str, int, Status]]:
        for status_file in sorted(self.root.glob(f"{CELLS_DIR}/*/rep-*/{STATUS_FILE}")):
            rep_dir = status_file.parent
            rep = rep_number(rep_dir.name)
            if rep is not None:
                yield rep_dir.parent.name, rep, Status(**json.loads(status_file.read_text()))
