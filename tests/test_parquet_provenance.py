"""Every Parquet file of summary/ says, read by pyarrow alone, where it came from (squall's
version, the scenario's hash, the run's description, title and note) and each column's unit
(analysis/results/provenance.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from analysis.results.provenance import column_unit, squall_version
from test_analysis_report import USER_META, build_user_run
from testbed.cli import main as squall


@pytest.fixture(scope="module")
def summary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = build_user_run(tmp_path_factory.mktemp("provenance") / "umts-mix-20261122T030000Z")
    assert squall(["analyze", str(root), "--jobs", "1"]) == 0
    return root / "summary"


def test_every_parquet_file_says_where_it_came_from(summary: Path) -> None:
    description = json.loads((summary.parent / "expanded.json").read_text())["description"]
    files = sorted(summary.glob("*.parquet"))
    assert {f.stem for f in files} >= {"connections", "runs", "cells", "throughput", "delays",
                                         "tcpinfo", "kernel"}
    for path in files:
        meta = {k.decode(): v.decode() for k, v in pq.read_schema(path).metadata.items()}
        assert meta["squall_version"] == squall_version(), path
        assert meta["scenario_sha256"] == USER_META["scenario_sha256"], path
        assert meta["run_squall_revision"] == "0123abc" and meta["scenario"] == "umts-mix"
        assert meta["description"] == description
        assert (meta["title"], meta["note"]) == (USER_META["title"], USER_META["note"])
        for field in pq.read_schema(path):
            assert field.metadata and b"unit" in field.metadata, (path.name, field.name)


def _units(path: Path) -> dict[str, str]:
    return {f.name: f.metadata[b"unit"].decode() for f in pq.read_schema(path)}


def test_each_column_has_its_unit(summary: Path) -> None:
    runs = _units(summary / "runs.parquet")
    assert runs["voice.loss_pct"] == "%" and runs["voice.jitter_mean_ms"] == "ms"
    assert runs["cell"] == "" and runs["replication"] == "1"
    assert any(u == "s" for c, u in runs.items() if c.endswith(".elapsed_s"))
    assert any(u == "B/s" for c, u in runs.items() if c.endswith("throughput_Bps"))
    delays = _units(summary / "delays.parquet")
    assert delays["t_s"] == "s" and delays["delay_ms"] == "ms" and delays["ip_len"] == "B"
    assert _units(summary / "throughput.parquet")["kbit_per_s"] == "kbit/s"
    cells = _units(summary / "cells.parquet")
    assert cells["median"] == "of metric" and cells["n"] == "1" and cells["metric"] == ""
    # the delays table keeps the metadata pandas writes, so it reads back typed
    assert b"pandas" in pq.read_schema(summary / "delays.parquet").metadata


def test_unit_rules() -> None:
    assert column_unit("tcp1.response_throughput_Bps", True) == "B/s"
    assert column_unit("cwnd", True) == "segments" and column_unit("bytes_acked", True) == "B"
    assert column_unit("run.tcp_bytes", True) == "B" and column_unit("duration_s", True) == "s"
    assert column_unit("host.fixed.timeouts.kernel", True) == "1"
    assert column_unit("status", False) == ""
