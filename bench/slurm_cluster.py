"""A Slurm cluster on this one machine for tests and benchmarks: munged, slurmctld and one or
more slurmd from Debian's packages, started with a configuration, key and state written into a
temporary directory and stopped again whatever happens. Clients find it through $SLURM_CONF (in
`env`).

`single_node_cluster`: one slurmd in the machine's own namespaces, named as the machine.
`namespaced_cluster`: several slurmd (Debian's has no multiple-slurmd build), each in its own
network and UTS namespace with its own node name (its hostname there), reached from the
controller over a veth pair; one slurm.conf for all of them, whose `%n` gives each node its own
spool, pid and log files. Each node declares its lanes as a generic resource (`Gres=lane:K`)
and its lane range in its Features (`lanes_B`, docs/cluster.md), so two nodes of one machine
never build the same lane.
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "scontrol")
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 40.0     # KillWait (20 s) and the workers' teardown


@dataclass(frozen=True)
class Node:
    name: str
    lanes: int               # Gres=lane:K, and as many CPUs
    lane_base: int | None = None    # the node's own lane range starts here (Features=lanes_B)


@dataclass(frozen=True)
class Cluster:
    root: Path
    env: dict[str, str]          # os.environ + SLURM_CONF
    nodes: tuple[Node, ...] = ()

    def run(self, *argv: str) -> str:
        return subprocess.run(list(argv), env=self.env, capture_output=True, text=True, check=True).stdout


def missing_programs() -> list[str]:
    return [p for p in DAEMONS if shutil.which(p) is None and not Path("/usr/sbin", p).exists()]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _node_line(node: Node, address: str | None) -> str:
    features = f" Features=lanes_{node.lane_base}" if node.lane_base is not None else ""
    addr = f" NodeAddr={address}" if address else ""
    return f"NodeName={node.name}{addr} CPUs={node.lanes} Gres=lane:{node.lanes}{features} State=UNKNOWN"


def _config(root: Path, controller: str, nodes: list[tuple[Node, str | None]], extra: tuple[str, ...] = ()) -> str:
    names = ",".join(node.name for node, _ in nodes)
    return "\n".join([
        "ClusterName=squalltest",
        f"SlurmctldHost={controller}",
        "AuthType=auth/munge", f"AuthInfo=socket={root}/munge.socket", "CredType=cred/munge",
        "SlurmUser=root", "SlurmdUser=root",
        f"SlurmctldPort={_free_port()}", f"SlurmdPort={_free_port()}",
        # one file for every node: %n is the node's name
        f"StateSaveLocation={root}/state", f"SlurmdSpoolDir={root}/spool-%n",
        f"SlurmctldPidFile={root}/slurmctld.pid", f"SlurmdPidFile={root}/slurmd-%n.pid",
        f"SlurmctldLogFile={root}/slurmctld.log", f"SlurmdLogFile={root}/slurmd-%n.log",
        "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
        "SelectType=select/cons_tres", "SelectTypeParameters=CR_CPU",
        "SchedulerType=sched/backfill", "ReturnToService=2", "MpiDefault=none",
        "JobAcctGatherType=jobacct_gather/none", "AccountingStorageType=accounting_storage/none",
        "JobCompType=jobcomp/none", "KillWait=20",
        "GresTypes=lane",
        # A node offers exactly as many CPUs as the test gives it lanes, whatever the machine has.
        "SlurmdParameters=config_overrides",
        *(_node_line(node, address) for node, address in nodes),
        f"PartitionName=squall Nodes={names} Default=YES MaxTime=INFINITE State=UP",
        *extra,
        "",
    ])


def _start_munge(root: Path) -> None:
    key = root / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    subprocess.run(["munged", "--force", f"--socket={root}/munge.socket", f"--key-file={key}",
                    f"--log-file={root}/munged.log", f"--pid-file={root}/munged.pid",
                    f"--seed-file={root}/munged.seed"], check=True, capture_output=True)


def _prepare(root: Path, nodes: list[Node]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "state").mkdir(exist_ok=True)
    for node in nodes:
        (root / f"spool-{node.name}").mkdir(exist_ok=True)
    (root / "gres.conf").write_text("".join(f"NodeName={n.name} Name=lane Count={n.lanes}\n" for n in nodes))


@contextmanager
def single_node_cluster(root: Path, cpus: int) -> Iterator[Cluster]:
    """The cluster, up and its node idle, for the context's duration; every daemon is stopped after."""
    node = Node(socket.gethostname().split(".")[0], cpus)
    _prepare(root, [node])
    (root / "slurm.conf").write_text(_config(root, node.name, [(node, None)]))
    cluster = Cluster(root, {**os.environ, "SLURM_CONF": str(root / "slurm.conf")}, (node,))
    try:
        _start_munge(root)
        subprocess.run(["slurmctld", "-i"], env=cluster.env, check=True, capture_output=True)
        subprocess.run(["slurmd"], env=cluster.env, check=True, capture_output=True)
        _wait_idle(cluster)
        yield cluster
    finally:
        _stop(cluster)


