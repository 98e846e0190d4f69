"""The Slurm state of each job and array task of a submission, as Slurm says it and as the run
directory keeps it.

`scontrol show job` (every cluster has it) answers for jobs the controller still knows: queued,
running, and ended ones until MinJobAge has passed; `sacct` answers later, where accounting is
configured. A final state, once seen, is recorded in RUN/slurm/submission-K/jobs.json, so
`squall status` still says how every task ended after Slurm has forgotten it. Whoever looks
records: `squall status`, `--wait`, and the submission's end job (afterany all its arrays).
Slurm forgets each array task MinJobAge after it ended, also while the array runs on, so each
task also records its own end (the batch script around the worker, run/slurm.py):
RUN/slurm/submission-K/ended-JOB_TASK.json, {"exit": CODE, "node": NODE}, read as the state
Slurm gives a batch script with that exit code (source "task") where Slurm's own is gone.
"""
from __future__ import annotations

import json
import re
import shlex
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

from testbed.run.results import write_json_atomic
from testbed.run.submission import Submission

STATES_FILE = "jobs.json"
LIVE_STATES = {"PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUED", "RESIZING",
               "SIGNALING", "STAGE_OUT", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD", "STOPPED"}
QUERY_TIMEOUT_S = 60


class SlurmError(RuntimeError):
    pass


@dataclass(frozen=True)
class TaskState:
    """One job or array task ("123" or "123_4")."""
    task: str
    state: str                 # Slurm's JobState, e.g. COMPLETED, FAILED, CANCELLED, NODE_FAIL, PENDING
    exit_code: str = ""        # "code:signal"
    node: str = ""
    reason: str = ""
    source: str = ""           # scontrol, sacct, or recorded (jobs.json)

    @property
    def final(self) -> bool:
        return self.state not in LIVE_STATES


def slurm_command(argv: list[str], what: str, ok: Callable[[subprocess.CompletedProcess[str]], bool] | None = None
                  ) -> subprocess.CompletedProcess[str]:
    """`argv`'s answer; a SlurmError naming `what` unless it exited 0 (or `ok` accepts it)."""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=QUERY_TIMEOUT_S)
    except FileNotFoundError:
        raise SlurmError(f"{what}: {argv[0]} is not installed here (is this a Slurm submit host?)") from None
    except subprocess.TimeoutExpired:
        raise SlurmError(f"{what}: {shlex.join(argv)} did not answer within {QUERY_TIMEOUT_S} s") from None
    if proc.returncode != 0 and not (ok and ok(proc)):
        raise SlurmError(f"{what}: {shlex.join(argv)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc


def _expand(array_job: str, tasks: str) -> list[str]:
    """ "0-3,7%2" -> ["J_0", "J_1", "J_2", "J_3", "J_7"] (a pending array's remaining tasks)."""
    out = []
    for part in tasks.split("%")[0].split(","):
        first, _, last = part.partition("-")
        out += [f"{array_job}_{i}" for i in range(int(first), int(last or first) + 1)]
    return out


def parse_scontrol(text: str) -> dict[str, TaskState]:
    """`scontrol -o show job ...`: one line per job or array task (a pending array's remaining
    tasks on one line)."""
    states = {}
    for line in text.splitlines():
        fields = dict(m.groups() for m in re.finditer(r"(\S+?)=(\S*)", line))
        if "JobState" not in fields:
            continue
        array, index = fields.get("ArrayJobId"), fields.get("ArrayTaskId")
        tasks = _expand(array, index) if array and index else [fields["JobId"]]
        for task in tasks:
            states[task] = TaskState(task, fields["JobState"], fields.get("ExitCode", ""),
                                     fields.get("NodeList", "").replace("(null)", ""),
                                     fields.get("Reason", "").replace("None", ""), "scontrol")
    return states


def parse_sacct(text: str) -> dict[str, TaskState]:
    """`sacct -n -P -X -o JobID,State,ExitCode,NodeList`."""
    states = {}
    for line in text.splitlines():
        parts = line.split("|")
        if len(parts) < 4 or "[" in parts[0]:      # "123_[4-7]": not yet started, nothing ended
            continue
        state = parts[1].split()[0]                # "CANCELLED by 0"
        states[parts[0]] = TaskState(parts[0], state, parts[2], parts[3].replace("None assigned", ""),
                                     parts[1], "sacct")
    return states


def _forgotten(proc: subprocess.CompletedProcess[str]) -> bool:
    return "Invalid job id" in proc.stderr or "not found" in proc.stderr


def query(job_ids: list[str]) -> dict[str, TaskState]:
    """What scontrol knows of the jobs now, and sacct of those it forgot (if accounting exists)."""
    states: dict[str, TaskState] = {}
    forgotten = []
    for job in job_ids:
        proc = slurm_command(["scontrol", "-o", "show", "job", job], "asking Slurm for the jobs", _forgotten)
        if proc.returncode != 0:
            forgotten.append(job)
        states |= parse_scontrol(proc.stdout)
    if forgotten:
        proc = slurm_command(["sacct", "-n", "-P", "-X", "-o", "JobID,State,ExitCode,NodeList",
                              "-j", ",".join(forgotten)], "asking Slurm's accounting", lambda p: True)
        if proc.returncode == 0:        # "accounting storage is disabled": what was recorded is all there is
            states |= parse_sacct(proc.stdout)
    return states


def states_path(sub: Submission) -> Path:
    return sub.output_dir / STATES_FILE


ENDED_PREFIX = "ended-"


def own_ends(sub: Submission) -> dict[str, TaskState]:
    """The ends the tasks recorded themselves (a task killed with its batch script has none)."""
    found = {}
    for path in sub.output_dir.glob(f"{ENDED_PREFIX}*.json"):
        task = path.stem[len(ENDED_PREFIX):]
        try:
            entry = json.loads(path.read_text())
            code = int(entry["exit"])
        except (OSError, ValueError, KeyError, TypeError):
            continue      # being written, or cut short: Slurm's word, or nothing
        found[task] = TaskState(task, "COMPLETED" if code == 0 else "FAILED", f"{code}:0",
                                str(entry.get("node", "")), "", "task")
    return found


def recorded(sub: Submission) -> dict[str, TaskState]:
    """What the run directory knows without Slurm: the recorded Slurm states, else the tasks' own ends."""
    path = states_path(sub)
    kept = {} if not path.is_file() else \
        {task: TaskState(**(entry | {"source": "recorded"})) for task, entry in json.loads(path.read_text()).items()}
    return own_ends(sub) | kept


def current(sub: Submission) -> dict[str, TaskState]:
    """Every task's state: Slurm's answer where it has one, else what was recorded; the final
    ones Slurm gave are recorded now."""
    kept = recorded(sub)
    asked = query(sub.job_ids())
    new_final = {t: s for t, s in asked.items() if s.final and (t not in kept or kept[t] != s)}
    if new_final:
        slurms = {t: s for t, s in (kept | new_final).items() if s.source != "task"}
        try:
            write_json_atomic(states_path(sub), {t: asdict(s) | {"source": "recorded"}
                                                 for t, s in sorted(slurms.items())})
        except OSError:
            pass     # a run directory this user cannot write: shown now, recorded by the next who can
    return kept | asked


def live(states: dict[str, TaskState]) -> dict[str, str]:
    return {task: s.state for task, s in states.items() if not s.final}
