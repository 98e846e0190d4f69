"""`squall worker RUN --unit N`: one planned unit of a cluster submission, on this node.

Run by a Slurm array task (run/slurm.py). The run directory, on the cluster's shared file
system, stays the one record of what is done: the worker skips replications already ok,
works in node-local storage, and moves each finished replication in whole. It claims a lane
atomically (lanes/claim.py), so tasks scheduled independently onto one node never share one
(with --prepare-ahead also a spare, on which it sets up its next unit meanwhile),
and it refuses to run a squall revision other than the run's, or C programs built from another
(their embedded version), whose results would not be comparable. Where lanes are a Slurm generic
resource, a node's lanes are its own: `Gres=lane:K` of them from its `Features=lanes_B` (else
--lane-base). SIGTERM (scancel, a time limit) stops the replication, tears the lane down and
records the replication as interrupted; `squall run --resume RUN --slurm` redoes it.
"""
from __future__ import annotations

import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, TextIO

from testbed.errors import ConfigError
from testbed.lanes import claim as lane_claim
from testbed.lanes import lane as lanes
from testbed.lanes.hosts import NamespaceTestbed
from testbed.paths import bin_dir
from testbed.run import meta, slurm_jobs
from testbed.run.backends.lanes import remove_dead_leftovers
from testbed.run.flow_slots import FlowSlots
from testbed.run.results import RunDir, Status, failure_text
from testbed.run.stop import Stop, stop_on_signals
from testbed.run.submission import Submission
from testbed.run.unit import Unit, UnitRunner
from testbed.scenario import loader as scenario_mod

LANE_WAIT_S = 2.0


def worker_command(root: Path, unit_index: int, submission: int | None, err: TextIO = sys.stderr,
                   count: int = 1) -> int:
    """Units unit_index .. unit_index + count - 1 of the submission, one after the other on one lane."""
    run_dir = RunDir.open(root)
    _check_revision(root)
    _check_build()
    sub = Submission.load(root, submission)
    sc = scenario_mod.load(root / "scenario.toml", base_dir=meta.scenario_dir(run_dir.read_json("meta.json")))
    indices = [unit_index] + list(range(unit_index + 1, min(unit_index + count, len(sub.units))))
    todo = [(i, unit) for i in indices if (unit := _pending(run_dir, sub, _unit(sc, sub, i))) is not None]
    if not todo:
        print(f"squall worker: units {indices[0]}..{indices[-1]} are already complete", file=err)
        return 0
    remove_dead_leftovers("worker", err)
    with _claimed_lane(sub, err) as number, _local_work(root) as work_root, stop_on_signals(Stop()) as stop:
        spare = _try_spare_lane(sub, len(todo))      # after the task's own lane, so no task waits holding one
        slots = FlowSlots(1) if spare is not None else None

        def run(index: int, unit: Unit, lane: int) -> int:
            print(f"squall worker: unit {index}: {unit.cell.cell_id} replications "
                  f"{', '.join(map(str, unit.replications))} on lane {lane}", file=err, flush=True)
            return _run(run_dir, sc, unit, lane, work_root, stop, err, slots)

        try:
            codes = _on_lanes(todo, number, spare, run, stop, err, root)
        finally:
            if spare is not None:
                spare.release()
    return max(codes, default=0)


def _on_lanes(todo: list[tuple[int, Unit]], number: int, spare: lane_claim.LaneClaim | None,
              run: Callable[[int, Unit, int], int], stop: threading.Event, err: TextIO, root: Path) -> list[int]:
    """The units in turn on the task's lane and, beside it, on the spare (which then sets up
    each next unit while the other runs its flows); their exit codes."""
    pending: queue.SimpleQueue[tuple[int, Unit]] = queue.SimpleQueue()
    for item in todo:
        pending.put(item)
    codes: list[int] = []

    def lane_worker(lane: int) -> None:
        while not stop.is_set():
            try:
                index, unit = pending.get_nowait()
            except queue.Empty:
                return
            codes.append(run(index, unit, lane))

    def spare_worker(claim: lane_claim.LaneClaim) -> None:
        try:
            lane_worker(claim.number)
        except Exception as e:   # noqa: BLE001 — the task's own lane goes on with the units left
            print(f"squall worker: the spare lane {claim.number} failed (its unit is left for `squall run "
                  f"--resume {root} --slurm`); the units not yet started run on lane {number}: "
                  f"{failure_text(e, root)}", file=err, flush=True)
            codes.append(1)
        finally:
            claim.release()      # free for the node's other tasks as soon as it has nothing left

    helper = None
    if spare is not None:
        helper = threading.Thread(target=spare_worker, args=(spare,), name=f"lane-{spare.number}", daemon=True)
        helper.start()
    try:
        lane_worker(number)
    finally:
        if helper is not None:
            helper.join()
    return codes


def _pending(run_dir: RunDir, sub: Submission, unit: Unit) -> Unit | None:
    """The unit's replications still to do (a requeued task never redoes what is ok)."""
    pending = tuple(r for r in unit.replications
                    if run_dir.needs_run(unit.cell.cell_id, r, sub.redo, sub.created_utc or None))
    return Unit(unit.cell, pending, unit.keep_lane) if pending else None


def _check_revision(root: Path) -> None:
    wanted = json.loads((root / "meta.json").read_text()).get("squall_revision")
    here = meta.git_revision()
    if wanted != here:
        raise ConfigError(f"{root}/meta.json: squall_revision",
                          f"the run was made by squall {wanted}, this node has {here}: results of "
                          "different revisions are not comparable; install the run's revision on every node")


