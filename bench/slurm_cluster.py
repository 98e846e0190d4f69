"""A single-node Slurm cluster for tests and benchmarks: munged, slurmctld and slurmd from Debian's packages,
started with a configuration, key and state written into a temporary directory and stopped
again whatever happens. Clients find it through $SLURM_CONF (in `env`)."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "scontrol")
START_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Cluster:
    root: Path
    env: dict[str, str]          # os.environ + SLURM_CONF

    def run(self, *argv: str) -> str:
        return subprocess.run(list(argv), env=self.env, capture_output=True, text=True, check=True).stdout


def missing_programs() -> list[str]:
    return [p for p in DAEMONS if shutil.which(p) is None and not Path("/usr/sbin", p).exists()]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _config(root: Path, node: str, cpus: int) -> str:
    return "\n".join([
        "ClusterName=squalltest",
        f"SlurmctldHost={node}",
        "AuthType=auth/munge", f"AuthInfo=socket={root}/munge.socket", "CredType=cred/munge",
        "SlurmUser=root", "SlurmdUser=root",
        f"SlurmctldPort={_free_port()}", f"SlurmdPort={_free_port()}",
        f"StateSaveLocation={root}/state", f"SlurmdSpoolDir={root}/spool",
        f"SlurmctldPidFile={root}/slurmctld.pid", f"SlurmdPidFile={root}/slurmd.pid",
        f"SlurmctldLogFile={root}/slurmctld.log", f"SlurmdLogFile={root}/slurmd.log",
        "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
        "SelectType=select/cons_tres", "SelectTypeParameters=CR_CPU",
        "SchedulerType=sched/backfill", "ReturnToService=2", "MpiDefault=none",
        "JobAcctGatherType=jobacct_gather/none", "AccountingStorageType=accounting_storage/none",
        "JobCompType=jobcomp/none", "KillWait=20",
        # The node offers exactly as many CPUs as the test gives it lanes, whatever the machine has.
        "SlurmdParameters=config_overrides",
        f"NodeName={node} CPUs={cpus} State=UNKNOWN",
        f"PartitionName=squall Nodes={node} Default=YES MaxTime=INFINITE State=UP",
        "",
    ])


@contextmanager
def single_node_cluster(root: Path, cpus: int) -> Iterator[Cluster]:
    """The cluster, up and its node idle, for the context's duration; every daemon is stopped after."""
    root.mkdir(parents=True, exist_ok=True)
    for sub in ("state", "spool"):
        (root / sub).mkdir(exist_ok=True)
    node = socket.gethostname().split(".")[0]
    (root / "slurm.conf").write_text(_config(root, node, cpus))
    key = root / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    env = {**os.environ, "SLURM_CONF": str(root / "slurm.conf")}
    cluster = Cluster(root, env)
    try:
        subprocess.run(["munged", "--force", f"--socket={root}/munge.socket", f"--key-file={key}",
                        f"--log-file={root}/munged.log", f"--pid-file={root}/munged.pid",
                        f"--seed-file={root}/munged.seed"], check=True, capture_output=True)
        subprocess.run(["slurmctld", "-i"], env=env, check=True, capture_output=True)
        subprocess.run(["slurmd"], env=env, check=True, capture_output=True)
        _wait_idle(cluster, node)
        yield cluster
    finally:
        _stop(cluster)


def _wait_idle(cluster: Cluster, node: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    state = ""
    while time.monotonic() < deadline:
        try:
            state = cluster.run("sinfo", "-h", "-n", node, "-o", "%T").strip()
        except subprocess.CalledProcessError as e:
            state = e.stderr.strip()
        if state == "idle":
            return
        time.sleep(0.5)
    logs = "".join((cluster.root / f).read_text()[-800:] for f in ("slurmctld.log", "slurmd.log")
                   if (cluster.root / f).exists())
    raise RuntimeError(f"the test cluster's node is {state!r}, not idle, after {START_TIMEOUT_S:g} s: {logs}")


def _stop(cluster: Cluster) -> None:
    """scancel everything, then each daemon by its pid file (SIGTERM, then SIGKILL)."""
    subprocess.run(["scancel", "--user", "root"], env=cluster.env, capture_output=True)
    for name in ("slurmd", "slurmctld", "munged"):
        pid_file = cluster.root / f"{name}.pid"
        try:
            pid = int(pid_file.read_text().strip())
        except (OSError, ValueError):
            continue
        _terminate(pid)


def _terminate(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
