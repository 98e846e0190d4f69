"""The runner without lanes: which replications run where, the progress line, the end table."""
from __future__ import annotations

import io
from pathlib import Path

import pytest

from testbed import scenario
from testbed.errors import ConfigError
from testbed.progress import Progress
from testbed.results import RunDir, Status
from testbed.runner import flow_medians, plan, select_cells

SCENARIO = """
seed = 3
replications = 3
link = "e0"
[flows.web]
kind = "http"
workload = "s+2s"
[matrix]
tcp = ["baseline", "cbi"]
"""


@pytest.fixture
def loaded(tmp_path: Path) -> tuple[scenario.Scenario, RunDir]:
    import testbed.runner  # noqa: F401  registers the sections

    path = tmp_path / "plan.toml"
    path.write_text(SCENARIO)
    sc = scenario.load(path)
    return sc, RunDir.create(tmp_path / "results", sc.name, sc.source, {}, {})


def ok(rep: int) -> Status:
    return Status("ok", "", "20260101T000000Z", 1.0, {"replication": rep})


def test_cbi_replications_stay_together_in_order_and_finished_ones_are_skipped(loaded) -> None:
    sc, run_dir = loaded
    work = run_dir.begin("tcp-baseline", 2)
    run_dir.finish("tcp-baseline", 2, work, ok(2))
    units = plan(list(sc.cells), 3, run_dir)
    assert [(u.cell.cell_id, u.replications, u.keep_lane) for u in units] == [
        ("tcp-baseline", (1,), False), ("tcp-baseline", (3,), False), ("tcp-cbi", (1, 2, 3), True)]


def test_cell_glob(loaded) -> None:
    sc, _ = loaded
    assert [c.cell_id for c in select_cells(sc, "*cbi")] == ["tcp-cbi"]
    with pytest.raises(ConfigError, match="--cells: 'tcp-x' matches no cell; the cells are tcp-baseline, tcp-cbi"):
        select_cells(sc, "tcp-x")


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_progress_in_a_pipe_at_most_once_a_second_and_only_on_change() -> None:
    stream, clock = io.StringIO(), Clock()
    progress = Progress("demo", {"a": 2, "b": 2}, parallel=2, stream=stream, clock=clock)
    progress.tick()
    clock.t = 0.5
    progress.record("a", "ok", 10.0)
    progress.tick()                      # within the second: nothing
    clock.t = 1.2
    progress.tick()
    clock.t = 2.5
    progress.tick()                      # nothing changed: nothing
    progress.record("a", "failed", 30.0)
    clock.t = 3.0
    progress.tick()                      # changed, but 1.8 s since the last line ... printed
    assert stream.getvalue().splitlines() == [
        "[demo] cells 0/2, replications 0/4 done, 0 failed, ETA ?",
        "[demo] cells 0/2, replications 1/4 done, 0 failed, ETA 15s",      # 10 s x 3 left / 2 lanes
        "[demo] cells 1/2, replications 2/4 done, 1 failed, ETA 20s",      # 20 s x 2 / 2
    ]


def test_end_table_medians_of_the_generators_summaries() -> None:
    def rep(page_us: int, bulk_us: int, throughput: float) -> dict:
        return {"web": {"kind": "http", "client": {"summary": {"ok": True, "response_time_us": page_us}}},
                "b": {"kind": "bulk", "sender": {"summary": {"bytes": 100_000, "connect_start_us": 0,
                                                             "end_us": bulk_us}}},
                "v": {"kind": "udp", "receiver": {"summary": {"throughput_bps": throughput, "jitter_mean_us": 2000,
                                                              "loss": 0.01}}}}
    text = flow_medians([rep(4_000_000, 10_000_000, 32_000), rep(6_000_000, 20_000_000, 31_000),
                         rep(5_000_000, 16_000_000, 30_000)])
    assert text == ("web: page time 5.00 s; b: elapsed 16.00 s, goodput 50.0 kbit/s; "
                    "v: throughput 31.0 kbit/s, jitter 2.0 ms, loss 1.0 %")
    assert flow_medians([]) == "-"
