"""Units of work: the replications of one cell that one lane runs in order.

A unit is one replication, or the whole chain of a CBI cell (a TCP profile that keeps its
metrics between replications), which must run in order on one lane without rebuilding it.
The same units are run by the runner's lane workers and by cluster workers (run/worker.py).

A chain that starts past its first replication (a resume, a validation round, a failed
predecessor) would start with an empty metrics cache, as its first replication does, and so
measure nothing of CBI. The replications before it are therefore run again first on the same
lane, in order, as a warm-up whose results are discarded (status.json `cache`). All of them,
not the predecessor alone: what a connection leaves in the cache depends on what the cache
held when it started (the kernel stores an ssthresh from a connection that closes outside
congestion avoidance only over one already cached), so on a lossy link one cold run of the
predecessor leaves no ssthresh where the chain had one (validation/README.md, "CBI's cache
on the lossy links"). A lane that still holds an earlier replication's cache replays only
the ones after it.
"""
from __future__ import annotations

import errno
import shutil
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from testbed.link.testbed import Testbed
from testbed.run import lingering, replication
from testbed.run.flow_slots import FlowSlots
from testbed.run.results import RunDir, Status, failure_text, utc_stamp
from testbed.scenario.cell import ResolvedCell
from testbed.scenario.tolerances import Tolerances


@dataclass(frozen=True)
class Unit:
    """Replications of one cell that one worker runs in order."""
    cell: ResolvedCell
    replications: tuple[int, ...]
    keep_lane: bool                       # CBI: metrics must survive between them


@dataclass(frozen=True)
class Plan:
    """What is left to run: per cell its replications, made into units only as they are taken
    (a CBI cell's as one chain, any other's one unit per replication). A cell none of whose
    selected replications is done keeps them as a range: 10 000 x 10 000 take no memory."""
    todo: tuple[tuple[ResolvedCell, Sequence[int]], ...]

    def __iter__(self) -> Iterator[Unit]:
        for cell, reps in self.todo:
            if _chained(cell):
                yield Unit(cell, tuple(reps), keep_lane=True)
            else:
                yield from (Unit(cell, (r,), keep_lane=False) for r in reps)

    def __len__(self) -> int:
        """The number of units."""
        return sum(1 if _chained(cell) else len(reps) for cell, reps in self.todo)

    def replications(self) -> dict[str, int]:
        """Per cell id, the replications to run."""
        return {cell.cell_id: len(reps) for cell, reps in self.todo}


def _chained(cell: ResolvedCell) -> bool:
    """A TCP profile that keeps its metrics (CBI): the cell's replications run in order on one lane."""
    return cell.tcp is not None and not cell.tcp.flush_metrics


def plan(cells: list[ResolvedCell], selected: range, run_dir: RunDir, redo: tuple[str, ...] = (),
         progress: Callable[[int, int], None] | None = None) -> Plan:
    """Per cell, the selected replications still to run. Only replications that have a directory
    are looked at further (RunDir.present); `progress(cells planned, cells)` is called after each cell."""
    todo = []
    for done, cell in enumerate(cells, start=1):
        if progress is not None:
            progress(done, len(cells))
        present = run_dir.present(cell.cell_id)
        reps: Sequence[int] = selected if not present else \
            tuple(r for r in selected if r not in present or run_dir.needs_run(cell.cell_id, r, redo))
        if reps:
            todo.append((cell, reps))
    return Plan(tuple(todo))


# Replications that ran to their end: what they left in the cache is the chain's (a timeout is
# a result of the link: its finished connections wrote the cache as in the study).
CACHE_SOUND = ("ok", "degraded", "timeout")


def warm_up_dir(parent: Path, cell_id: str, rep: int) -> Path:
    """Where a warm-up of replication `rep` works: beside the cell's replications (or in a
    cluster node's local storage), never taken for a result (`rep-NN` it is not)."""
    return parent / cell_id / f".warm-up-rep-{rep:02d}"