@contextmanager
def namespaced_cluster(root: Path, nodes: list[Node], tag: int, extra: tuple[str, ...] = ()) -> Iterator[Cluster]:
    """One slurmd per node, each in namespaces of its own (`sqslurm<tag>-<node>`, veth
    `sqs<tag>n<i>`, addresses 100.64.<tag>.x/30); the controller here; `extra`: more slurm.conf
    lines. Everything started is stopped and every namespace deleted after, also when starting
    fails."""
    _prepare(root, nodes)
    links = [_NodeLink(tag, i, node) for i, node in enumerate(nodes)]
    controller = f"{socket.gethostname().split('.')[0]}({links[0].host_address})"
    (root / "slurm.conf").write_text(_config(root, controller, [(l.node, l.node_address) for l in links], extra))
    cluster = Cluster(root, {**os.environ, "SLURM_CONF": str(root / "slurm.conf")}, tuple(nodes))
    with ExitStack() as stack:
        stack.callback(_stop, cluster)     # last in, first out: daemons stop before the links go
        for link in links:
            stack.callback(link.remove)
            link.create()
        _start_munge(root)
        subprocess.run(["slurmctld", "-i"], env=cluster.env, check=True, capture_output=True)
        for link in links:
            link.start_slurmd(cluster.env)
        _wait_idle(cluster)
        yield cluster


@dataclass(frozen=True)
class _NodeLink:
    tag: int
    index: int
    node: Node

    @property
    def namespace(self) -> str:
        return f"sqslurm{self.tag}-{self.node.name}"

    @property
    def host_device(self) -> str:
        return f"sqs{self.tag}n{self.index}"

    @property
    def host_address(self) -> str:
        return f"100.64.{self.tag % 256}.{4 * self.index + 1}"

    @property
    def node_address(self) -> str:
        return f"100.64.{self.tag % 256}.{4 * self.index + 2}"

    def create(self) -> None:
        ns, dev = self.namespace, self.host_device
        for argv in (["ip", "netns", "add", ns],
                     ["ip", "link", "add", dev, "type", "veth", "peer", "name", "eth0", "netns", ns],
                     ["ip", "address", "add", f"{self.host_address}/30", "dev", dev],
                     ["ip", "link", "set", dev, "up"],
                     ["ip", "-n", ns, "address", "add", f"{self.node_address}/30", "dev", "eth0"],
                     ["ip", "-n", ns, "link", "set", "eth0", "up"],
                     ["ip", "-n", ns, "link", "set", "lo", "up"],
                     ["ip", "-n", ns, "route", "add", "default", "via", self.host_address]):
            subprocess.run(argv, check=True, capture_output=True)

    def start_slurmd(self, env: dict[str, str]) -> None:
        """slurmd with the node's name as its hostname, in the node's network namespace only
        (nsenter, not `ip netns exec`: the lanes its jobs mount must be the machine's)."""
        subprocess.run(["unshare", "--uts", "--", "nsenter", f"--net=/run/netns/{self.namespace}", "--",
                        "sh", "-c", f"hostname {self.node.name} && exec slurmd"],
                       env=env, check=True, capture_output=True)

    def remove(self) -> None:
        subprocess.run(["ip", "netns", "delete", self.namespace], capture_output=True)   # the veth pair goes with it


def _wait_idle(cluster: Cluster) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    names = ",".join(n.name for n in cluster.nodes)
    states = ""
    while time.monotonic() < deadline:
        try:
            states = cluster.run("sinfo", "-h", "-N", "-n", names, "-o", "%N %T").strip()
        except subprocess.CalledProcessError as e:
            states = e.stderr.strip()
        if states and all(line.split()[-1] == "idle" for line in states.splitlines()) \
                and len(states.splitlines()) == len(cluster.nodes):
            return
        time.sleep(0.5)
    logs = "".join(p.read_text()[-800:] for p in sorted(cluster.root.glob("slurm*.log")))
    raise RuntimeError(f"the test cluster's nodes are {states!r}, not idle, after {START_TIMEOUT_S:g} s: {logs}")


def _stop(cluster: Cluster) -> None:
    """scancel everything and wait for the jobs to end, then each daemon by its pid file (SIGTERM,
    then SIGKILL), then any step daemon of this cluster left behind (its slurmd gone, it waits for
    nobody)."""
    subprocess.run(["scancel", "--user", "root"], env=cluster.env, capture_output=True)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while time.monotonic() < deadline:
        queued = subprocess.run(["squeue", "-h"], env=cluster.env, capture_output=True, text=True)
        if queued.returncode != 0 or not queued.stdout.strip():
            break
        time.sleep(0.5)
    pid_files = [*(cluster.root / f"slurmd-{n.name}.pid" for n in cluster.nodes),
                 cluster.root / "slurmctld.pid", cluster.root / "munged.pid"]
    for pid_file in pid_files:
        try:
            pid = int(pid_file.read_text().strip())
        except (OSError, ValueError):
            continue
        _terminate(pid)
    for pid in _step_daemons(cluster.env["SLURM_CONF"]):
        _terminate(pid)


def _step_daemons(conf: str) -> list[int]:
    """The slurmstepd processes started under this cluster's configuration."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if not entry.name.isdigit() or (entry / "comm").read_text().strip() != "slurmstepd":
                continue
            if f"SLURM_CONF={conf}".encode() in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


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
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
