"""Faults during `squall run` on real lanes: a program of a replication killed (the router-side
NPA, a traffic generator on either host, the HTTP client, the queue monitor, a TCP sampler), the
runner itself killed with SIGKILL, and a results
disk that fills up. Each time the replication is recorded with a reason naming what failed, the
matrix goes on, `--resume` completes the run, completed replications do not change and nothing
is left behind (namespaces, processes, owner records).

Lanes $SQUALL_FAULTS_LANE_BASE (default 78) … +2.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import require_programs
from support_run import three_flow_scenario, run_squall
from test_runner import (PROGRAMS, REPO, assert_nothing_left, net_namespace, only_run_dir, processes,
                         status)
from testbed.addresses import namespaces

pytestmark = pytest.mark.netns
BASE = int(os.environ.get("SQUALL_FAULTS_LANE_BASE", "78"))


def write_scenario(tmp_path: Path, replications: int, udp: str = "3s") -> Path:
    path = tmp_path / "faults.toml"
    text = three_flow_scenario("faults", 13, udp).replace("replications = 2", f"replications = {replications}")
    path.write_text(text)
    return path


# victim: (host of the lane whose namespace it runs in, a test of its command line)
VICTIMS: dict[str, tuple[str, Callable[[str], bool]]] = {
    "npa-router": ("emu", lambda cmd: "squall-npa" in cmd and "--role router" in cmd),
    "udp sender": ("fixed", lambda cmd: "squall-udp" in cmd and " send" in cmd),
    "udp receiver": ("mobile", lambda cmd: "squall-udp" in cmd and " recv" in cmd),
    "http client": ("mobile", lambda cmd: "squall-http" in cmd),
    "bulk sender": ("fixed", lambda cmd: "squall-bulk" in cmd and " send" in cmd),
    "queue monitor": ("emu", lambda cmd: "squall-queue-monitor" in cmd),
    "tcp sampler": ("fixed", lambda cmd: "squall-tcp-sampler" in cmd),
}
# Short-lived programs (the page, the bulk transfer) are killed when first seen, the others
# half a second into the voice stream.
AT_ONCE = {"http client", "bulk sender"}


def kill_in_replication(results: Path, rep: str, victim: str, lane: int, stop: threading.Event,
                        killed: list[str]) -> None:
    """SIGKILLs one program of replication `rep` (on `lane`) once its flows run (the voice
    stream runs 3 s); adds the victim to `killed`."""
    host, is_victim = VICTIMS[victim]
    while not stop.is_set():
        partial = next(results.glob(f"*/cells/*/{rep}.partial"), None)
        if partial and (partial / "voice.sender.stdout").exists():
            if victim not in AT_ONCE:
                time.sleep(0.5)
            inode = os.stat(f"/run/netns/{getattr(namespaces(lane), host)}").st_ino
            for pid, cmd in processes():
                if net_namespace(pid) == inode and is_victim(cmd):
                    os.kill(pid, signal.SIGKILL)
                    killed.append(victim)
                    return
        time.sleep(0.01 if victim in AT_ONCE else 0.05)


def run_killing(scenario: Path, results: Path, lane: int, plan: dict[str, str]) -> tuple[int, str, list[str]]:
    """`squall run` with one killer per (replication, victim) of `plan`: exit code, stderr, the
    victims killed."""
    stop, killed = threading.Event(), []
    killers = [threading.Thread(target=kill_in_replication, args=(results, rep, victim, lane, stop, killed))
               for rep, victim in plan.items()]
    for k in killers:
        k.start()
    try:
        code, _, err = run_squall(scenario, results, lane)
    finally:
        stop.set()
        for k in killers:
            k.join()
    return code, err, killed


# replication -> (victim, words of its reason); the replication after them must stay ok
KILLS = [
    pytest.param({"rep-01": ("npa-router", ["npa-router exited with code -9"]),
                  "rep-02": ("udp sender", ["flow voice: the sender (squall-udp) exited with code -9"]),
                  "rep-03": ("udp receiver", ["flow voice: the receiver (squall-udp) exited with code -9"])},
                 "1Mbit", id="link-and-udp"),
    # a slower link, so that the page and the bulk transfer last long enough to be killed
    pytest.param({"rep-01": ("http client", ["flow web: the client (squall-http) exited with code -9"]),
                  "rep-02": ("bulk sender", ["flow bulk1: the sender (squall-bulk) exited with code -9"]),
                  "rep-03": ("queue monitor", ["squall-queue-monitor in namespace", "exited -9"]),
                  "rep-04": ("tcp sampler", ["the TCP sampler at the fixed host (squall-tcp-sampler) ended "
                                             "(killed by SIGKILL), not by squall's stop"])},
                 "256kbit", id="clients-and-instruments"),
]


@pytest.mark.parametrize("kills,bandwidth", KILLS)
def test_a_killed_program_is_named_the_matrix_goes_on_and_resume_completes(
        tmp_path: Path, kills: dict[str, tuple[str, list[str]]], bandwidth: str) -> None:
    require_programs(*PROGRAMS)
    results = tmp_path / "results"
    results.mkdir()
    lane = BASE
    last = f"rep-{len(kills) + 1:02d}"
    scenario = write_scenario(tmp_path, replications=len(kills) + 1)
    scenario.write_text(scenario.read_text().replace('bandwidth = "1Mbit"', f'bandwidth = "{bandwidth}"'))
    code, err, killed = run_killing(scenario, results, lane, {rep: victim for rep, (victim, _) in kills.items()})
    assert code == 1, err
    assert sorted(killed) == sorted(victim for victim, _ in kills.values())
    root = only_run_dir(results)
    cell = next(root.glob("cells/*/"))
    reasons = {rep: status(cell / rep) for rep in kills}
    print({rep: (s["status"], s["reason"]) for rep, s in reasons.items()})
    assert all(s["status"] == "failed" for s in reasons.values()), reasons
    for rep, (_, words) in kills.items():
        for w in words:
            assert w in reasons[rep]["reason"], (rep, reasons[rep]["reason"])
    assert status(cell / last)["status"] == "ok"      # the matrix went on
    done_before = (cell / last / "status.json").read_bytes()
    assert_nothing_left(range(lane, lane + 1), str(tmp_path))

    code, _, err = run_squall(None, results, lane, resume=root)
    assert code == 0, err
    assert [status(cell / f"rep-{r:02d}")["status"] for r in range(1, len(kills) + 2)] == ["ok"] * (len(kills) + 1)
    assert (cell / last / "status.json").read_bytes() == done_before
    assert sorted(p.name for p in (cell / "attempts").iterdir()) == [f"{rep}-1" for rep in sorted(kills)]
    assert_nothing_left(range(lane, lane + 1), str(tmp_path))


def test_a_runner_killed_with_sigkill_leaves_what_the_next_run_cleans_and_resume_completes(
        tmp_path: Path) -> None:
    """SIGKILL gives the runner no chance to tidy up: its lane, the link's programs and the
    half-made replication stay. The resumed run removes the dead run's lane, keeps the
    half-made replication as an attempt and leaves the completed one as it was."""
    require_programs(*PROGRAMS)
    results = tmp_path / "results"
    lane = BASE + 1
    proc = subprocess.Popen([sys.executable, "-m", "testbed.cli", "run", str(write_scenario(tmp_path, 2)),
                             "--results", str(results), "--lane-base", str(lane)],
                            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 90
        while not list(results.glob("*/cells/*/rep-02.partial/voice.sender.stdout")):
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
        time.sleep(0.5)
        proc.kill()
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    root = only_run_dir(results)
    cell = next(root.glob("cells/*/"))
    done_before = (cell / "rep-01" / "status.json").read_bytes()
    assert any(cmd for _, cmd in processes() if str(root) in cmd), "the link's programs outlive the runner"

    code, _, err = run_squall(None, results, lane, resume=root)
    assert code == 0, err
    assert [status(cell / rep)["status"] for rep in ("rep-01", "rep-02")] == ["ok", "ok"]
    assert (cell / "rep-01" / "status.json").read_bytes() == done_before
    assert [p.name for p in (cell / "attempts").iterdir()] == ["rep-02-1"]
    assert_nothing_left(range(lane, lane + 1), str(tmp_path))


def test_a_full_results_disk_stops_the_run_says_so_and_resume_completes(tmp_path: Path) -> None:
    """The results on an 800 kB tmpfs: the first replication fits, the second fills the disk.
    The replication that hit it is failed with a reason that says the disk is full, the run
    stops (nothing more can be written) and says how to resume; no temporary file is left
    half-written, the lane is gone; with room again, --resume completes the run and the
    completed replication does not change."""
    require_programs(*PROGRAMS)
    results = tmp_path / "results"
    results.mkdir()
    lane = BASE + 2
    # mode 0755: a tmpfs is world-writable (1777) otherwise, which --results refuses
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=800k,mode=0755", "tmpfs", str(results)], check=True)
    try:
        code, _, err = run_squall(write_scenario(tmp_path, 3), results, lane)
        root = only_run_dir(results)
        reasons = {rep.name: status(rep)["reason"] for rep in root.glob("cells/*/rep-0?") if (rep / "status.json").exists()}
        assert code == 1, err
        assert "no space left on the disk of" in err and "squall run --resume" in err, (err, reasons)
        cell = next(root.glob("cells/*/"))
        assert status(cell / "rep-01")["status"] == "ok"
        done_before = (cell / "rep-01" / "status.json").read_bytes()
        full = [status(rep) for rep in cell.glob("rep-0?") if status(rep)["status"] != "ok"]
        assert full and all("no space left on the disk of" in s["reason"] for s in full), full
        assert not list(root.rglob("*.tmp")), "a half-written file is left"
        assert_nothing_left(range(lane, lane + 1), str(tmp_path))

        subprocess.run(["mount", "-o", "remount,size=16m", str(results)], check=True)
        code, _, err = run_squall(None, results, lane, resume=root)
        assert code == 0, err
        assert [status(cell / f"rep-0{r}")["status"] for r in (1, 2, 3)] == ["ok"] * 3
        assert (cell / "rep-01" / "status.json").read_bytes() == done_before
        assert_nothing_left(range(lane, lane + 1), str(tmp_path))
    finally:
        subprocess.run(["umount", "--lazy", str(results)], check=False)
