"""`squall calibrate` without root: the numbers of lanes it tries, the load it runs (a valid
scenario), and the table it makes of hand-written status.json files (testbed/run/calibrate.py)."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from testbed.errors import ConfigError
from testbed.run import timing as run_timing
from testbed.run.calibrate import lane_counts, largest_within, load_scenario, print_table, summarize
from testbed.scenario import loader


def test_lane_counts_double_up_to_the_maximum() -> None:
    assert lane_counts(1) == [1]
    assert lane_counts(2) == [1, 2]
    assert lane_counts(6) == [1, 2, 4, 6]
    assert lane_counts(8) == [1, 2, 4, 8]
    with pytest.raises(ConfigError, match="--max-lanes"):
        lane_counts(0)


def test_the_load_is_a_scenario_of_one_replication_per_lane(tmp_path: Path) -> None:
    path = tmp_path / "k.toml"
    path.write_text(load_scenario(4, 2, 4_000_000, 1000))
    sc = loader.load(path)
    assert (sc.name, sc.replications, sc.tolerances.timing_us, len(sc.cells)) == ("calibrate-k4", 8, 1000, 1)
    [cell] = sc.cells
    assert cell.link.name == "e0"
    assert sorted(f.kind for f in cell.flows) == ["bulk", "udp"]


def point(p99: float, max_us: int, judged: bool = True, n: int = 100, min_us: int = 40) -> dict:
    return {"n": n, "min_us": min_us, "p50_us": 80.0, "p99_us": p99, "max_us": max_us, "judged": judged,
            "over_tolerance": 0}


def write_status(run_dir: Path, rep: int, status: str, timing: dict | None) -> None:
    d = run_dir / "cells" / "default" / f"rep-{rep:02d}"
    d.mkdir(parents=True)
    details = {} if timing is None else {"timing_error": timing}
    (d / "status.json").write_text(json.dumps({"status": status, "reason": "", "details": details}))


def timing(ingress_fixed: float, egress_mobile: float, max_us: int, sender_p99: float = 50.0) -> dict:
    t = {"tolerance_us": 1000,
         "ingress": {"fixed": point(ingress_fixed, max_us), "mobile": point(120.0, 300)},
         "egress": {"fixed": point(150.0, 400), "mobile": point(egress_mobile, 900),
                    "unjudged": point(90000.0, 99000, judged=False)},
         "schedules": {"voice": {"n": 100, "min_us": 0, "p50_us": 10.0, "p99_us": sender_p99, "max_us": 900,
                                 "over_tolerance": 0}}}
    t["beyond_tolerance"] = run_timing.beyond_tolerance(t)
    return t


def test_the_worst_p99_per_direction_and_the_largest_k_within(tmp_path: Path) -> None:
    one, two = tmp_path / "k1", tmp_path / "k2"
    write_status(one, 1, "ok", timing(200.0, 350.0, 700))
    write_status(two, 1, "ok", timing(300.0, 900.0, 2500))
    write_status(two, 2, "degraded", timing(1500.0, 400.0, 4000))
    r1, r2 = summarize(one, 1), summarize(two, 2)
    assert (r1.replications, r1.ingress_p99_us, r1.egress_p99_us, r1.max_us, r1.within) == (1, 200.0, 350.0, 900, True)
    assert (r2.replications, r2.ingress_p99_us, r2.egress_p99_us, r2.max_us) == (2, 1500.0, 900.0, 4000)
    assert (r2.beyond_tolerance, r2.within, r2.statuses) == (1, False, {"ok": 1, "degraded": 1})
    assert largest_within([r1, r2]) == 1
    out = io.StringIO()
    print_table([r1, r2], 1000, out)
    lines = out.getvalue().splitlines()
    assert lines[0].split() == ["lanes", "replications", "ingress", "p99", "(us)", "egress", "p99", "(us)", "sender",
                                "p99", "(us)", "max", "(us)", "beyond", "within"]
    assert lines[1].split() == ["1", "1", "200", "350", "50", "900", "0", "yes"]
    assert lines[2].split() == ["2", "2", "1500", "900", "50", "4000", "1", "no"]
    assert lines[3] == "largest number of lanes within 1000 us: 1"


def test_a_sender_behind_its_schedule_is_beyond_as_the_runner_judged(tmp_path: Path) -> None:
    """Link timing within the tolerance, but the UDP sender 1.5 ms behind at its p99: the runner
    degraded the replication, and the calibration counts it beyond, not within."""
    write_status(tmp_path, 1, "degraded", timing(200.0, 350.0, 700, sender_p99=1500.0))
    r = summarize(tmp_path, 1)
    assert (r.sender_p99_us, r.beyond_tolerance, r.within) == (1500.0, 1, False)


def test_a_replication_without_a_timing_error_is_not_within(tmp_path: Path) -> None:
    write_status(tmp_path, 1, "failed", None)
    r = summarize(tmp_path, 1)
    assert (r.replications, r.within, r.ingress_p99_us) == (0, False, None)
    assert largest_within([r]) == 0
    out = io.StringIO()
    print_table([r], 1000, out)
    assert "even 1 lane is beyond 1000 us" in out.getvalue()
