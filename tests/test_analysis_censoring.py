"""A replication that timed out with a page still loading is a censored result, not a failure
(analysis/metrics/censoring.py): the page's time is inf, the unfinished object's throughput 0, and the
replication enters the cell statistics where rank statistics stay exact."""

from __future__ import annotations

import json
import math
from pathlib import Path

from analysis.aggregate.statistics import summarize
from analysis.aggregate.run_analysis import analyse_run
from analysis.results.layout import ReplicationRef
from analysis.aggregate.replication_values import analyse_run_replication
from analysis.aggregate.summary import load_analysis, write_summary
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
    from analysis.report.plots import _box_series, plot_boxes, plot_cdf_times
    from analysis.report.contents import overview, render_markdown
    from analysis.report.table import fmt

    root = _timed_out_run(tmp_path / "run")
    analysis = analyse_run(root, jobs=1, progress=None)
    assert fmt(math.inf) == "∞"
    assert any("1 replication(s) reached the scenario's timeout" in line for line in overview(analysis))
    assert "∞" in render_markdown(analysis)        # the cell's max page time
    [(_, _, pages)] = [s for s in _box_series(analysis.cells[0]) if s[0] == "web page"]
    assert sorted(pages)[-1] == math.inf and len(pages) == 3
    assert plot_boxes(analysis, tmp_path / "boxes.png").exists()
    assert plot_cdf_times(analysis, tmp_path / "cdf.png").exists()


def test_in_line_objects_never_requested_by_the_deadline_count_as_nothing_delivered(tmp_path: Path) -> None:
    """The main object never completed, so the HTTP/1.0 client never asked for the two in-line
    objects: the page is unfinished (∞) and its slowest in-line object delivered nothing."""
    directory = tmp_path / "rep-01"
    write_replication(directory, "timeout", {"main": (1, "drop_err")}, TIMED_OUT, unfinished="main")
    r = analyse_run_replication(ReplicationRef("c", 1, directory, "timeout", TIMED_OUT))
    assert r.analysed, r.error
    v = r.values
    assert v["web.connections"] == 1
    assert (v["web.response_time_s"], v["web.main.elapsed_s"], v["web.main.throughput_Bps"]) == (math.inf, math.inf, 0.0)
    assert (v["web.inline1.throughput_Bps"], v["web.inline2.throughput_Bps"]) == (0.0, 0.0)
    assert v["web.inline_slowest.throughput_Bps"] == v["web.inline_fastest.throughput_Bps"] == 0.0
    assert r.counts


def test_the_client_decides_whether_a_timed_out_page_was_finished(tmp_path: Path) -> None:
    """Every connection the capture holds completed, but squall-http had not finished its page
    (say, an object not yet requested): the page is unfinished, not as long as its connections."""
    directory = tmp_path / "rep-01"
    write_replication(directory, "timeout", {}, TIMED_OUT)
    workloads = json.loads((directory / "workloads.json").read_text())
    workloads["web"]["client"]["summary"] |= {"ok": False, "response_time_us": 0}
    (directory / "workloads.json").write_text(json.dumps(workloads))
    r = analyse_run_replication(ReplicationRef("c", 1, directory, "timeout", TIMED_OUT))
    assert r.values["web.response_time_s"] == r.values["web.client_response_time_s"] == math.inf
    assert r.counts


def test_fairness_counts_a_transfer_unfinished_at_the_deadline_as_nothing_delivered() -> None:
    from analysis.aggregate.replication_values import _bulk_roles
    from analysis.metrics.tcp import TcpMetrics

    def transfer(port: int, elapsed_us: int | None) -> TcpMetrics:
        done = elapsed_us is not None
        return TcpMetrics(("10.0.0.2", port), ("10.0.0.1", 5001), ("10.0.0.2", port), done, 0, 1000,
                          elapsed_us, elapsed_us, elapsed_us, elapsed_us, elapsed_us, 100_000,
                          100_000 / (elapsed_us / 1e6) if done else None,
                          100_000 / (elapsed_us / 1e6) if done else None, 70, 0, {}, 0, 0, 0, 0, {})

    for timed_out, jain in ((True, 0.5), (False, None)):
        values: dict = {}
        _bulk_roles([("a", transfer(40000, 10_000_000)), ("b", transfer(40001, None))], {}, values, {}, timed_out)
        assert values["tcp.jain_index"] == jain
        assert values["tcp.slowest.throughput_Bps"] == (0.0 if timed_out else None)


def test_a_cell_whose_times_are_all_beyond_the_timeout_keeps_its_place_in_the_plots(tmp_path: Path) -> None:
    import matplotlib.pyplot as plt

    from analysis.report.plots import _ecdf, plot_boxes

    root = _timed_out_run(tmp_path / "run")
    analysis = analyse_run(root, jobs=1, progress=None)
    for r in analysis.cells[0].replications:
        r.values["web.response_time_s"] = math.inf
    assert plot_boxes(analysis, tmp_path / "boxes.png").exists()
    fig, ax = plt.subplots()
    _ecdf(ax, [math.inf, math.inf], "c: web page")
    assert [line.get_label() for line in ax.get_lines()] == ["c: web page (n = 2, all beyond the timeout)"]
    plt.close(fig)


def test_the_cells_say_how_many_times_are_beyond_the_timeout(tmp_path: Path) -> None:
    from analysis.report.contents import _n_failed

    assert summarize([1.0, math.inf, 2.0]).censored == 1 and summarize([1.0, 2.0]).censored == 0
    root = _timed_out_run(tmp_path / "run")
    analysis = analyse_run(root, jobs=1, progress=None)
    assert _n_failed(analysis.cells[0], "web.response_time_s") == "3 (0; 1 ∞)"
    assert _n_failed(analysis.cells[0], "web.main.elapsed_s") == "3 (0)"
