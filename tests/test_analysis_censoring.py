"""A replication that timed out with a page still loading is a censored result, not a failure
(analysis/censoring.py): the page's time is inf, the unfinished object's throughput 0, and the
replication enters the cell statistics where rank statistics stay exact."""

from __future__ import annotations

import json
import math
from pathlib import Path

from analysis.aggregate import summarize
from analysis.run import analyse_run
from analysis.run_layout import ReplicationRef
from analysis.run_metrics import analyse_run_replication
from analysis.summary import load_analysis, write_summary
from test_analysis_run_support import write_replication

TIMED_OUT = "flows web still running after the timeout of 300 s"


def _analysed(tmp_path: Path, status: str, unfinished: str | None):
    directory = tmp_path / "rep-01"
    write_replication(directory, status, {"large": (1, "drop_err")}, TIMED_OUT, unfinished=unfinished)
    r = analyse_run_replication(ReplicationRef("c", 1, directory, status, TIMED_OUT))
    assert r.analysed, r.error
    return r


def test_a_page_loading_at_the_timeout_is_censored_not_dropped(tmp_path: Path) -> None:
    r = _analysed(tmp_path, "timeout", unfinished="large")
    v = r.values
    assert v["web.response_time_s"] == math.inf
    # the client's own clock agrees: squall-http stopped unfinished says 0, which is no time
    assert v["web.client_response_time_s"] == math.inf
    # the main object finished: its numbers are what they were
    assert math.isfinite(v["web.main.elapsed_s"]) and v["web.main.throughput_Bps"] > 0
    assert v["web.inline_slowest.throughput_Bps"] == 0.0 and v["web.inline_fastest.throughput_Bps"] > 0
    assert v["web.error_drops"] == 1
    assert r.counts


def test_a_finished_page_whose_replication_timed_out_stays_out(tmp_path: Path) -> None:
    """Every connection finished: a program, not the network, ran over."""
    r = _analysed(tmp_path, "timeout", unfinished=None)
    assert all(value != math.inf for value in r.values.values())
    assert not r.counts
    assert any("not the network" in w for w in r.warnings)


def test_the_same_connections_in_an_ok_replication_are_not_censored(tmp_path: Path) -> None:
    """Only the deadline makes an unfinished connection a result: in an ok replication (the
    capture ended early, say) its time stays unknown."""
    r = _analysed(tmp_path, "ok", unfinished="large")
    assert r.values["web.response_time_s"] is None
    assert r.values["web.inline_slowest.throughput_Bps"] is None
    assert r.values["web.client_response_time_s"] is None


def test_rank_statistics_hold_over_a_censored_value() -> None:
    s = summarize([3.0, 1.0, math.inf, 2.0, 4.0])
    assert (s.n, s.failed, s.min, s.median, s.max, s.mean) == (5, 0, 1.0, 3.0, math.inf, math.inf)
    assert s.p75 == 4.0 and s.median_ci_low is not None and math.isfinite(s.median_ci_low)
    # the median of a cell where the censored values reach the middle rank is unbounded
    assert summarize([1.0, 2.0, math.inf, math.inf]).median == math.inf
    assert summarize([1.0, 2.0, 3.0, math.inf]).median == 2.5


def _timed_out_run(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "scenario.toml").write_text('name = "fixture"\nseed = 1\nreplications = 3\nlink = "e0"\n')
    (root / "expanded.json").write_text(json.dumps([{"cell": "c", "axes": {"tcp": "baseline"},
                                                     "flows": {"web": {"workload": "tiny"}}}]))
    (root / "meta.json").write_text("{}")
    for rep in (1, 2):
        write_replication(root / "cells" / "c" / f"rep-0{rep}", "ok", {"large": (1, "drop_err")})
    write_replication(root / "cells" / "c" / "rep-03", "timeout", {"large": (1, "drop_err")}, TIMED_OUT,
                      unfinished="large")
    return root


def test_a_run_counts_the_timeout_in_its_cell_and_keeps_it_through_its_files(tmp_path: Path) -> None:
    root = _timed_out_run(tmp_path / "run")
    analysis = analyse_run(root, jobs=1, progress=None)
    [cell] = analysis.cells
    page = cell.summaries["web.response_time_s"]
    assert (page.n, page.failed, page.max) == (3, 0, math.inf)
    finished = [r.values["web.response_time_s"] for r in cell.replications[:2]]
    assert page.median == max(finished) and page.min == min(finished)
    write_summary(analysis)
    again = load_analysis(root)
    assert again.cells[0].summaries["web.response_time_s"] == page
    assert again.cells[0].replications[2].counts
    cells_csv = (root / "summary" / "cells.csv").read_text()
    assert any(line.startswith("c,") and ",web.response_time_s," in line and ",inf," in line
               for line in cells_csv.splitlines())


def test_the_report_and_the_plots_show_a_censored_time_as_beyond_the_timeout(tmp_path: Path) -> None:
    from analysis.plots import _box_series, plot_boxes, plot_cdf_times
    from analysis.report import overview, render_markdown
    from analysis.table import fmt

    root = _timed_out_run(tmp_path / "run")
    analysis = analyse_run(root, jobs=1, progress=None)
    assert fmt(math.inf) == "∞"
    assert any("1 replication(s) reached the scenario's timeout" in line for line in overview(analysis))
    assert "∞" in render_markdown(analysis)        # the cell's max page time
    [(_, pages)] = [s for s in _box_series(analysis.cells[0]) if s[0] == "web page"]
    assert sorted(pages)[-1] == math.inf and len(pages) == 3
    assert plot_boxes(analysis, tmp_path / "boxes.png").exists()
    assert plot_cdf_times(analysis, tmp_path / "cdf.png").exists()
