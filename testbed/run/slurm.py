"""Slurm as the engine of a run (docs/cluster.md): squall plans, Slurm schedules.

The submitting host has created the run directory on the cluster's shared file system and
planned its units; they go out as job arrays (chunked to the cluster's MaxArraySize), each
task running `squall worker RUN --submission K --unit N` on some node, and a last job that
depends on all of them (afterany) analyses the run. Limits, cancellation and accounting are
Slurm's own (`scancel`, time limits, `scontrol`/`sacct`); the run directory stays the record of
what is done, so `squall run --resume RUN --slurm` re-plans from it, with the settings the
newest submission recorded. Where the cluster declares lanes as a generic resource
(`GresTypes=lane`, `Gres=lane:K` per node), each task asks for one (`--gres=lane:1`) and Slurm
places tasks only where a lane is free; the worker's lane claim stays the guard.
"""
from __future__ import annotations

import re
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from testbed.errors import ConfigError
from testbed.paths import REPO_ROOT
from testbed.run import slurm_jobs
from testbed.run.slurm_jobs import SlurmError
from testbed.run.submission import SlurmSettings, Submission, all_submissions
from testbed.run.unit import Unit

DEFAULT_MAX_ARRAY_SIZE = 1001      # Slurm's default
WAIT_POLL_S = 1.0      # one scontrol a second: its latency is what --wait adds to a run
LANE_GRES = "lane"

__all__ = ["SlurmError", "SlurmOptions", "max_array_size", "submit", "wait", "live_jobs"]


@dataclass(frozen=True)
class SlurmOptions:
    partition: str | None = None
    lanes_per_node: int = 1
    sbatch_args: tuple[str, ...] = ()
    wait: bool = False
    units_per_task: int = 1        # units one array task runs in turn on its lane
    prepare_ahead: bool = False    # a task sets up its next unit on a spare lane (run/flow_slots.py)


def slurm_command(argv: list[str], what: str) -> str:
    return slurm_jobs.slurm_command(argv, what).stdout


def _config() -> str:
    return slurm_command(["scontrol", "show", "config"], "reading the cluster's configuration")


def max_array_size() -> int:
    """The cluster's MaxArraySize: array indices must stay below it."""
    m = re.search(r"^MaxArraySize\s*=\s*(\d+)", _config(), re.M)
    return int(m.group(1)) if m else DEFAULT_MAX_ARRAY_SIZE


def lanes_are_gres() -> bool:
    """Whether the cluster declares lanes as a generic resource (GresTypes=lane)."""
    m = re.search(r"^GresTypes\s*=\s*(.*)$", _config(), re.M)
    return m is not None and LANE_GRES in re.split(r"[,\s]+", m.group(1))


