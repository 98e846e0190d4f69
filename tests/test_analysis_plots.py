"""`squall plot`: PNG and SVG plots of a run (time-sequence, time series, CDFs, queues, box
plots, channel timeline), of chosen replications or of all."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.report.plot_frame import bad_periods
from analysis.report.plots import caption
from analysis.report.time_sequence import load_view
from test_analysis_report import build_mixture
from testbed.cli import main as squall

PNG = b"\x89PNG\r\n\x1a\n"
STATE_LINES = ["150000\tstate\t-\t-\t-\tbad\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\tgood",
               "300000\tstate\t-\t-\t-\tgood\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\tbad",
               "500000\tstate\t-\t-\t-\tbad\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\tgood"]


def _with_states(log: Path) -> None:
    """Inserts channel state changes (bad 150-300 ms, bad from 500 ms to the end)."""
    lines = log.read_text().splitlines()
    body = [i for i, line in enumerate(lines) if line and not line.startswith("#")]
    events = [lines[i] for i in body] + STATE_LINES
    events.sort(key=lambda line: int(line.split("\t")[0]))
    out = lines[:body[0]] + events + lines[body[-1] + 1:]
    log.write_text("\n".join(out) + "\n")


@pytest.fixture(scope="module")
def mixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = build_mixture(tmp_path_factory.mktemp("plots") / "mix-20261122T030000Z")
    for rep in (1, 2, 3):
        _with_states(root / "cells" / "tcp-baseline_link-e0" / f"rep-{rep:02d}" /
                     "emulator.log")
    assert squall(["analyze", str(root), "--jobs", "1"]) == 0
    return root


def _is_png(path: Path, min_size: int = 10_000) -> bool:
    return path.read_bytes()[:8] == PNG and path.stat().st_size > min_size


def test_bad_periods_from_state_events(mixture: Path) -> None:
    periods, end = bad_periods(mixture / "cells" / "tcp-baseline_link-e0" / "rep-01" /
                               "emulator.log")
    # the log ends when transfer B's last ACK (sent at 621 ms) leaves the link
    assert periods == [(0.15, 0.3), (0.5, end)] and end == pytest.approx(0.721)


CELL = "tcp-baseline_link-e0"


def _is_svg(path: Path) -> bool:
    return path.exists() and b"<svg" in path.read_bytes()[:2000]


def test_run_plots_are_written(mixture: Path, capsys) -> None:
    assert squall(["plot", str(mixture)]) == 0
    written = [Path(p) for p in capsys.readouterr().out.split()]
    plots = mixture / "summary" / "plots"
    assert {p.name for p in written} == {"boxes.png", "channel.png", "cdf-times.png",
                                         "cdf-delay.png", f"throughput_{CELL}.png",
                                         f"tsd_{CELL}_rep-01.png", f"series_{CELL}_rep-01.png",
                                         f"sendbuffer_{CELL}_rep-01.png"}
    assert all(p.parent == plots and _is_png(p) for p in written)
    assert all(_is_svg(p.with_suffix(".svg")) for p in written)
    assert all(caption(p) for p in written)
    assert "at the time it happened in the link" in caption(plots / f"tsd_{CELL}_rep-01.png")


def test_every_replication_or_one(mixture: Path, capsys) -> None:
    assert squall(["plot", str(mixture), "--replication", "all"]) == 0
    names = {Path(p).name for p in capsys.readouterr().out.split()}
    assert {f"{kind}_{CELL}_rep-{r:02d}.png" for kind in ("tsd", "series", "sendbuffer")
            for r in (1, 2, 3)} <= names and "boxes.png" in names
    assert squall(["plot", str(mixture), "--cell", CELL, "--replication", "3"]) == 0
    names = [Path(p).name for p in capsys.readouterr().out.split()]
    assert names == [f"tsd_{CELL}_rep-03.png", f"series_{CELL}_rep-03.png",
                     f"sendbuffer_{CELL}_rep-03.png"]
    assert squall(["plot", str(mixture), "--replication", "7"]) == 2
    assert "no analysed replication 7" in capsys.readouterr().err
    with pytest.raises(SystemExit) as bad:
        squall(["plot", str(mixture), "--replication", "x"])
    assert bad.value.code == 2
    assert "expected a replication number or 'all'" in capsys.readouterr().err


def test_link_fates_are_drawn_at_their_link_time(mixture: Path, monkeypatch) -> None:
    import analysis.report.plots as plots

    drawn: dict[str, list[float]] = {}
    real = plots.plt.Axes.scatter

    def scatter(ax, xs, ys, label=None, **kw):
        drawn[label] = list(xs)
        return real(ax, xs, ys, label=label, **kw)

    monkeypatch.setattr(plots.plt.Axes, "scatter", scatter)
    view = load_view(mixture / "cells" / CELL / "rep-01")
    plots.plot_time_sequence(view, mixture / "summary" / "plots" / "t.png", "t")
    # rep 1: transfer B's second segment, sent at 210 ms, hit at 210.001 ms and dropped
    # at 210.002 ms (the scripted link's drop_err one µs after its hit)
    assert drawn["error drop"] == [pytest.approx(0.210002)]


def test_one_connection_of_one_replication(mixture: Path, capsys) -> None:
    assert squall(["plot", str(mixture), "--cell", "tcp-baseline_link-e0", "--rep", "2",
                   "--connection", "3"]) == 0
    written = [Path(p) for p in capsys.readouterr().out.split()]
    assert [p.name for p in written] == ["tsd_tcp-baseline_link-e0_rep-02_conn-3.png",
                                         "sendbuffer_tcp-baseline_link-e0_rep-02.png"]
    assert all(_is_png(p) for p in written)
    assert squall(["plot", str(mixture), "--cell", "tcp-baseline_link-e0", "--rep", "2",
                   "--connection", "9"]) == 2
    assert "connection 9: expected 1..3" in capsys.readouterr().err


def test_view_marks_what_the_link_did(mixture: Path) -> None:
    view = load_view(mixture / "cells" / "tcp-baseline_link-e0" / "rep-01")
    assert [c.metrics.sender[1] for c in view.connections] == [40001, 40002, 40003]
    b = view.connections[1]
    fates = [b.fates[p.frame_no].fate for p in b.conn.sent_by(b.metrics.sender)
             if p.payload_len]
    assert fates == ["out", "drop_err", "out"]
    assert [r.rel_seq for r in b.metrics.retransmission_list] == [501]


def test_a_moved_run_still_plots(mixture: Path, tmp_path: Path, capsys) -> None:
    import shutil

    moved = tmp_path / "elsewhere" / mixture.name
    shutil.copytree(mixture, moved)
    assert squall(["plot", str(moved), "--cell", "tcp-baseline_link-e0", "--rep", "3"]) == 0
    written = [Path(p) for p in capsys.readouterr().out.split()]
    assert written and all(p.is_relative_to(moved) and _is_png(p) for p in written)