def _check_build() -> None:
    """Every C program of the checkout reports the checkout's own version (scripts/squall-version):
    a node that never ran `make build` after updating has programs of another revision."""
    wanted = meta.squall_version()
    programs = sorted(p for p in bin_dir().glob("squall-*") if os.access(p, os.X_OK))
    if not programs:
        raise ConfigError(str(bin_dir()), "holds no squall programs: run `make build` on this node")
    for program in programs:
        try:
            line = subprocess.run([str(program), "--version"], capture_output=True, text=True,
                                  timeout=10).stdout.strip()
        except (OSError, subprocess.TimeoutExpired) as e:
            line = f"nothing ({e})"
        if line != f"{program.name} (squall) {wanted}":
            raise ConfigError(str(program), f"reports {line!r}, expected version {wanted} (the checkout's): "
                              "run `make build` on this node")


def slurm_provenance() -> dict[str, str]:
    """The job and array task a replication ran in (status.json details.provenance)."""
    names = {"slurm_job_id": "SLURM_JOB_ID", "slurm_array_job_id": "SLURM_ARRAY_JOB_ID",
             "slurm_array_task_id": "SLURM_ARRAY_TASK_ID", "slurm_node": "SLURMD_NODENAME"}
    return {key: os.environ[var] for key, var in names.items() if var in os.environ}


def _unit(sc: scenario_mod.Scenario, sub: Submission, index: int) -> Unit:
    if not 0 <= index < len(sub.units):
        raise ConfigError("--unit", f"{index} is not a unit of submission {sub.number} "
                          f"(0..{len(sub.units) - 1})")
    planned = sub.units[index]
    cells = {c.cell_id: c for c in sc.cells}
    if planned.cell not in cells:
        raise ConfigError(f"{sub.path}: units[{index}].cell", f"{planned.cell!r} is not a cell of the run's scenario")
    return Unit(cells[planned.cell], planned.replications, planned.keep_lane)


def _run(run_dir: RunDir, sc: scenario_mod.Scenario, unit: Unit, number: int, work_root: Path, stop: Stop,
         err: TextIO, slots: FlowSlots | None = None) -> int:
    statuses: list[Status] = []

    def reason() -> str:
        return (f"interrupted by {stop.signal_name} (scancel, or the job's time limit); "
                f"squall run --resume {run_dir.root} --slurm redoes it")

    def record(cell_id: str, rep: int, status: Status) -> None:
        statuses.append(status)
        print(f"squall worker: {cell_id} rep {rep}: {status.status}"
              f"{': ' + status.reason if status.reason else ''}", file=err, flush=True)

    runner = UnitRunner(run_dir, sc.seed, sc.timeout_us, stop, fresh_testbed=lambda: NamespaceTestbed.create(number),
                        record=record, provenance=meta.provenance(number) | slurm_provenance(), work_root=work_root,
                        interrupted_reason=reason, tolerances=sc.tolerances, slots=slots)
    try:
        runner.run(unit)
    finally:
        lanes.teardown(number)
    if stop.is_set():
        return 128 + stop.signal_number
    return 0 if statuses and all(s.status == "ok" for s in statuses) else 1


@contextmanager
def _claimed_lane(sub: Submission, err: TextIO) -> Iterator[int]:
    """A lane of this node's range; a task that got a CPU before a lane waits for one."""
    numbers = node_lanes(sub)
    said = False
    while True:
        held = lane_claim.first_free(numbers)
        if held is not None:
            with held:
                yield held.number
            return
        if not said:
            print(f"squall worker: lanes {numbers.start}..{numbers.stop - 1} are all claimed; waiting",
                  file=err, flush=True)
            said = True
        time.sleep(LANE_WAIT_S)


def _try_spare_lane(sub: Submission, units: int) -> lane_claim.LaneClaim | None:
    """With --prepare-ahead and more than one unit, a second free lane of the node if there is
    one now (never waited for: the task runs on its one lane otherwise)."""
    if not sub.prepare_ahead or units < 2:
        return None
    return lane_claim.first_free(node_lanes(sub))


def node_lanes(sub: Submission) -> range:
    """The lane numbers this node's tasks share: with lanes as a generic resource, the node's
    own (scontrol show node: Gres=lane:K, Features=lanes_B), else the submission's."""
    node = os.environ.get("SLURMD_NODENAME")
    if not sub.settings.gres or not node:
        return sub.node_lanes
    text = slurm_jobs.slurm_command(["scontrol", "-o", "show", "node", node], "reading this node's lanes").stdout
    count, base = node_lane_gres(text)
    if count is None:
        raise ConfigError(f"node {node}", "declares no lanes (Gres=lane:K in slurm.conf) but the run's tasks "
                          "ask for --gres=lane:1")
    base = sub.lane_base if base is None else base
    return range(base, base + count * (2 if sub.prepare_ahead else 1))


def node_lane_gres(scontrol_node: str) -> tuple[int | None, int | None]:
    """A node's lane count (Gres=...lane:K...) and lane base (a feature lanes_B), from
    `scontrol -o show node`."""
    gres = re.search(r"\bGres=(\S+)", scontrol_node)
    count = None
    for item in (gres.group(1).split(",") if gres else []):
        parts = item.split("(")[0].split(":")
        if parts[0] == "lane" and len(parts) > 1 and parts[-1].isdigit():
            count = int(parts[-1])
    feature = re.search(r"\bAvailableFeatures=\S*?\blanes_(\d+)\b", scontrol_node)
    return count, int(feature.group(1)) if feature else None


@contextmanager
def _local_work(root: Path) -> Iterator[Path]:
    """Node-local work space (Slurm's $TMPDIR where set), removed at the end."""
    base = Path(os.environ.get("SLURM_TMPDIR") or os.environ.get("TMPDIR") or tempfile.gettempdir())
    work = Path(tempfile.mkdtemp(prefix=f"squall-{root.name}-", dir=base))
    try:
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)
