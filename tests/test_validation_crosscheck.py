"""validation/crosscheck.py on hand-built runs (no root): squall's analysis writes runs.csv
(analysis.aggregate.run_analysis.analyse_run, analysis.aggregate.summary.write_summary), the cross-check recomputes its
values with tshark and a plain reading of the emulator log and must agree on every one; a
number changed in runs.csv is the one disagreement it reports; a value squall left empty is not
compared; a missing run directory is a usage error."""
from __future__ import annotations

import ast
import csv
import json
import shutil
from pathlib import Path

import pytest

from analysis.aggregate.run_analysis import analyse_run
from analysis.aggregate.summary import write_summary
from test_analysis_report import build_mixture
from test_analysis_run_support import build_run
from validation.crosscheck import main as crosscheck

needs_tshark = pytest.mark.skipif(shutil.which("tshark") is None,
                                  reason="tshark is not installed (scripts/install-deps installs it)")

HTTP_RUN = "fixture-20261122T030000Z"
MIXTURE_RUN = "mix-20261122T030000Z"


def as_dropped_before_the_link(rep_dir: Path) -> None:
    """The packet the link's send buffer dropped becomes one a tc router dropped before the
    emulator: its log lines go, the sender's capture keeps it (a congestion drop either way)."""
    log = rep_dir / "emulator.log"
    lines = log.read_text().splitlines(keepends=True)
    pkt_id = next(line.split("\t")[3] for line in lines if "\tdrop_sbuf\t" in line)
    log.write_text("".join(line for line in lines
                           if line.startswith("#") or line.split("\t")[3] != pkt_id))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The HTTP/1.0 fixture (tests/test_analysis_run_support.py: an error drop, a congestion
    drop, each resent; a failed and a missing replication) and the mixture (3 bulk transfers
    and a UDP stream, tests/test_analysis_report.py), both analysed by squall."""
    base = tmp_path_factory.mktemp("crosscheck")
    http = build_run(base / HTTP_RUN)
    as_dropped_before_the_link(http / "cells" / "tcp-iw4" / "rep-03")
    mixture = build_mixture(base / MIXTURE_RUN)
    for root in (http, mixture):
        write_summary(analyse_run(root, jobs=1, progress=None))
    return [http, mixture]


def _check(*args: object, out: Path) -> tuple[int, dict]:
    status = crosscheck([*map(str, args), "--out", str(out)])
    return status, json.loads(out.read_text())


def _value(data: dict, replication: str, value: str) -> dict:
    return next(v for v in data["values"] if (v["replication"], v["value"]) == (replication, value))


@needs_tshark
def test_agrees_with_squall_on_every_value(runs: list[Path], tmp_path: Path) -> None:
    status, data = _check(*runs, out=tmp_path / "check.json")
    assert status == 0
    assert data["runs"] == [HTTP_RUN, MIXTURE_RUN]
    assert data["replications"] == 7            # the failed and the missing one are not checked
    assert data["disagree"] == 0 and data["not_compared"] == 0
    assert data["compared"] == len(data["values"]) == data["agree"]
    compared = {v["value"] for v in data["values"]}
    assert {"web.response_time_s", "web.main.throughput_Bps", "web.retransmissions",
            "web.error_drops", "web.congestion_drops", "run.retransmissions", "run.error_drops",
            "run.congestion_drops", "bulkA.elapsed_s", "bulkA.throughput_Bps",
            "bulkB.error_drops", "voice.throughput_Bps", "voice.jitter_mean_ms",
            "voice.congestion_drops"} <= compared
    # the drops and resends were there to be found, each by its cause
    assert _value(data, "tcp-iw4/rep-01", "web.error_drops")["independent"] == 1
    assert _value(data, "tcp-iw4/rep-01", "web.retransmissions")["independent"] == 1
    assert _value(data, "tcp-iw4/rep-03", "web.congestion_drops")["independent"] == 1   # before the link
    assert _value(data, "tcp-baseline_link-e0/rep-03", "voice.congestion_drops")["independent"] == 1
    assert _value(data, "tcp-baseline_link-e0/rep-01", "bulkB.error_drops")["independent"] == 1
    assert _value(data, "tcp-baseline/rep-01", "web.response_time_s")["independent"] == pytest.approx(0.92)


def _edit_runs_csv(root: Path, cell: str, replication: int, column: str, text: str) -> None:
    path = root / "summary" / "runs.csv"
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        fields, rows = reader.fieldnames, list(reader)
    row = next(r for r in rows if (r["cell"], r["replication"]) == (cell, str(replication)))
    row[column] = text
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields or [])
        writer.writeheader()
        writer.writerows(rows)


@needs_tshark
def test_a_changed_number_is_the_one_disagreement(runs: list[Path], tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    root = shutil.copytree(runs[0], tmp_path / HTTP_RUN)
    _edit_runs_csv(root, "tcp-iw4", 1, "web.retransmissions", "2")
    status, data = _check(root, out=tmp_path / "check.json")
    assert status == 1
    wrong = [(v["replication"], v["value"], v["squall"], v["independent"])
             for v in data["values"] if v["agree"] is False]
    assert wrong == [("tcp-iw4/rep-01", "web.retransmissions", 2.0, 1)]
    assert capsys.readouterr().out.splitlines()[-1].endswith("1 disagree (web.retransmissions)")


@needs_tshark
def test_a_value_squall_left_empty_is_not_compared(runs: list[Path], tmp_path: Path) -> None:
    root = shutil.copytree(runs[0], tmp_path / HTTP_RUN)
    _edit_runs_csv(root, "tcp-iw4", 3, "web.response_time_s", "")
    status, data = _check(root, out=tmp_path / "check.json")
    assert status == 0 and data["not_compared"] == 1 and data["disagree"] == 0
    blank = _value(data, "tcp-iw4/rep-03", "web.response_time_s")
    assert blank["agree"] is None and blank["note"] == "runs.csv has no value"
    assert "1 not compared" in data["verdict"]


def test_a_missing_run_directory_is_a_usage_error(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "no-such-run"
    assert crosscheck([str(missing)]) == 2
    assert str(missing) in capsys.readouterr().err


def test_the_check_imports_nothing_of_squalls_analysis_or_testbed() -> None:
    """Independent by construction: what recomputes the values does not import squall's code."""
    root = Path(__file__).resolve().parent.parent / "validation"
    for path in [root / "crosscheck.py", *sorted((root / "independent").glob("*.py"))]:
        tree = ast.parse(path.read_text())
        imported = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        assert not [m for m in imported if m.split(".")[0] in ("analysis", "testbed")], path
