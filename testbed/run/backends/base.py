"""The backend interface: what `squall run` asks of the place its replications run.

A run goes: `check` (everything that can be found out before a run directory or a lane exists;
a BackendUnavailable is said and the command exits 2), `describe` (meta.json's `testbed`, for a
new run), then the run directory is created or reopened and planned, `where` (for the start
line), `run` (the planned units, then the run's end; the exit code) and `close` (always; what
`check` opened is given back).

LocalBackend is a backend whose replications run on this machine's testbeds, by the workers of
testbed/run/local_runner.py: it answers which testbed each worker gets (local_runner.Testbeds).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, TextIO

from testbed.link.testbed import Testbed
from testbed.run.ending import finish
from testbed.run.local_runner import RunResult, Runner
from testbed.run.options import RunOptions
from testbed.run.results import RunDir
from testbed.run.unit import Plan
from testbed.scenario.cell import ResolvedCell
from testbed.scenario.loader import Scenario


class BackendUnavailable(RuntimeError):
    """The backend cannot run anything here (not root, a lab host unreachable, ...): said as it is."""


@dataclass(frozen=True)
class Planned:
    """A run directory, new or reopened, and what is left to run in it."""
    sc: Scenario
    run_dir: RunDir
    reps: range
    cells: list[ResolvedCell]
    units: Plan

    @property
    def replications(self) -> int:
        return sum(self.units.replications().values())


class Backend(ABC):
    NAME: ClassVar[str]          # meta.json testbed.backend

    def __init__(self, options: RunOptions):
        self.options = options

    @abstractmethod
    def check(self, sc: Scenario, err: TextIO) -> None:
        """What can be checked before anything is created; ConfigError for an option that does
        not fit, BackendUnavailable when nothing can run."""

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """meta.json's `testbed` of a new run, without the run options (runner.start_run adds them)."""

    @abstractmethod
    def where(self, units: Plan) -> str:
        """The start line's "to run ..." part: on which lanes, hosts or cluster."""

    @abstractmethod
    def run(self, planned: Planned, out: TextIO, err: TextIO) -> int:
        """The planned units, then the run's end (status table, what is left); the exit code."""

    def close(self, err: TextIO) -> None:
        """Give back what `check` opened; said on `err` when something could not be restored.
        Called whatever happened, perhaps twice: the second time does nothing."""


class LocalBackend(Backend):
    """Replications run here, on testbeds this backend hands to the runner's workers."""

    @abstractmethod
    def workers(self, units: int) -> list[int]: ...

    @abstractmethod
    def fresh_testbed(self, worker: int) -> Testbed: ...

    def release(self, worker: int) -> None:
        pass

    def lane(self, worker: int) -> int | None:
        return None

    def run(self, planned: Planned, out: TextIO, err: TextIO) -> int:
        try:
            result = Runner(planned.sc, planned.run_dir, planned.units, self.options.parallel, self, err).run() \
                if planned.units else RunResult(planned.run_dir.root)
        finally:
            self.close(err)
        return finish(planned.run_dir, planned.cells, planned.reps, result, self.options.analyse, out, err)
