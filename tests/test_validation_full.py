"""validation.full's rounds (no root): round 1 starts a study's run, later rounds resume that one
run to k replications, finished rounds are skipped, the compact results land in data/<study>/
and give the report the same numbers as the run directory."""
from __future__ import annotations

from pathlib import Path

import pytest

from test_analysis_run_support import build_run
from validation import full
from validation.data import DataError, load_study, load_study_record
from validation.measures import measure
from validation.run import load_cells


def test_round_one_starts_the_run_and_later_rounds_resume_it_to_k(tmp_path: Path) -> None:
    study = full.STUDIES[0]
    first = full.round_command(study, 1, 2, 110, out=tmp_path)
    assert first[1:3] == ["run", str(full.SCENARIOS / study.scenario)]
    assert first[first.index("--results") + 1] == str(tmp_path / study.name)
    assert first[-6:] == ["--replications", "1", "--parallel", "2", "--lane-base", "110"]
    run = tmp_path / study.name / "iip-http-20261124T000000Z"
    run.mkdir(parents=True)
    third = full.round_command(study, 3, 2, 110, out=tmp_path)
    assert third[1:4] == ["run", "--resume", str(run)] and third[4:6] == ["--replications", "3"]
    assert third[-1] == "--redo-degraded"
    ahead = full.round_command(study, 3, 2, 110, out=tmp_path, prepare_ahead=True)
    assert ahead[ahead.index("--lane-base") + 2] == "--prepare-ahead"


def test_two_runs_for_one_study_are_refused(tmp_path: Path) -> None:
    for stamp in ("a", "b"):
        (tmp_path / "saarto" / stamp).mkdir(parents=True)
    with pytest.raises(SystemExit, match="holds 2 runs"):
        full.run_dir(full.STUDIES[1], tmp_path)


def test_finished_rounds_are_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(full, "OUT", tmp_path)
    full.save_progress({"iip-http": {"1": 1200.0}, "saarto": {"1": 1500.5}}, tmp_path)
    assert full.main(["--rounds", "2", "--dry-run"]) == 0
    lines = [line.split(":")[1].strip() for line in capsys.readouterr().out.splitlines()]
    assert lines == ["iip-mixture round 1", "iip-http round 2", "saarto round 2", "iip-mixture round 2"]
    # --study keeps the rounds of the named studies only
    assert full.main(["--rounds", "2", "--dry-run", "--study", "saarto", "--study", "iip-mixture"]) == 0
    lines = [line.split(":")[1].strip() for line in capsys.readouterr().out.splitlines()]
    assert lines == ["iip-mixture round 1", "saarto round 2", "iip-mixture round 2"]


def test_progress_of_the_first_format_is_read_as_rounds_without_times(tmp_path: Path) -> None:
    (tmp_path / "progress.json").write_text('{"iip-http": [1, 2]}')
    assert full.load_progress(tmp_path) == {"iip-http": {"1": 0.0, "2": 0.0}}


def test_the_exported_data_measure_as_the_run_directory_does(tmp_path: Path) -> None:
    study = full.STUDIES[0]
    out, data = tmp_path / "out", tmp_path / "data"
    run = build_run(out / study.name / "iip-http-20261124T000000Z", "iip-http")
    (run / "meta.json").write_text('{"squall_revision": "0.1.0+git.abc1234"}')
    written = full.export(study, {"iip-http": {"1": 42.0}}, 2, out, data)
    assert sorted(p.name for p in written) == ["cells.json", "replications.csv", "study.json"]
    from_run = measure([("iip", load_cells(run, rewrite_summary=False))])
    from_data = measure([("iip", load_study(data / study.name))])
    assert from_data.values == from_run.values and from_data.values
    assert from_data.series == from_run.series and from_data.replications == from_run.replications
    record = load_study_record(data / study.name)
    assert (record["run"], record["squall_revision"], record["rounds_done"], record["lanes"]) == \
        (run.name, "0.1.0+git.abc1234", [1], 2)
    assert not (run / "summary").exists()     # a run that goes on is only read


def test_a_damaged_data_file_is_named_with_its_line(tmp_path: Path) -> None:
    study = full.STUDIES[0]
    run = build_run(tmp_path / "out" / study.name / "iip-http-20261124T000000Z", "iip-http")
    full.export(study, {}, 1, tmp_path / "out", tmp_path / "data")
    table = tmp_path / "data" / study.name / "replications.csv"
    lines = table.read_text().splitlines()
    header = lines[0].split(",")
    fields = lines[1].split(",")
    column = next(i for i, name in enumerate(header) if name.endswith("response_time_s") and fields[i])
    fields[column] = "fast"
    table.write_text("\n".join([lines[0], ",".join(fields), *lines[2:]]) + "\n")
    with pytest.raises(DataError, match=rf"replications.csv:2: {header[column]}: 'fast' is not a number"):
        load_study(tmp_path / "data" / study.name)
    assert run.exists()
