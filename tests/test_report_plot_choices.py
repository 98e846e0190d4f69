"""What the report's plots say about the replications they draw (issue 34, item 3): the first
replication in the statistics by default, a degraded one only when the cell has none and then
said in the title; the n of every plot over replications, the same as the tables'; a CDF of one
value drawn; page times and elapsed times never on one axis; no router queue frame without a
router."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from analysis.aggregate.run_analysis import analyse_run
from analysis.aggregate.summary import write_summary
from analysis.report import plots
from analysis.report.plot_choice import default_replications
from test_analysis_report import build_mixture
from test_analysis_run_support import build_run

CELL = "tcp-baseline_link-e0"
CPU_WAIT = ("flow bulkA: its programs waited 30 ms for a CPU (sender squall-bulk 30 ms), 2.4 % of "
            "its 1.2 s (the limit is 1 %, the scenario's cpu_wait_tolerance, and at least 10 ms)")


def degrade(root: Path, *reps: int) -> None:
    for rep in reps:
        status = root / "cells" / CELL / f"rep-{rep:02d}" / "status.json"
        status.write_text(json.dumps({"status": "degraded", "reason": CPU_WAIT}))


def _analysed(tmp_path: Path, *degraded: int):
    root = build_mixture(tmp_path / "mix-20261122T030000Z")
    degrade(root, *degraded)
    analysis = analyse_run(root, jobs=1, progress=None)
    write_summary(analysis)                 # the throughput and delay tables the plots read
    return analysis


def _title(figure) -> str:
    return " ".join(t for t in [figure._suptitle.get_text() if figure._suptitle else ""]
                    + [ax.get_title() for ax in figure.axes])


def test_the_default_is_the_first_replication_in_the_statistics(tmp_path: Path,
                                                                drawn_figures) -> None:
    analysis = _analysed(tmp_path, 1)
    [chosen] = default_replications(analysis)
    assert (chosen.rep, chosen.counts) == (2, True)
    written = plots.plot_run(analysis, tmp_path / "plots")
    assert f"tsd_{CELL}_rep-02.png" in {p.name for p in written}
    assert "degraded" not in _title(drawn_figures[f"tsd_{CELL}_rep-02.png"])


def test_a_cell_of_degraded_replications_only_says_so(tmp_path: Path, drawn_figures) -> None:
    analysis = _analysed(tmp_path, 1, 2, 3)
    [chosen] = default_replications(analysis)
    assert (chosen.rep, chosen.counts, chosen.fallback) == (1, False, True)
    plots.plot_run(analysis, tmp_path / "plots")
    for kind in ("tsd", "series", "sendbuffer"):
        title = _title(drawn_figures[f"{kind}_{CELL}_rep-01.png"])
        assert "replication 1 (degraded: not in the statistics; the cell has no replication " \
               "in the statistics)" in title, (kind, title)


def test_every_plot_over_replications_states_the_tables_n(tmp_path: Path, drawn_figures) -> None:
    analysis = _analysed(tmp_path, 1)
    [cell] = analysis.cells
    assert cell.summaries["tcp.fastest.elapsed_s"].n == 2          # the tables' n
    plots.plot_run(analysis, tmp_path / "plots")
    (boxes,) = drawn_figures["boxes.png"].axes
    assert all(t.get_text().split("\n")[2] == "n = 2" for t in boxes.get_xticklabels())
    (cdf,) = drawn_figures["cdf-times.png"].axes
    assert all("(n = 2)" in line.get_label() for line in cdf.get_lines())
    throughput = drawn_figures[f"throughput_{CELL}.png"]
    labels = [line.get_label() for ax in throughput.axes for line in ax.get_lines()
              if not line.get_label().startswith("_")]
    assert "median of the n = 2 replications in the statistics" in labels
    assert "1 not in the statistics (degraded or failed)" in labels
    median = next(line for ax in throughput.axes for line in ax.get_lines()
                  if line.get_label().startswith("median"))
    assert median.get_linewidth() > 2


def test_a_cdf_of_one_value_is_a_visible_step(tmp_path: Path, drawn_figures) -> None:
    analysis = _analysed(tmp_path, 1, 2)
    plots.plot_cdf_times(analysis, tmp_path / "cdf-times.png")
    (cdf,) = drawn_figures["cdf-times.png"].axes
    [cell] = analysis.cells
    fastest = cell.replications[2].values["tcp.fastest.elapsed_s"]
    line = next(line for line in cdf.get_lines() if line.get_label().startswith(f"{CELL}: fastest"))
    assert line.get_label() == f"{CELL}: fastest (n = 1)"
    # from 0 up to 1 at the value, and a dot at it
    assert list(line.get_xdata()) == [fastest, fastest]
    assert list(line.get_ydata()) == [0.0, 1.0]
    assert line.get_marker() == "o"


def test_page_times_and_elapsed_times_have_an_axis_each(tmp_path: Path, drawn_figures) -> None:
    http = analyse_run(build_run(tmp_path / "iip-http-20261122T030000Z", "iip-http"), jobs=1,
                       progress=None)
    mix = _analysed(tmp_path)
    both = dataclasses.replace(mix, cells=http.cells + mix.cells)
    plots.plot_boxes(both, tmp_path / "boxes.png")
    plots.plot_cdf_times(both, tmp_path / "cdf-times.png")
    for name in ("boxes.png", "cdf-times.png"):
        axes = drawn_figures[name].axes
        measures = [ax.get_ylabel() if name == "boxes.png" else ax.get_xlabel() for ax in axes]
        assert measures == [plots.PAGE_TIME, plots.ELAPSED_TIME]
        if name == "boxes.png":
            names = [[t.get_text() for t in ax.get_xticklabels()] for ax in axes]
        else:
            names = [[line.get_label() for line in ax.get_lines()] for ax in axes]
        assert names[0] and all("web page" in n for n in names[0])
        assert names[1] and not any("page" in n for n in names[1])


def test_no_router_no_queue_frame(tmp_path: Path, drawn_figures) -> None:
    analysis = _analysed(tmp_path)
    written = {p.name for p in plots.plot_run(analysis, tmp_path / "plots")}
    assert f"sendbuffer_{CELL}_rep-01.png" in written
    assert not any(name.startswith("queues_") for name in written)
    figure = drawn_figures[f"sendbuffer_{CELL}_rep-01.png"]
    (ax,) = figure.axes
    assert "no router queue drawn: this replication had no router" in ax.get_title()
    assert ax.get_lines()                         # the send buffer is drawn
    assert plots.caption(Path(f"sendbuffer_{CELL}_rep-01.png"))


def test_the_emulators_router_stage_is_drawn_as_a_queue(tmp_path: Path, drawn_figures) -> None:
    from analysis.read.emulog import read_emulator_log
    from analysis.report.queue_plot import plot_queues
    from test_analysis_report import build_user_run

    root = build_user_run(tmp_path / "umts-mix-20261122T030000Z")
    rep = next((root / "cells").glob("*/rep-01"))
    out = plot_queues(rep, read_emulator_log(rep / "emulator.log"), tmp_path, "x", "rep-01")
    assert out is not None and out.name == "queues_x.png"
    labels = [line.get_label() for line in drawn_figures["queues_x.png"].axes[0].get_lines()]
    assert "router stage, down" in labels