def live_jobs(root: Path) -> dict[str, str]:
    """Each job or array task of the run still queued or running, with its state."""
    live = {}
    for sub in all_submissions(root):
        live |= slurm_jobs.live(slurm_jobs.current(sub))
    return live


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
    per_task = options.units_per_task
    settings = SlurmSettings(options.partition, options.sbatch_args, per_task, analyse, lanes_are_gres())
    sub = Submission.new(root, units, lane_base, options.lanes_per_node, redo, options.prepare_ahead, settings)
    chunk = max_array_size()
    tasks = -(-len(units) // per_task)
    script = _write_task_script(sub, per_task)
    gres = ["--gres", f"{LANE_GRES}:1"] if settings.gres else []
    arrays = []
    for first in range(0, tasks, chunk):
        count = min(chunk, tasks - first)
        job = _sbatch([*_common(options, f"squall-{run_name}"), "--array", f"0-{count - 1}",
                       "--cpus-per-task", "1", *gres, "--output", str(sub.output_dir / "%x-%A_%a.out"),
                       str(script), str(first)], "submitting the replications")
        arrays.append({"job_id": job, "first_unit": first * per_task,
                       "units": min(count * per_task, len(units) - first * per_task)})
        sub.jobs = {"arrays": arrays}
        sub.save()       # what is queued is recorded at once, also if a later sbatch fails
    end = _submit_end_job(sub, run_name, options, arrays, analyse)
    sub.jobs = {"arrays": arrays, "end": end, **({"analysis": end} if analyse else {})}
    sub.save()
    what = f"analysis job {end}" if analyse else f"no analysis job (--no-analysis), end job {end}"
    print(f"squall run: submission {sub.number}: {len(units)} units as job array(s) "
          f"{', '.join(a['job_id'] for a in arrays)}{' (a lane each, --gres=lane:1)' if settings.gres else ''}, "
          f"{what} (afterany); watch with `squall status {root}`, cancel with `scancel {' '.join(sub.job_ids())}`",
          file=err)
    return sub


def _submit_end_job(sub: Submission, run_name: str, options: SlurmOptions, arrays: list[dict[str, object]],
                    analyse: bool) -> str:
    """The job after all arrays (afterany): `squall status` records every task's final state in
    the run directory while Slurm still knows them (scontrol forgets after MinJobAge), then,
    unless --no-analysis, `squall report` analyses the run."""
    squall = [sys.executable, "-m", "testbed.cli"]
    steps = [shlex.join([*squall, "status", str(sub.root)])]
    if analyse:
        steps.append(shlex.join([*squall, "report", str(sub.root)]))
    dependency = "afterany:" + ":".join(str(a["job_id"]) for a in arrays)
    suffix = "analysis" if analyse else "end"
    return _sbatch([*_common(options, f"squall-{run_name}-{suffix}"), "--dependency", dependency,
                    "--kill-on-invalid-dep=yes", "--output", str(sub.output_dir / "%x-%j.out"),
                    "--wrap", "; ".join(steps)], "submitting the end job")


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
    runs units task * per_task .. + per_task - 1, then records its own end (slurm_jobs.own_ends:
    Slurm forgets an ended task after MinJobAge). A trap, not an ignored signal, keeps the script
    through the SIGTERM of scancel, so the worker's programs can still be stopped with one."""
    worker = shlex.join([sys.executable, "-m", "testbed.cli", "worker", str(sub.root),
                         "--submission", str(sub.number), "--count", str(per_task)])
    ended = shlex.quote(str(sub.output_dir / slurm_jobs.ENDED_PREFIX))
    path = sub.output_dir / "task.sh"
    path.write_text("#!/bin/sh\n"
                    "# squall: units of a cluster submission (docs/cluster.md)\n"
                    "trap 'true' TERM INT\n"
                    f'{worker} --unit "$(( ($1 + SLURM_ARRAY_TASK_ID) * {per_task} ))"\n'
                    "code=$?\n"
                    f'task={ended}"${{SLURM_ARRAY_JOB_ID}}_${{SLURM_ARRAY_TASK_ID}}"\n'
                    'printf \'{"exit": %d, "node": "%s"}\\n\' "$code" "$SLURMD_NODENAME" > "$task.json.part" '
                    '&& mv "$task.json.part" "$task.json"\n'
                    'exit "$code"\n')
    path.chmod(0o755)
    return path


def wait(root: Path, sub: Submission, err: TextIO = sys.stderr) -> None:
    """Until no job of the submission is queued or running; a line whenever the count changes."""
    last = None
    while True:
        live = slurm_jobs.live(slurm_jobs.current(sub))
        if not live:
            return
        counts: dict[str, int] = {}
        for state in live.values():
            counts[state] = counts.get(state, 0) + 1
        line = ", ".join(f"{n} {state.lower()}" for state, n in sorted(counts.items()))
        if line != last:
            print(f"squall run: submission {sub.number}: {line}", file=err, flush=True)
            last = line
        time.sleep(WAIT_POLL_S)


def recorded_options(root: Path) -> tuple[int, dict[str, object]]:
    """The newest submission's settings of the run as `squall run` options ({argparse dest: value},
    only those that differ from the option's absence), and its number; (0, {}) for a run never
    submitted. `--resume RUN --slurm` takes those not given again."""
    subs = all_submissions(root)
    if not subs:
        return 0, {}
    sub = subs[-1]
    found: dict[str, object] = {"lane_base": sub.lane_base, "lanes_per_node": sub.lanes_per_node,
                                "units_per_task": sub.settings.units_per_task}
    if sub.settings.partition:
        found["partition"] = sub.settings.partition
    if sub.settings.sbatch_args:
        found["sbatch_arg"] = list(sub.settings.sbatch_args)
    if sub.prepare_ahead:
        found["prepare_ahead"] = True
    if not sub.settings.analyse:
        found["no_analysis"] = True
    return sub.number, found
