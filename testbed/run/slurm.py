"""Slurm as the engine of a run (docs/cluster.md): squall plans, Slurm schedules.

The submitting host has created the run directory on the cluster's shared file system and
planned its units; they go out as job arrays (chunked to the cluster's MaxArraySize), each
task running `squall worker RUN --submission K --unit N` on some node, and a last job that
depends on all of them (afterany) analyses the run. Limits, cancellation and accounting are
Slurm's own (`scancel`, time limits, `squeue`/`sacct`); the run directory stays the record of
what is done, so `squall run --resume RUN --slurm` re-plans from it.
"""
from __future__ import annotations

import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from testbed.errors import ConfigError
from testbed.paths import REPO_ROOT
from testbed.run.submission import Submission, all_submissions
from testbed.run.unit import Unit

DEFAULT_MAX_ARRAY_SIZE = 1001      # Slurm's default
WAIT_POLL_S = 1.0      # one squeue a second: its latency is what --wait adds to a run
LIVE_STATES = {"PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUED", "RESIZING",
               "SIGNALING", "STAGE_OUT", "REQUEUE_HOLD", "REQUEUE_FED"}


class SlurmError(RuntimeError):
    pass


@dataclass(frozen=True)
class SlurmOptions:
    partition: str | None = None
    lanes_per_node: int = 1
    sbatch_args: tuple[str, ...] = ()
    wait: bool = False
    units_per_task: int = 1        # units one array task runs in turn on its lane
    prepare_ahead: bool = False    # a task sets up its next unit on a spare lane (run/flow_slots.py)


