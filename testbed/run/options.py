"""`squall run`'s options, as the command line gave them (testbed/cli.py)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from testbed.run.slurm import SlurmOptions

DEFAULT_LANE_BASE = 0


@dataclass(frozen=True)
class RunOptions:
    parallel: int = 1
    replications: int | None = None       # default: the scenario's
    first_replication: int | None = None  # run replications first..N only (default 1; a resume: the run's)
    cells: str | None = None              # glob over cell ids
    results: Path = Path("results")
    lane_base: int = DEFAULT_LANE_BASE
    analyse: bool = True                  # at the end: `squall report`'s tables (analysis package)
    testbed_file: Path | None = None      # lab hosts over SSH (docs/lab-hosts.md) instead of lanes
    slurm: SlurmOptions | None = None     # hand the units to Slurm (docs/cluster.md) instead of lanes here
    redo: tuple[str, ...] = ()            # --resume --redo-degraded/--redo-timeouts: these statuses run again
    prepare_ahead: bool = False           # one spare lane sets up the next replication (run/flow_slots.py)
    title: str | None = None              # --title / --note (as Flent's): meta.json, the report
    note: str | None = None

    @property
    def lanes(self) -> int:
        """Lanes of this machine the run may use: one per replication at once, and the spare."""
        return self.parallel + (1 if self.prepare_ahead else 0)
