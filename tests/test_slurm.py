"""Slurm as the engine (docs/cluster.md), with the real daemons on a single-node cluster:
every replication of the demo scenario through --slurm, a CBI chain kept in order on one
lane, a run cancelled mid-way with scancel and resumed to completion, and nothing left.

Lanes $SQUALL_SLURM_LANE_BASE (default 84) … +3; the node offers two CPUs, one per task, and
each task of the demo run takes a spare lane (--prepare-ahead).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import leftovers, require_programs
from support_run import lenient_copy, lenient_text
from bench.slurm_cluster import Cluster, missing_programs, single_node_cluster

pytestmark = pytest.mark.netns
LANE_BASE = int(os.environ.get("SQUALL_SLURM_LANE_BASE", "84"))
LANES = 2
REPO = Path(__file__).resolve().parent.parent

CHAIN = """
name = "chain"
seed = 11
replications = 3
timeout = "60s"
link = "e0"

[flows.bulk]
kind = "bulk"
count = 12
length = "2096B"

[matrix]
tcp = ["baseline", "cbi-frto"]
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory):
    if os.geteuid() != 0:
        pytest.skip("needs root: network namespaces, TUN devices, Slurm daemons")
    missing = missing_programs()
    if missing:
        pytest.skip(f"Slurm is not installed here ({', '.join(missing)} missing; scripts/install-deps installs it)")
    require_programs("squall-emulator", "squall-npa", "squall-http", "squall-bulk")
    with single_node_cluster(tmp_path_factory.mktemp("slurm"), cpus=LANES) as c:
        yield c


def squall(cluster: Cluster, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "testbed.cli", *args], cwd=REPO, env=cluster.env,
                          capture_output=True, text=True, timeout=timeout)


def submit(cluster: Cluster, scenario: Path, results: Path, *extra: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    proc = squall(cluster, "run", str(scenario), "--slurm", "--lanes-per-node", str(LANES),
                  "--lane-base", str(LANE_BASE), "--results", str(results), *extra)
    runs = sorted(results.glob("*-*"))
    assert runs, proc.stderr
    return proc, runs[-1]


def statuses(run: Path) -> dict[tuple[str, int], dict]:
    return {(p.parent.parent.name, int(p.parent.name[4:])): json.loads(p.read_text())
            for p in run.glob("cells/*/rep-*/status.json")}


def task_outputs(run: Path) -> str:
    return "\n".join(f"--- {p.name}\n{p.read_text()[-1500:]}" for p in sorted(run.glob("slurm/*/*.out")))


def no_leftovers(within_s: float = 30.0) -> None:
    """No namespace of the lanes (their processes went with them) and no worker still running,
    within `within_s`: a cancelled task's worker tears its lane down after Slurm has let go of
    the job (its step ends before the worker's own cleanup does)."""
    deadline = time.monotonic() + within_s
    while True:
        left = [item for lane in range(LANE_BASE, LANE_BASE + 2 * LANES) for item in leftovers(lane, set())]
        workers = subprocess.run(["pgrep", "-f", "testbed.cli worker"], capture_output=True, text=True).stdout
        if (not left and not workers.strip()) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert not left, left
    assert not workers.strip(), f"squall workers still running: {workers}"


def test_the_demo_runs_through_slurm_every_replication_ok_and_analysed(cluster: Cluster, tmp_path: Path) -> None:
    demo = lenient_copy(REPO / "scenarios" / "demo.toml", tmp_path / "scenario")
    proc, run = submit(cluster, demo, tmp_path / "results", "--replications", "1", "--units-per-task", "3",
                       "--prepare-ahead", "--wait")     # 8 units: array tasks of 3, 3 and 2
    assert proc.returncode == 0, proc.stderr + task_outputs(run)
    found = statuses(run)
    assert len(found) == 8 and all(s["status"] == "ok" for s in found.values()), task_outputs(run)
    for status in found.values():
        prov = status["details"]["provenance"]
        assert prov["lane"] in range(LANE_BASE, LANE_BASE + 2 * LANES)     # a spare beside each task's lane
        assert prov["host"] and prov["kernel"] and prov["squall_revision"] and prov["tools"]
    # --prepare-ahead: each task set its next unit up on its spare lane, one unit in its flows at a time
    assert all("slot_wait_s" in s["details"]["timings"] for s in found.values()), task_outputs(run)
    assert len({s["details"]["provenance"]["lane"] for s in found.values()}) > LANES, task_outputs(run)
    assert (run / "summary" / "report.md").is_file(), "the afterany analysis job did not run"
    shown = squall(cluster, "status", str(run))
    assert shown.returncode == 0 and "slurm submission 1" in shown.stdout, shown.stdout + shown.stderr
    no_leftovers()


def test_cbi_chain_in_order_and_a_cancelled_run_resumes_to_completion(cluster: Cluster, tmp_path: Path) -> None:
    scenario = tmp_path / "chain.toml"
    scenario.write_text(lenient_text(CHAIN))     # not about timing
    proc, run = submit(cluster, scenario, tmp_path / "results", "--no-analysis")
    assert proc.returncode == 0, proc.stderr
    assert "no analysis job (--no-analysis)" in proc.stderr
    deadline = time.monotonic() + 120
    while not any(s["status"] == "ok" for s in statuses(run).values()):
        assert time.monotonic() < deadline, "no replication finished within 120 s:\n" + task_outputs(run)
        time.sleep(0.5)
    cluster.run("scancel", "--user", "root")
    _wait_no_jobs(cluster)
    no_leftovers()
    before = statuses(run)
    assert len(before) < 6 or any(s["status"] != "ok" for s in before.values()), "cancelled too late to test"
    interrupted = [s for s in before.values() if s["status"] != "ok"]
    assert all("interrupted by SIGTERM" in s["reason"] for s in interrupted), interrupted

    resumed = squall(cluster, "run", "--resume", str(run), "--slurm", "--lanes-per-node", str(LANES),
                     "--lane-base", str(LANE_BASE), "--wait", "--no-analysis")
    assert resumed.returncode == 0, resumed.stderr + task_outputs(run)
    after = statuses(run)
    assert len(after) == 6 and all(s["status"] == "ok" for s in after.values()), task_outputs(run)
    for key, status in before.items():        # a completed replication is never redone
        if status["status"] == "ok":
            assert after[key]["started_utc"] == status["started_utc"]
    (cbi,) = {cell for cell, _ in after if "cbi" in cell}
    for rep in (2, 3):      # a successor that kept the metrics ran after its predecessor, on its lane
        this, previous = after[(cbi, rep)], after[(cbi, rep - 1)]
        if not this["details"]["fresh_lane"]:
            assert this["details"]["provenance"]["lane"] == previous["details"]["provenance"]["lane"]
            assert this["started_utc"] >= previous["started_utc"]
    assert not all(after[(cbi, rep)]["details"]["fresh_lane"] for rep in (1, 2, 3)), "no CBI chain ran"
    no_leftovers()


def _wait_no_jobs(cluster: Cluster) -> None:
    deadline = time.monotonic() + 90
    while cluster.run("squeue", "-h").strip():
        assert time.monotonic() < deadline, "cancelled jobs did not end within 90 s"
        time.sleep(0.5)
