"""The report's table of the end-to-end timing error (analysis/report/timing_table.py), from the
status.json files of hand-written replications."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from analysis.report.timing_table import timing_table


def group(p50: float, p99: float, max_us: int, judged: bool = True, min_us: int = 40, over: int = 0) -> dict:
    return {"n": 100, "min_us": min_us, "p50_us": p50, "p99_us": p99, "max_us": max_us,
            "over_tolerance": over, "judged": judged}


def replication(tmp_path: Path, name: str, status: str, egress_mobile: dict | None) -> SimpleNamespace:
    directory = tmp_path / name
    directory.mkdir()
    timing = {"tolerance_us": 1000,
              "ingress": {"fixed": group(150.0, 70_000.0, 75_000, judged=False), "mobile": group(70.0, 200.0, 300)},
              "egress": {"fixed": group(110.0, 250.0, 400), "mobile": egress_mobile or {"n": 0}}}
    (directory / "status.json").write_text(json.dumps({"status": status, "details": {"timing_error": timing}}))
    return SimpleNamespace(ref=SimpleNamespace(directory=directory))


def test_timing_table_per_cell_and_capture_point(tmp_path: Path) -> None:
    reps = [replication(tmp_path, "r1", "ok", group(100.0, 300.0, 500)),
            replication(tmp_path, "r2", "degraded", group(200.0, 2500.0, 6000, min_us=31, over=3)),
            replication(tmp_path, "r3", "ok", group(120.0, 500.0, 700)),
            replication(tmp_path, "r4", "failed", group(9000.0, 9000.0, 9000))]     # not counted
    (tmp_path / "r5").mkdir()                                                     # no status.json
    reps.append(SimpleNamespace(ref=SimpleNamespace(directory=tmp_path / "r5")))
    table = timing_table(SimpleNamespace(cells=[SimpleNamespace(cell="c1", replications=reps)]))
    assert table is not None
    assert table.rows == [
        ["c1", "ingress fixed", "no (tc router)", 150, 70000, 70000, 40, 75000, "0 of 300", "0 of 3"],
        ["c1", "ingress mobile", "yes", 70, 200, 200, 40, 300, "0 of 300", "0 of 3"],
        ["c1", "egress fixed", "yes", 110, 250, 250, 40, 400, "0 of 300", "0 of 3"],
        ["c1", "egress mobile", "yes", 120, 500, 2500, 31, 6000, "3 of 300", "1 of 3"]]
    assert timing_table(SimpleNamespace(cells=[SimpleNamespace(cell="c2", replications=reps[3:])])) is None
