"""A cluster of TWO Slurm nodes on this one machine (bench/slurm_cluster.namespaced_cluster: two
slurmd, each in its own network and UTS namespace with its own node name, spool, pid and log
files): lanes as a generic resource, a different number per node (node1 Gres=lane:2 on lanes
B, B+1; node2 Gres=lane:1 on lane B+2, its Features=lanes_B+2), the demo scenario across both,
a task killed on one node (SIGKILL: a crash, outside any replication) and what `squall status`
then says of it also after Slurm has forgotten the job, a resume with nothing but --slurm that
submits with the run's own settings, and nothing left behind.

Lanes $SQUALL_SLURM_LANE_BASE (default 84) … +2.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from bench.slurm_cluster import Cluster, Node, missing_programs, namespaced_cluster
from conftest import leftovers, require_programs
from support_run import lenient_copy

pytestmark = pytest.mark.netns
LANE_BASE = int(os.environ.get("SQUALL_SLURM_LANE_BASE", "84"))
NODES = [Node("node1", 2, LANE_BASE), Node("node2", 1, LANE_BASE + 2)]
NODE_LANES = {"node1": range(LANE_BASE, LANE_BASE + 2), "node2": range(LANE_BASE + 2, LANE_BASE + 3)}
REPO = Path(__file__).resolve().parent.parent
MIN_JOB_AGE_S = 10       # Slurm forgets an ended job this soon (its default: 300 s)


@pytest.fixture()
def cluster(tmp_path: Path):
    if os.geteuid() != 0:
        pytest.skip("needs root: network namespaces, TUN devices, Slurm daemons")
    missing = missing_programs()
    if missing:
        pytest.skip(f"Slurm is not installed here ({', '.join(missing)} missing; scripts/install-deps installs it)")
    require_programs("squall-emulator", "squall-npa", "squall-http")
    # the workers' node-local work space: a short path (the link's control sockets live there)
    scratch = Path(tempfile.mkdtemp(prefix=f"sqs{LANE_BASE}-"))
    try:
        with namespaced_cluster(tmp_path / "slurm", NODES, LANE_BASE, (f"MinJobAge={MIN_JOB_AGE_S}",)) as c:
            c.env["TMPDIR"] = str(scratch)
            yield c
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for lane in range(LANE_BASE, LANE_BASE + 3):
        assert not leftovers(lane, set()), leftovers(lane, set())
    assert not any(ns.startswith(f"sqslurm{LANE_BASE}-") for ns in _namespaces())


def _namespaces() -> list[str]:
    return subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()


def squall(cluster: Cluster, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "testbed.cli", *args], cwd=REPO, env=cluster.env,
                          capture_output=True, text=True, timeout=300)


def statuses(run: Path) -> dict[tuple[str, int], dict]:
    return {(p.parent.parent.name, int(p.parent.name[4:])): json.loads(p.read_text())
            for p in run.glob("cells/*/rep-*/status.json")}


def task_outputs(run: Path) -> str:
    return "\n".join(f"--- {p.name}\n{p.read_text()[-1500:]}" for p in sorted(run.glob("slurm/*/*.out")))


def worker_on(node: str) -> tuple[int, str] | None:
    """A squall worker running in the node's network namespace that has begun a unit: its pid
    and array task (SLURM_ARRAY_JOB_ID_SLURM_ARRAY_TASK_ID)."""
    inode = os.stat(f"/run/netns/sqslurm{LANE_BASE}-{node}").st_ino
    for entry in Path("/proc").iterdir():
        try:
            if not entry.name.isdigit() or b"testbed.cli\0worker" not in (entry / "cmdline").read_bytes():
                continue
            if os.stat(entry / "ns" / "net").st_ino != inode:
                continue
            env = dict(v.split("=", 1) for v in (entry / "environ").read_text().split("\0") if "=" in v)
        except OSError:
            continue
        return int(entry.name), f"{env['SLURM_ARRAY_JOB_ID']}_{env['SLURM_ARRAY_TASK_ID']}"
    return None


def wait_for(what: str, probe, timeout: float, run: Path):
    deadline = time.monotonic() + timeout
    while True:
        found = probe()
        if found:
            return found
        assert time.monotonic() < deadline, f"{what} within {timeout:g} s:\n{task_outputs(run)}"
        time.sleep(0.3)


def test_the_demo_across_two_nodes_a_task_killed_on_one_and_resumed(cluster: Cluster, tmp_path: Path) -> None:
    demo = lenient_copy(REPO / "scenarios" / "demo.toml", tmp_path / "scenario")
    results = tmp_path / "results"
    proc = squall(cluster, "run", str(demo), "--slurm", "--lane-base", str(LANE_BASE), "--results", str(results),
                  "--replications", "1", "--no-analysis", "--sbatch-arg=--comment=two-nodes")
    (run,) = results.glob("demo-*")
    assert proc.returncode == 0 and "(a lane each, --gres=lane:1)" in proc.stderr, proc.stderr

    # node2 runs a unit: its worker is killed outright, lanes and all
    pid, killed = wait_for("no worker started on node2", lambda: worker_on("node2"), 90, run)
    wait_for("node2's worker began no unit", lambda: " on lane " in task_outputs(run), 30, run)
    os.kill(pid, signal.SIGKILL)
    wait_for("the jobs did not end", lambda: not cluster.run("squeue", "-h").strip(), 150, run)

    shown = json.loads(squall(cluster, "status", str(run), "--json").stdout)
    (sub,) = shown["slurm"]
    task = next(t for t in sub["tasks"] if t["task"] == killed)
    assert (task["state"], task.get("node"), task.get("exit_code")) == ("FAILED", "node2", "137:0"), task
    assert task["output"].endswith("Killed"), task        # its last line: the shell saw the worker killed
    before = statuses(run)
    assert len(before) < 8 and all(s["status"] == "ok" for s in before.values()), task_outputs(run)

    # Slurm forgets the ended jobs (MinJobAge), the run directory does not
    array = sub["arrays"][0]["job_id"]
    wait_for("Slurm kept the job", lambda: subprocess.run(["scontrol", "show", "job", array], env=cluster.env,
                                                          capture_output=True).returncode != 0, 60, run)
    text = squall(cluster, "status", str(run)).stdout
    assert f"  task {killed} (" in text and "FAILED on node2 exit 137:0" in text, text

    resumed = squall(cluster, "run", "--resume", str(run), "--slurm", "--wait")
    assert resumed.returncode == 0, resumed.stderr + task_outputs(run)
    assert f"resuming with the run's own Slurm settings (submission 1): --lane-base {LANE_BASE}" in resumed.stderr
    assert "--no-analysis" in resumed.stderr and "--sbatch-arg=--comment=two-nodes" in resumed.stderr
    after = statuses(run)
    assert len(after) == 8 and all(s["status"] == "ok" for s in after.values()), task_outputs(run)
    for key, status in before.items():        # what was ok is never redone
        assert after[key]["started_utc"] == status["started_utc"]
    nodes = set()
    for status in after.values():
        prov = status["details"]["provenance"]
        nodes.add(prov["slurm_node"])
        assert prov["lane"] in NODE_LANES[prov["slurm_node"]], prov      # each node on its own lanes
        assert prov["slurm_job_id"] and prov["slurm_array_job_id"] and prov["slurm_array_task_id"], prov
    assert nodes == {"node1", "node2"}, "the demo did not run across both nodes"
    final = json.loads(squall(cluster, "status", str(run), "--json").stdout)
    assert final["complete"] and [s["submission"] for s in final["slurm"]] == [1, 2]
    assert all(t["state"] == "COMPLETED" for t in final["slurm"][1]["tasks"]), final["slurm"][1]
    assert not (run / "summary").exists()       # --no-analysis was kept on resume