@dataclass
class UnitRunner:
    """Runs units one after the other on one lane (or lab testbed), recording every replication."""
    run_dir: RunDir
    seed: int
    timeout_us: int
    stop: threading.Event
    fresh_testbed: Callable[[], Testbed]           # a rebuilt lane, or the reset lab hosts
    record: Callable[[str, int, Status], None]     # after each replication is in the run directory
    provenance: dict[str, Any]                     # where and with what it ran (status.json)
    work_root: Path | None = None                  # node-local work directories (cluster workers)
    # Cluster workers record an interrupted replication (its files so far, status failed with this
    # reason) so the shared run says what happened; the local runner leaves its .partial instead.
    interrupted_reason: Callable[[], str] | None = None
    testbed: Testbed | None = None
    tolerances: Tolerances = Tolerances()                      # the scenario's
    started: Callable[[str, int], None] | None = None          # as each replication starts (the progress line)
    slots: FlowSlots | None = None                             # --prepare-ahead: START waits for a slot
    _disk_full: OSError | None = field(default=None, init=False)   # a replication found the results disk full

    def run(self, unit: Unit) -> None:
        lane_holds = None     # the replication whose cache this lane holds, if it is sound (0: none yet)
        unsound_after = None  # a kept lane's cache goes back to this failed warm-up's replication
        for rep in unit.replications:
            if self.stop.is_set():
                break
            # a chain goes on on its lane from any earlier replication of it (a resumed (1, 3) replays 2)
            fresh = self.testbed is None or not unit.keep_lane or lane_holds is None or lane_holds >= rep
            t_lane = time.monotonic()
            if fresh:
                self.testbed, lane_holds, unsound_after = self.fresh_testbed(), 0, None
            lane_s = round(time.monotonic() - t_lane, 3)
            cache: dict[str, Any] | None = {"metrics": "kept" if not fresh else "empty"}
            assert lane_holds is not None
            if unit.keep_lane and lane_holds < rep - 1:
                cache = self._warm_up(unit.cell, range(lane_holds + 1, rep))
                if cache is not None and cache["metrics"] == "warm-up failed":
                    unsound_after = cache["warmed_by_replications"][-1]
            elif unsound_after is not None:
                cache["after_failed_warm_up_of"] = unsound_after      # kept, but not the chain's
            status = self._one(unit.cell, rep) if cache is not None else None
            if status is None and self.interrupted_reason is not None:
                if cache is None:      # stopped during the warm-up: the replication's own directory
                    self._work = self.run_dir.begin(unit.cell.cell_id, rep, self.work_root)
                status = Status("failed", self.interrupted_reason(), utc_stamp(), 0.0,
                                {"interrupted": True, "cell": unit.cell.cell_id, "replication": rep})
            if status is None:
                break      # interrupted: the .partial directory stays; RunDir.begin keeps it as an attempt
            status.details["fresh_lane"] = fresh    # False: a CBI successor kept the TCP metrics cache
            if unit.keep_lane and cache is not None:
                status.details["cache"] = cache
            status.details.setdefault("timings", {})["lane_s"] = lane_s     # building it, before setup_s
            status.details["provenance"] = self.provenance
            self.run_dir.finish(unit.cell.cell_id, rep, self._work, status)
            lane_holds = rep if status.status in CACHE_SOUND else None
            self.record(unit.cell.cell_id, rep, status)
            if status.details.get("interrupted"):
                break
            if self._disk_full is not None:
                # recorded (compressing its files made room for its status); nothing more is run
                raise self._disk_full

    def _warm_up(self, cell: ResolvedCell, reps: range) -> dict[str, Any] | None:
        """Replications `reps` run again in order on this lane, unrecorded, for the metrics cache
        they leave; None when the run is being stopped. A failed one ends the warm-up: the
        cache is not the chain's, which the successor's status says."""
        t = time.monotonic()
        replays = []
        for rep in reps:
            replay = self._replay(cell, rep)
            if replay is None:
                return None
            replays.append(replay)
            if replay["status"].status not in CACHE_SOUND:
                break
        last = replays[-1]["status"]
        warmed = last.status in CACHE_SOUND
        destroyed = [r["destroyed"] for r in replays]
        return {"metrics": "warmed" if warmed else "warm-up failed",
                "warmed_by_replications": [r["rep"] for r in replays],
                "warm_up_status": last.status, "warm_up_reason": last.reason,
                "warm_up_drain": last.details.get("drain"),
                "warm_up_lingering_connections_destroyed": None if None in destroyed else sum(destroyed),
                "warm_up_s": round(time.monotonic() - t, 3)}

    def _replay(self, cell: ResolvedCell, rep: int) -> dict[str, Any] | None:
        """One replication of a warm-up: its status and the connections destroyed before it
        (None when clearing the lane failed, said in the status); None when stopped."""
        assert self.testbed is not None
        job = replication.Job(cell, rep, self.seed, self.timeout_us, self.tolerances)
        work = warm_up_dir(self.work_root or self.run_dir.root / "cells", cell.cell_id, rep)
        shutil.rmtree(work, ignore_errors=True)      # a killed run's leftover
        work.mkdir(parents=True)
        destroyed = None
        try:
            destroyed = lingering.clear(self.testbed)
            status = replication.run(self.testbed, job, work, self.stop, self.slots)
        except replication.Interrupted:
            return None
        except Exception as e:   # noqa: BLE001 — said in the successor's status, which still runs
            status = Status("failed", failure_text(e, self.run_dir.root), utc_stamp(), 0.0, {})
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return {"rep": rep, "status": status, "destroyed": destroyed}

    def _one(self, cell: ResolvedCell, rep: int) -> Status | None:
        assert self.testbed is not None
        job = replication.Job(cell, rep, self.seed, self.timeout_us, self.tolerances)
        self._work = self.run_dir.begin(cell.cell_id, rep, self.work_root)
        if self.started is not None:
            self.started(cell.cell_id, rep)
        try:
            # a kept lane, a warm-up's, or lab hosts: what ran before must not send into this link
            destroyed = lingering.clear(self.testbed)
            status = replication.run(self.testbed, job, self._work, self.stop, self.slots)
            status.details["lingering_connections_destroyed"] = destroyed
            return status
        except replication.Interrupted:
            return None
        except Exception as e:
            if isinstance(e, OSError) and e.errno == errno.ENOSPC:
                self._disk_full = e
            return Status("failed", f"runner error: {failure_text(e, self.run_dir.root)}", utc_stamp(), 0.0,
                          {"testbed": self.testbed.describe()})
