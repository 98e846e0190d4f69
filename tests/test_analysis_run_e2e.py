"""A real short run (`squall run` on lane $SQUALL_ANALYSIS_LANE, default 90) analysed end
to end: every flow present, page response times positive and consistent with what the
HTTP client measured on its own clock, the bulk transfer and the UDP stream measured."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest

from conftest import require_programs
from support_run import run_squall, three_flow_scenario
from testbed.cli import main as squall

pytestmark = pytest.mark.netns
LANE = int(os.environ.get("SQUALL_ANALYSIS_LANE", "90"))
SCENARIO = three_flow_scenario("analysis-e2e", 5)


@pytest.fixture(scope="module")
def analysed_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if os.geteuid() != 0:
        pytest.skip("needs root: network namespaces, TUN devices, tc")
    require_programs("squall-emulator", "squall-npa", "squall-http", "squall-bulk",
                     "squall-udp", "squall-queue-monitor")
    tmp = tmp_path_factory.mktemp("e2e")
    scenario = tmp / "analysis-e2e.toml"
    scenario.write_text(SCENARIO)
    code, _, err = run_squall(scenario, tmp / "results", LANE)
    assert code == 0, err
    (root,) = [d for d in (tmp / "results").iterdir() if d.is_dir()]
    assert squall(["report", str(root)]) == 0
    return root


def _csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_every_flow_of_every_replication_is_measured(analysed_run: Path) -> None:
    rows = _csv(analysed_run / "summary" / "connections.csv")
    for rep in ("1", "2"):
        mine = [r for r in rows if r["replication"] == rep]
        by_flow: dict[str, list[dict[str, str]]] = {}
        for r in mine:
            by_flow.setdefault(r["flow"], []).append(r)
        assert sorted(by_flow) == ["bulk1", "voice", "web"]
        assert sorted(r["class"] for r in by_flow["web"]) == ["inline1", "inline2", "main"]
        assert [int(r["bytes"]) for r in by_flow["bulk1"]] == [10 * 2096]
        assert all(r["complete"] == "True" for r in by_flow["web"] + by_flow["bulk1"])
        (voice,) = by_flow["voice"]
        assert int(voice["received"]) > 0 and float(voice["throughput_bytes_per_s"]) > 0


def test_page_times_agree_with_the_client(analysed_run: Path) -> None:
    runs = _csv(analysed_run / "summary" / "runs.csv")
    assert [(r["status"], r["analysed"]) for r in runs] == [("ok", "True")] * 2
    for r in runs:
        rep = analysed_run / "cells" / r["cell"] / f"rep-{int(r['replication']):02d}"
        summary = json.loads((rep / "workloads.json").read_text())["web"]["client"]["summary"]
        page = float(r["web.response_time_s"])
        assert page > 0
        # first SYN -> last server FIN in the client's capture vs the client's own clock
        assert abs(page - summary["response_time_us"] / 1e6) < 0.005
        assert float(r["bulk1.elapsed_s"]) > 0


def test_report_has_a_table_per_flow_and_says_what_was_run(analysed_run: Path) -> None:
    md = (analysed_run / "summary" / "report.md").read_text()
    # a scenario of its own: plain tables, not the studies' layouts
    for title in ("The run", "Parameters of every cell", "Replications per cell",
                  "HTTP flow web: page response time",
                  "Bulk TCP transfers: elapsed time and throughput",
                  "UDP flow voice: throughput, loss, jitter, delay",
                  "Router queue (medians over replications)"):
        assert f"## {title}" in md, title
    assert "HTTP pages" not in md and "Traffic mixture" not in md
    assert "| squall revision |" in md and "| link.down.bandwidth |" in md
    html = (analysed_run / "summary" / "report.html").read_text()
    assert html.count("data:image/png;base64,") >= 4
    for name in ("connections", "runs", "cells", "throughput", "delays"):
        assert (analysed_run / "summary" / f"{name}.parquet").exists()
