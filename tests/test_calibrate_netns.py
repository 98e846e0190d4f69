"""`squall calibrate` on real lanes: 1 and 2 lanes of a short standard load; the JSON has a row per
number of lanes with the replications' timing error, K = 1 among them, and the largest K within
the tolerance. Lanes $SQUALL_TEST_LANE_BASE + 2 and + 3 (default 22, 23)."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from conftest import lane_base, require_programs
from test_runner import PROGRAMS, assert_nothing_left
from testbed.run.calibrate import CalibrateOptions, calibrate_command

pytestmark = pytest.mark.netns
LANE = lane_base() + 2


def test_calibrate_reports_the_timing_error_per_number_of_lanes(tmp_path: Path) -> None:
    require_programs(*PROGRAMS)
    out, err = io.StringIO(), io.StringIO()
    options = CalibrateOptions(max_lanes=2, lane_base=LANE, tolerance_us=1000, duration_us=1_000_000,
                               results=tmp_path, json=True)
    code = calibrate_command(options, out, err)
    doc = json.loads(out.getvalue())
    assert code == 0, err.getvalue()
    assert (doc["tolerance_us"], doc["duration_us"]) == (1000, 1_000_000)
    assert [r["lanes"] for r in doc["lanes"]] == [1, 2]
    for r in doc["lanes"]:
        assert r["replications"] == r["lanes"], r
        assert r["ingress_p99_us"] > 0 and r["egress_p99_us"] > 0 and r["max_us"] > 0
        assert r["within"] == (r["beyond_tolerance"] == 0)
        assert Path(r["run_dir"]).is_dir()
    assert doc["largest_within"] in (0, 1, 2)
    assert doc["largest_within"] == 0 or doc["lanes"][0]["within"]
    assert_nothing_left(range(LANE, LANE + 2), str(tmp_path))
