"""The replications of a run on this machine's testbeds: one worker thread per testbed (a lane,
or the lab hosts), each taking units from one plan, made as they are taken, until none is left or the run is
stopped (a signal, or a testbed that could not be built). Where a worker's testbed comes from
is the backend's business (testbed/run/backends/): the runner only asks for a fresh one before
each replication and gives it back at the end."""
from __future__ import annotations

import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Protocol, TextIO

from testbed.link.testbed import Testbed
from testbed.run import meta
from testbed.run.flow_slots import FlowSlots
from testbed.run.progress import Progress, planned_replication_s
from testbed.run.results import RunDir, Status, failure_text
from testbed.run.stop import Stop, stop_on_signals
from testbed.run.unit import Plan, Unit, UnitRunner
from testbed.scenario import loader as scenario_mod


@dataclass
class RunResult:
    run_dir: Path
    statuses: dict[tuple[str, int], str] = field(default_factory=dict)
    interrupted_by: int | None = None     # the signal that stopped the run
    errors: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        if self.interrupted_by is not None:
            return 128 + self.interrupted_by
        if self.errors or any(s != "ok" for s in self.statuses.values()):
            return 1
        return 0


class Testbeds(Protocol):
    """What the runner asks of a backend that runs replications here (backends/base.py LocalBackend)."""

    def workers(self, units: int) -> list[int]:
        """The workers' numbers (their lanes), for `units` units to run."""

    def fresh_testbed(self, worker: int) -> Testbed:
        """The worker's testbed, as new, before each replication (or each chain of a CBI cell)."""

    def release(self, worker: int) -> None:
        """The worker is done: its testbed is torn down or given back."""

    def lane(self, worker: int) -> int | None:
        """The lane a worker's replications record as their provenance; None: not a lane."""


class Runner:
    def __init__(self, sc: scenario_mod.Scenario, run_dir: RunDir, units: Plan, parallel: int,
                 testbeds: Testbeds, stream: TextIO = sys.stderr):
        """`parallel`: replications that run their flows at once; a worker beyond them is the
        spare of --prepare-ahead."""
        self.sc, self.run_dir, self.units, self.testbeds = sc, run_dir, units, testbeds
        self.stop = Stop()
        self._todo: Iterator[Unit] = iter(units)     # units made as the workers take them
        planned = units.replications()
        self.lanes = testbeds.workers(len(units))
        # more workers than replications at once: the spare builds and sets up the next one
        self.slots = FlowSlots(parallel) if len(self.lanes) > parallel else None
        estimates = {cell.cell_id: planned_replication_s(cell, sc.timeout_us) for cell, _ in units.todo}
        self.progress = Progress(sc.name, planned, min(len(self.lanes), parallel), stream, estimates=estimates)
        self.result = RunResult(run_dir.root)
        self._lock = threading.Lock()

    def run(self) -> RunResult:
        threads = [threading.Thread(target=self._worker, args=(n,), name=f"lane-{n}", daemon=True)
                   for n in self.lanes]
        with stop_on_signals(self.stop, self._say_stopping):
            for t in threads:
                t.start()
            while any(t.is_alive() for t in threads):
                for t in threads:
                    t.join(0.2)
                self.progress.tick()
        self.progress.close()
        return self.result

    def _say_stopping(self, signum: int) -> None:
        self.result.interrupted_by = signum
        print(f"\nsquall run: {self.stop.signal_name} received, stopping the replications "
              "and tearing the lanes down ...", file=sys.stderr, flush=True)

    def _worker(self, lane_number: int) -> None:
        units = UnitRunner(self.run_dir, self.sc.seed, self.sc.timeout_us, self.stop,
                           fresh_testbed=lambda: self.testbeds.fresh_testbed(lane_number), record=self._record,
                           started=self.progress.start, provenance=meta.provenance(self.testbeds.lane(lane_number)),
                           tolerances=self.sc.tolerances, slots=self.slots)
        try:
            while not self.stop.is_set():
                with self._lock:
                    unit = next(self._todo, None)
                if unit is None:
                    return
                units.run(unit)
        except Exception as e:   # the lane itself could not be built: nothing can run on it
            with self._lock:
                self.result.errors.append(f"lane {lane_number}: {failure_text(e, self.run_dir.root)}")
            self.stop.set()
        finally:
            self.testbeds.release(lane_number)

    def _record(self, cell_id: str, rep: int, status: Status) -> None:
        with self._lock:
            self.result.statuses[(cell_id, rep)] = status.status
        # the ETA plans the work left per slot: a prepared replication's wait for one is not its work
        waited = status.details.get("timings", {}).get("slot_wait_s", 0.0)
        self.progress.record(cell_id, status.status, max(0.0, status.duration_s - waited), rep)
