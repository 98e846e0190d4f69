"""A UDP receiver that ends early with exit 0 (SIGTERM from outside, 2 s into a 6 s stream:
it prints its summary, ok) must not leave the replication ok: the receiving host's kernel
answers the rest of the stream with ICMP port unreachable, which its capture shows
(testbed/run/unreachable.py). Before, `FlowBase.problem` saw exit 0 and an ok summary.

Lane $SQUALL_TEST_LANE_BASE + 3 (default 23)."""
from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from conftest import lane_base, require_programs
from support_run import LENIENT_CPU_WAIT, LENIENT_TIMING, run_squall
from testbed.addresses import namespaces

pytestmark = pytest.mark.netns
LANE = lane_base() + 3
SCENARIO = f"""
name = "early-end"
seed = 29
replications = 1
timeout = "30s"
timing_tolerance = "{LENIENT_TIMING}"
cpu_wait_tolerance = {LENIENT_CPU_WAIT}

[link]
bandwidth = "1Mbit"
delay = "10ms"
mtu = "1500B"

[flows.voice]
kind = "udp"
size = "132B"
rate = "64kbit"
duration = "6s"
"""


def receiver_pid(namespace: str) -> int | None:
    """The squall-udp receiver running in the namespace (started by this test's run)."""
    listing = os.popen(f"ip netns pids {namespace}").read().split()
    for pid in listing:
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"squall-udp") and b"recv" in argv:
            return int(pid)
    return None


def kill_receiver_early(namespace: str, killed: list[int], stop: threading.Event) -> None:
    """SIGTERM to the receiver 2 s after it appears (the sender starts at t = 0, soon after)."""
    while not stop.is_set():
        pid = receiver_pid(namespace)
        if pid is not None:
            time.sleep(2.0)
            os.kill(pid, signal.SIGTERM)
            killed.append(pid)
            return
        time.sleep(0.05)


def test_a_receiver_killed_mid_stream_fails_its_replication(tmp_path: Path) -> None:
    require_programs("squall-emulator", "squall-npa", "squall-udp")
    path = tmp_path / "early.toml"
    path.write_text(SCENARIO)
    killed: list[int] = []
    stop = threading.Event()
    killer = threading.Thread(target=kill_receiver_early,
                              args=(namespaces(LANE).mobile, killed, stop), daemon=True)
    killer.start()
    try:
        code, _, err = run_squall(path, tmp_path / "results", LANE)
    finally:
        stop.set()
        killer.join(5)
    assert killed, err
    (status_path,) = (tmp_path / "results").glob("*/cells/*/rep-01/status.json")
    status = json.loads(status_path.read_text())
    workloads = json.loads((status_path.parent / "workloads.json").read_text())
    receiver = workloads["voice"]["receiver"]
    assert (receiver["exit_code"], receiver["summary"]["ok"]) == (0, True)   # it says all is well
    assert code == 1 and status["status"] == "failed", status["reason"]
    assert "the mobile host answered" in status["reason"] and "to port 6001 with ICMP port unreachable" \
        in status["reason"]
    assert status["details"]["captures"]["mobile"]["unreachable"]["port_unreachable"] > 0
