"""A cluster submission's record in the run directory: what was planned and which jobs run it.

    RUN/slurm/submission-K.json   {"submission": K, "lane_base": B, "lanes_per_node": L, "redo": [STATUS, ...],
                                   "prepare_ahead": P, "created_utc": "YYYYMMDDTHHMMSSZ",
                                   "partition": P|null, "sbatch_args": [...], "units_per_task": M,
                                   "analyse": A, "gres": G,
                                   "units": [{"cell": ..., "replications": [...], "keep_lane": ...}],
                                   "jobs": {"arrays": [{"job_id": ..., "first_unit": ..., "units": ...}],
                                            "end": job_id, "analysis": job_id (the end job, if A)}}
    RUN/slurm/submission-K/       the tasks' output files (Slurm's %x-%A_%a.out), task.sh, and
                                  jobs.json: each job's final Slurm state (run/slurm_jobs.py)

Unit N of submission K is what `squall worker RUN --submission K --unit N` runs. Each
`squall run --slurm` or `--resume --slurm` adds a submission; the replications' status.json
files, not these records, say what is done. The newest submission's settings (lanes,
partition, sbatch arguments, units per task, prepare-ahead, analysis, lanes as a generic
resource) are what `squall run --resume RUN --slurm` submits with unless told otherwise.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from testbed.errors import ConfigError
from testbed.run.results import utc_stamp, write_json_atomic
from testbed.run.unit import Unit

SLURM_DIR = "slurm"


@dataclass(frozen=True)
class PlannedUnit:
    cell: str
    replications: tuple[int, ...]
    keep_lane: bool


@dataclass(frozen=True)
class SlurmSettings:
    """How the submission went to Slurm, beside its lanes: what a resume submits with again."""
    partition: str | None = None
    sbatch_args: tuple[str, ...] = ()
    units_per_task: int = 1
    analyse: bool = True           # an analysis job after the arrays (not with --no-analysis)
    gres: bool = False             # each task asked for --gres=lane:1 (the cluster has GresTypes=lane)


@dataclass
class Submission:
    root: Path
    number: int
    lane_base: int
    lanes_per_node: int
    units: list[PlannedUnit]
    jobs: dict[str, Any] = field(default_factory=dict)
    redo: tuple[str, ...] = ()           # --redo-degraded/--redo-timeouts: its workers redo these too
    prepare_ahead: bool = False          # --prepare-ahead: a task with several units may take a spare lane
    created_utc: str = ""                # what its `redo` redoes is only what was there before it
    settings: "SlurmSettings" = field(default_factory=lambda: SlurmSettings())

    @property
    def node_lanes(self) -> range:
        """The lane numbers the tasks on one node share (twice as many with --prepare-ahead)."""
        return range(self.lane_base, self.lane_base + self.lanes_per_node * (2 if self.prepare_ahead else 1))

    @property
    def path(self) -> Path:
        return self.root / SLURM_DIR / f"submission-{self.number}.json"

    @property
    def output_dir(self) -> Path:
        return self.root / SLURM_DIR / f"submission-{self.number}"

    @classmethod
    def new(cls, root: Path, units: list[Unit], lane_base: int, lanes_per_node: int,
            redo: tuple[str, ...] = (), prepare_ahead: bool = False,
            settings: SlurmSettings = SlurmSettings()) -> "Submission":
        number = 1 + max((s.number for s in all_submissions(root)), default=0)
        planned = [PlannedUnit(u.cell.cell_id, u.replications, u.keep_lane) for u in units]
        sub = cls(root, number, lane_base, lanes_per_node, planned, redo=redo,
                  prepare_ahead=prepare_ahead, created_utc=utc_stamp(), settings=settings)
        sub.output_dir.mkdir(parents=True, exist_ok=True)
        sub.save()
        return sub

    def save(self) -> None:
        data = {"submission": self.number, "lane_base": self.lane_base, "lanes_per_node": self.lanes_per_node,
                "redo": list(self.redo), "prepare_ahead": self.prepare_ahead, "created_utc": self.created_utc,
                **asdict(self.settings), "sbatch_args": list(self.settings.sbatch_args),
                "units": [asdict(u) for u in self.units], "jobs": self.jobs}
        write_json_atomic(self.path, data)

    @classmethod
    def load(cls, root: Path, number: int | None = None) -> "Submission":
        """Submission `number`, or the newest."""
        subs = all_submissions(root)
        if not subs:
            raise ConfigError(f"{root}", "has no cluster submission (slurm/submission-*.json); "
                              "it was not started with --slurm")
        if number is None:
            return subs[-1]
        for sub in subs:
            if sub.number == number:
                return sub
        raise ConfigError("--submission", f"{number} is not a submission of {root} "
                          f"(there are {', '.join(str(s.number) for s in subs)})")

    @classmethod
    def _read(cls, root: Path, path: Path) -> "Submission":
        data = json.loads(path.read_text())
        units = [PlannedUnit(u["cell"], tuple(u["replications"]), bool(u["keep_lane"])) for u in data["units"]]
        return cls(root, int(data["submission"]), int(data["lane_base"]), int(data["lanes_per_node"]),
                   units, data.get("jobs", {}), _redo(data),
                   bool(data.get("prepare_ahead", False)), str(data.get("created_utc", "")),
                   SlurmSettings(data.get("partition"), tuple(data.get("sbatch_args", ())),
                                 int(data.get("units_per_task", 1)), bool(data.get("analyse", True)),
                                 bool(data.get("gres", False))))

    def job_ids(self) -> list[str]:
        ids = [str(a["job_id"]) for a in self.jobs.get("arrays", [])]
        end = self.jobs.get("end") or self.jobs.get("analysis")     # a submission before the end job: analysis
        if end:
            ids.append(str(end))
        return ids

    def task_units(self) -> dict[str, range]:
        """Each array task ("JOB_I") with the indices of the units it runs."""
        per_task = self.settings.units_per_task
        found = {}
        for array in self.jobs.get("arrays", []):
            first, count = int(array["first_unit"]), int(array["units"])
            for i in range(-(-count // per_task)):
                start = first + i * per_task
                found[f"{array['job_id']}_{i}"] = range(start, min(start + per_task, first + count))
        return found


def all_submissions(root: Path) -> list[Submission]:
    found = []
    for path in (root / SLURM_DIR).glob("submission-*.json"):
        found.append(Submission._read(root, path))
    return sorted(found, key=lambda s: s.number)


def _redo(data: dict[str, Any]) -> tuple[str, ...]:
    """The statuses a submission's workers redo (a submission written before `redo` has
    `redo_degraded`)."""
    if "redo" in data:
        return tuple(str(status) for status in data["redo"])
    return ("degraded",) if data.get("redo_degraded") else ()
