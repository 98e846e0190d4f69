"""Lane claims and the cross-file-system move of a finished replication: what keeps cluster
workers beside each other safe (docs/cluster.md). No namespaces needed."""
from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

import pytest

from testbed.lanes import claim
from testbed.lanes.lane import LaneBusy
from testbed.run.results import RunDir, Status

LANE = 126

HOLDER = """
import sys, time
from testbed.lanes import claim
held = claim.try_claim(int(sys.argv[1]))
print("held" if held else "busy", flush=True)
time.sleep(float(sys.argv[2]))
"""


def other_process(lane: int, hold_s: float = 0.0) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", HOLDER, str(lane), str(hold_s)], stdout=subprocess.PIPE, text=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="lane locks live in /run/squall (root)")
def test_a_claimed_lane_is_refused_to_another_process_until_released() -> None:
    with claim.claim(LANE):
        other = other_process(LANE)
        assert other.stdout.readline().strip() == "busy"
        other.wait()
        with pytest.raises(LaneBusy, match=f"lane {LANE}"):
            claim.claim(LANE)      # flock locks belong to the descriptor: this process's second one waits too
    again = other_process(LANE)
    assert again.stdout.readline().strip() == "held"
    again.wait()


@pytest.mark.skipif(os.geteuid() != 0, reason="lane locks live in /run/squall (root)")
def test_a_dead_holder_frees_its_lane() -> None:
    holder = other_process(LANE, hold_s=30)
    try:
        assert holder.stdout.readline().strip() == "held"
        assert claim.try_claim(LANE) is None
        holder.kill()
        holder.wait()
        held = claim.try_claim(LANE)            # the kernel dropped the dead one's lock
        assert held is not None and held.number == LANE
        held.release()
    finally:
        holder.kill()
        holder.wait()


def test_a_replication_worked_on_another_file_system_arrives_whole(tmp_path: Path) -> None:
    shm = Path("/dev/shm")
    if not shm.is_dir() or os.stat(shm).st_dev == os.stat(tmp_path).st_dev:
        pytest.skip("needs /dev/shm on a file system of its own")
    run = RunDir.create(tmp_path / "results", "x", "seed = 1\n", {"cells": []}, {})
    local = shm / f"squall-test-{os.getpid()}"
    try:
        work = run.begin("cell", 1, work_root=local)
        assert work.is_relative_to(local)
        (work / "emulator.log").write_text("log\n")
        final = run.finish("cell", 1, work, Status("ok", "", "20260101T000000Z", 1.0, {}))
        assert gzip.decompress((final / "emulator.log.gz").read_bytes()) == b"log\n"
        assert (final / "status.json").is_file()
        assert not work.exists(), "the node-local copy stays behind"
        assert [p.name for p in final.parent.iterdir()] == ["rep-01"], "a hidden incoming copy stays behind"
        assert [(c, r, s.status) for c, r, s in run.statuses()] == [("cell", 1, "ok")]
    finally:
        subprocess.run(["rm", "-rf", str(local)])
