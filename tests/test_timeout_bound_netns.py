"""A replication ends within its timeout plus the bound `squall show` prints (docs/runner.md,
"One replication", step 8): a link whose worst case is a minute (`delay = "30s"`) with a 5 s
timeout is warned of before anything is created, and its replication, `timeout`, is over
after the timeout, the drain's 30 s at most and the stopping — it took 68.6 s before, the
drain waiting for the link's whole worst case.

Lane $SQUALL_TEST_LANE_BASE + 3 (default 23)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import lane_base, require_programs
from support_run import LENIENT_CPU_WAIT, LENIENT_TIMING, run_squall
from testbed.run import drain_bound
from testbed.scenario import loader

pytestmark = pytest.mark.netns
LANE = lane_base() + 3
SCENARIO = f"""
name = "slow-link"
seed = 6
replications = 1
timeout = "5s"
timing_tolerance = "{LENIENT_TIMING}"
cpu_wait_tolerance = {LENIENT_CPU_WAIT}

[link]
bandwidth = "64kbit"
delay = "30s"
mtu = "576B"

[flows.web]
kind = "http"
workload = "s+2s"
"""


def test_a_link_the_drain_cannot_wait_for_ends_within_the_bound(tmp_path: Path) -> None:
    require_programs("squall-emulator", "squall-npa", "squall-http")
    path = tmp_path / "slow.toml"
    path.write_text(SCENARIO)
    (cell,) = loader.load(path).cells
    bound_s = 5 + drain_bound.cell_after_timeout_s(cell)
    code, _, err = run_squall(path, tmp_path / "results", LANE)
    assert "warning" in err and ": link: a packet and its acknowledgement can take 62.6 s" in err
    (status_path,) = (tmp_path / "results").glob("*/cells/*/rep-01/status.json")
    status = json.loads(status_path.read_text())
    assert code == 1 and status["status"] == "timeout", status["reason"]
    timings = status["details"]["timings"]
    # from t = 0: the flows until the timeout, the drain capped at DRAIN_LIMIT_S, the stopping
    after_t0 = timings["flows_s"] + timings["drain_s"] + timings["stop_s"]
    assert timings["flows_s"] < 5.5 and timings["drain_s"] <= drain_bound.DRAIN_LIMIT_S + drain_bound.STOPPING_S
    assert after_t0 <= bound_s, (timings, bound_s)
    assert status["details"]["drain"]["ended_by"] == "longest"
    assert status["details"]["drain"]["longest_s"] == drain_bound.DRAIN_LIMIT_S