def slurm_command(argv: list[str], what: str) -> str:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    except FileNotFoundError:
        raise SlurmError(f"{what}: {argv[0]} is not installed here (is this a Slurm submit host?)") from None
    except subprocess.TimeoutExpired:
        raise SlurmError(f"{what}: {shlex.join(argv)} did not answer within 60 s") from None
    if proc.returncode != 0:
        raise SlurmError(f"{what}: {shlex.join(argv)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc.stdout


def max_array_size() -> int:
    """The cluster's MaxArraySize: array indices must stay below it."""
    config = slurm_command(["scontrol", "show", "config"], "reading the cluster's configuration")
    m = re.search(r"^MaxArraySize\s*=\s*(\d+)", config, re.M)
    return int(m.group(1)) if m else DEFAULT_MAX_ARRAY_SIZE


def job_states(job_ids: list[str]) -> dict[str, str]:
    """Each live job or array task ("123_4") with its state; finished ones are absent."""
    if not job_ids:
        return {}
    out = slurm_command(["squeue", "-h", "-r", "-o", "%i %T", "-j", ",".join(job_ids)], "asking Slurm for the jobs")
    states = {}
    for line in out.splitlines():
        if line.strip():
            task, state = line.split()
            states[task] = state
    return states


def live_jobs(root: Path) -> dict[str, str]:
    ids = [i for sub in all_submissions(root) for i in sub.job_ids()]
    return {task: state for task, state in job_states(ids).items() if state in LIVE_STATES}


def submit(root: Path, run_name: str, units: list[Unit], lane_base: int, options: SlurmOptions,
           err: TextIO = sys.stderr, redo: tuple[str, ...] = (), analyse: bool = True) -> Submission:
    """The units as job arrays plus, unless `analyse` is False (--no-analysis), the analysis job;
    returns the saved submission."""
    if not units:
        raise ConfigError("--slurm", "nothing to run: every replication of the run is ok")
    busy = live_jobs(root)
    if busy:
        raise ConfigError("--resume", f"{root} still has {len(busy)} Slurm job(s) queued or running "
                          f"({', '.join(sorted(busy)[:5])}); wait for them or scancel them first")
    sub = Submission.new(root, units, lane_base, options.lanes_per_node, redo, options.prepare_ahead)
    chunk = max_array_size()
    per_task = options.units_per_task
    tasks = -(-len(units) // per_task)
    script = _write_task_script(sub, per_task)
    arrays = []
    for first in range(0, tasks, chunk):
        count = min(chunk, tasks - first)
        job = _sbatch([*_common(options, f"squall-{run_name}"), "--array", f"0-{count - 1}",
                       "--cpus-per-task", "1", "--output", str(sub.output_dir / "%x-%A_%a.out"),
                       str(script), str(first)], "submitting the replications")
        arrays.append({"job_id": job, "first_unit": first * per_task,
                       "units": min(count * per_task, len(units) - first * per_task)})
        sub.jobs = {"arrays": arrays}
        sub.save()       # what is queued is recorded at once, also if a later sbatch fails
    if not analyse:
        print(f"squall run: submission {sub.number}: {len(units)} units as job array(s) "
              f"{', '.join(a['job_id'] for a in arrays)}, no analysis job (--no-analysis); "
              f"watch with `squall status {root}`, cancel with `scancel {' '.join(sub.job_ids())}`", file=err)
        return sub
    dependency = "afterany:" + ":".join(a["job_id"] for a in arrays)
    analysis = _sbatch([*_common(options, f"squall-{run_name}-analysis"), "--dependency", dependency,
                        "--kill-on-invalid-dep=yes", "--output", str(sub.output_dir / "%x-%j.out"),
                        "--wrap", shlex.join([sys.executable, "-m", "testbed.cli", "report", str(root)])],
                       "submitting the analysis")
    sub.jobs = {"arrays": arrays, "analysis": analysis}
    sub.save()
    print(f"squall run: submission {sub.number}: {len(units)} units as job array(s) "
          f"{', '.join(a['job_id'] for a in arrays)}, analysis job {analysis} (afterany); "
          f"watch with `squall status {root}`, cancel with `scancel {' '.join(sub.job_ids())}`", file=err)
    return sub


def _common(options: SlurmOptions, name: str) -> list[str]:
    argv = ["sbatch", "--parsable", "--job-name", name, "--chdir", str(REPO_ROOT)]
    if options.partition:
        argv += ["--partition", options.partition]
    return argv + list(options.sbatch_args)


def _sbatch(argv: list[str], what: str) -> str:
    out = slurm_command(argv, what).strip()
    job_id = out.split(";")[0]       # --parsable: "id" or "id;cluster"
    if not job_id.isdigit():
        raise SlurmError(f"{what}: sbatch answered {out!r}, not a job id")
    return job_id


def _write_task_script(sub: Submission, per_task: int) -> Path:
    """The array tasks' batch script: task = first task of the chunk ($1) + the task's index; it
    runs units task * per_task .. + per_task - 1."""
    worker = shlex.join([sys.executable, "-m", "testbed.cli", "worker", str(sub.root),
                         "--submission", str(sub.number), "--count", str(per_task)])
    path = sub.output_dir / "task.sh"
    path.write_text("#!/bin/sh\n"
                    "# squall: units of a cluster submission (docs/cluster.md)\n"
                    f'exec {worker} --unit "$(( ($1 + SLURM_ARRAY_TASK_ID) * {per_task} ))"\n')
    path.chmod(0o755)
    return path


def wait(root: Path, sub: Submission, err: TextIO = sys.stderr) -> None:
    """Until no job of the submission is queued or running; a line whenever the count changes."""
    last = None
    while True:
        live = {t: s for t, s in job_states(sub.job_ids()).items() if s in LIVE_STATES}
        if not live:
            return
        counts = {}
        for state in live.values():
            counts[state] = counts.get(state, 0) + 1
        line = ", ".join(f"{n} {state.lower()}" for state, n in sorted(counts.items()))
        if line != last:
            print(f"squall run: submission {sub.number}: {line}", file=err, flush=True)
            last = line
        time.sleep(WAIT_POLL_S)
