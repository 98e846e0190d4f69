"""validation.full's rounds (no root): round k runs replication k of every cell in its own run,
the committed data/<study>/ says which rounds are finished (so a new machine goes on from a
clone), and each round's rows are merged beside the others' to give the report the same numbers
as one run directory holding every replication."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from test_analysis_run_support import build_run
from validation import full
from validation.data import DataError, load_study, load_study_record
from validation.measures import measure
from validation.run import load_cells


def test_round_k_runs_replication_k_alone_and_resumes_its_own_run(tmp_path: Path) -> None:
    study = full.STUDIES[0]
    first = full.round_command(study, 3, 2, 110, out=tmp_path)
    assert first[1:3] == ["run", str(full.SCENARIOS / study.scenario)]
    assert first[first.index("--results") + 1] == str(tmp_path / study.name / "round-3")
    assert first[first.index("--replications"):first.index("--replications") + 4] == \
        ["--replications", "3", "--first-replication", "3"]
    run = tmp_path / study.name / "round-3" / "iip-http-20261124T000000Z"
    run.mkdir(parents=True)
    (run / "scenario.toml").write_text((full.SCENARIOS / study.scenario).read_text())
    again = full.round_command(study, 3, 2, 110, out=tmp_path)
    assert again[1:4] == ["run", "--resume", str(run)] and again[-1] == "--redo-degraded"
    assert full.round_command(study, 4, 2, 110, out=tmp_path)[2] == str(full.SCENARIOS / study.scenario)
    ahead = full.round_command(study, 3, 2, 110, out=tmp_path, prepare_ahead=True)
    assert "--prepare-ahead" in ahead


def test_a_round_run_of_another_scenario_version_is_refused_not_resumed(tmp_path: Path) -> None:
    study = full.STUDIES[2]
    run = tmp_path / study.name / "round-2" / "iip-mixture-20261124T000000Z"
    run.mkdir(parents=True)
    (run / "scenario.toml").write_text("# the scenario as it was\n")
    with pytest.raises(SystemExit, match="ran another version of scenarios/iip-mixture.toml; remove it"):
        full.round_command(study, 2, 2, 110, out=tmp_path)


def test_a_round_with_replications_missing_is_not_finished(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """squall exits 1 for failed replications and for a lane it could not build alike: the round
    counts as finished only when none of its replications is missing."""
    study = full.STUDIES[0]
    out = tmp_path / "out"
    run = build_run(out / study.name / "round-3" / "iip-http-20261124T000000Z", "iip-http")   # rep 3 of a cell missing
    (run / "scenario.toml").write_text((full.SCENARIOS / study.scenario).read_text())
    monkeypatch.setattr(full, "_run", lambda argv: 1)
    args = full.argparse.Namespace(parallel=2, lane_base=110, out=out, prepare_ahead=False, rounds=5,
                                   conclusion_rounds=0)
    assert full.unfinished(study, 3, out) > 0
    assert full.run_round(study, 3, args) == (None, 1)


def test_a_round_whose_only_other_outcomes_are_timeouts_is_not_run_again(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A timeout is a result (analysis/metrics/censoring.py): squall exits 1 for it, but a second pass
    would have nothing to redo."""
    import shutil

    study = full.STUDIES[0]
    out = tmp_path / "out"
    run = build_run(out / study.name / "round-1" / "iip-http-20261124T000000Z", "iip-http")
    (run / "scenario.toml").write_text((full.SCENARIOS / study.scenario).read_text())
    cell = run / "cells" / "tcp-baseline"
    status = json.loads((cell / "rep-02" / "status.json").read_text())
    (cell / "rep-02" / "status.json").write_text(json.dumps(status | {"status": "timeout"}))
    shutil.copytree(cell / "rep-01", cell / "rep-03")
    (run / "meta.json").write_text(json.dumps({"testbed": {"run": {"replications": 3, "first_replication": 1}}}))
    calls: list[list[str]] = []
    monkeypatch.setattr(full, "_run", lambda argv: calls.append(argv) or 1)
    args = full.argparse.Namespace(parallel=2, lane_base=110, out=out, prepare_ahead=False, rounds=5,
                                   conclusion_rounds=0)
    assert full.to_redo(study, 1, out) == 0
    seconds, code = full.run_round(study, 1, args)
    assert seconds is not None and code == 1 and len(calls) == 1


def test_a_round_s_wall_time_adds_up_its_sittings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A round stopped and finished in a later sitting counts both sittings' time, not the last's."""
    study = full.STUDIES[0]
    out = tmp_path / "out"
    run = build_run(out / study.name / "round-1" / "iip-http-20261124T000000Z", "iip-http")
    (run / "scenario.toml").write_text((full.SCENARIOS / study.scenario).read_text())
    (run / "meta.json").write_text(json.dumps({"testbed": {"run": {"replications": 1, "first_replication": 1}}}))
    args = full.argparse.Namespace(parallel=2, lane_base=110, out=out, prepare_ahead=False, rounds=5,
                                   conclusion_rounds=0)
    clock = iter([100.0, 400.0, 1000.0, 1250.0])
    monkeypatch.setattr(full.time, "monotonic", lambda: next(clock))
    monkeypatch.setattr(full, "_run", lambda argv: -15)                 # stopped after 300 s
    assert full.run_round(study, 1, args) == (None, -15)
    monkeypatch.setattr(full, "_run", lambda argv: 0)                   # finished 250 s later
    assert full.run_round(study, 1, args) == (550.0, 0)


def test_two_runs_in_one_round_are_refused(tmp_path: Path) -> None:
    for stamp in ("a", "b"):
        (tmp_path / "saarto" / "round-1" / stamp).mkdir(parents=True)
    with pytest.raises(SystemExit, match="holds 2 runs"):
        full.run_dir(full.STUDIES[1], 1, tmp_path)


def test_rounds_the_committed_data_lists_are_skipped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    for name, rounds in (("iip-http", {"1": {"seconds": 1200.0}}), ("saarto", {"1": {"seconds": 1500.5}})):
        (data / name).mkdir(parents=True)
        (data / name / "study.json").write_text(json.dumps({"rounds": rounds}))
    argv = ["--rounds", "2", "--dry-run", "--out", str(tmp_path / "out"), "--data", str(data)]
    assert full.main(argv) == 0
    lines = [line.split(":")[1].strip() for line in capsys.readouterr().out.splitlines()]
    # iip-http's CBI chains once its round 1 is finished; saarto has none; iip-mixture's after its round 1
    assert lines == ["iip-http the CBI chains", "iip-mixture round 1", "iip-mixture the CBI chains",
                     "iip-http round 2", "saarto round 2", "iip-mixture round 2"]
    # --study keeps the rounds of the named studies only
    assert full.main([*argv, "--study", "saarto", "--study", "iip-mixture"]) == 0
    lines = [line.split(":")[1].strip() for line in capsys.readouterr().out.splitlines()]
    assert lines == ["iip-mixture round 1", "iip-mixture the CBI chains", "saarto round 2", "iip-mixture round 2"]


def test_a_record_of_the_first_format_lists_its_rounds(tmp_path: Path) -> None:
    (tmp_path / "iip-http").mkdir()
    (tmp_path / "iip-http" / "study.json").write_text(json.dumps(
        {"run": "r", "squall_revision": "abc", "lanes": 2, "round_seconds": {"1": 10.0, "2": 20.0}}))
    rounds = full.finished_rounds(full.STUDIES[0], tmp_path)
    assert rounds == {"1": {"seconds": 10.0, "run": "r", "squall_revision": "abc", "lanes": 2},
                      "2": {"seconds": 20.0, "run": "r", "squall_revision": "abc", "lanes": 2}}


def _round_run(out: Path, k: int, revision: str) -> Path:
    """The fixture run (replications 1..3) as round k's run; the merge takes replication k of it."""
    run = build_run(out / "iip-http" / f"round-{k}" / "iip-http-20261124T000000Z", "iip-http")
    (run / "meta.json").write_text(json.dumps({"squall_revision": revision}))
    return run


def test_rounds_merged_one_by_one_measure_as_one_run_holding_them_all(tmp_path: Path) -> None:
    study = full.STUDIES[0]
    out, data = tmp_path / "out", tmp_path / "data"
    for k in (2, 1, 3):              # in any order, one round half-way first
        run = _round_run(out, k, f"rev{k}")
        if k == 2:
            full.export(study, k, None, 2, out, data)
            assert load_study_record(data / study.name)["rounds_done"] == []
        written = full.export(study, k, 40.0 + k, 2, out, data)
    assert sorted(p.name for p in written) == ["cells.json", "replications.csv", "study.json"]
    whole = measure([("iip", load_cells(run, rewrite_summary=False))])
    merged = measure([("iip", load_study(data / study.name))])
    assert merged.values == whole.values and merged.values
    assert merged.series == whole.series and merged.replications == whole.replications
    record = load_study_record(data / study.name)
    assert record["rounds_done"] == [1, 2, 3] and record["round_seconds"] == {"1": 41.0, "2": 42.0, "3": 43.0}
    assert [record["rounds"][k]["squall_revision"] for k in "123"] == ["rev1", "rev2", "rev3"]
    assert not (run / "summary").exists()     # a run that goes on is only read
    # a finished round run again (e.g. to redo it) replaces its rows, never adds to them
    full.export(study, 3, 50.0, 2, out, data)
    assert measure([("iip", load_study(data / study.name))]).values == whole.values


def test_a_round_of_a_changed_scenario_is_refused_not_mixed(tmp_path: Path) -> None:
    study = full.STUDIES[0]
    out, data = tmp_path / "out", tmp_path / "data"
    _round_run(out, 1, "a")
    full.export(study, 1, 1.0, 2, out, data)
    # a round of the first format (no digest of its cells): the cells themselves are compared
    (data / study.name / "study.json").write_text(json.dumps({"round_seconds": {"1": 1.0}}))
    before = (data / study.name / "replications.csv").read_text()
    run = _round_run(out, 2, "b")
    expanded = json.loads((run / "expanded.json").read_text())
    expanded[0]["cell"] = "tcp-other"
    (run / "expanded.json").write_text(json.dumps(expanded))
    shutil.rmtree(run / "cells" / "tcp-baseline")
    with pytest.raises(SystemExit, match="cell tcp-other: only now"):
        full.export(study, 2, 1.0, 2, out, data)
    assert (data / study.name / "replications.csv").read_text() == before
    # without the cells' record (rounds run before it existed), the merge refuses them itself
    (data / study.name / "expanded.json.gz").unlink()
    with pytest.raises(DataError, match="round 2's cells differ from the committed rounds'"):
        full.export(study, 2, 1.0, 2, out, data)
    assert (data / study.name / "replications.csv").read_text() == before


def test_a_round_whose_resolved_cells_differ_is_refused(tmp_path: Path) -> None:
    """Same cells and flows, but a profile changed (here the workload a flow resolved to): refused."""
    study = full.STUDIES[0]
    out, data = tmp_path / "out", tmp_path / "data"
    _round_run(out, 1, "a")
    full.export(study, 1, 1.0, 2, out, data)
    run = _round_run(out, 2, "a")
    expanded = json.loads((run / "expanded.json").read_text())
    expanded[0]["flows"]["web"]["workload"] = "larger"
    (run / "expanded.json").write_text(json.dumps(expanded))
    with pytest.raises(SystemExit, match=r"has cells other than the rounds in (.|\n)*flows.web.workload: 'tiny' then, 'larger' now"):
        full.export(study, 2, 1.0, 2, out, data)


def test_a_field_a_newer_squall_adds_is_noted_not_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    study = full.STUDIES[0]
    out, data = tmp_path / "out", tmp_path / "data"
    _round_run(out, 1, "a")
    full.export(study, 1, None, 2, out, data)
    assert not (data / study.name / "expanded.json.gz").exists()    # recorded by a finished round only
    full.export(study, 1, 1.0, 2, out, data)
    recorded = (data / study.name / "expanded.json.gz").read_bytes()
    run = _round_run(out, 2, "b")
    expanded = json.loads((run / "expanded.json").read_text())
    expanded[0]["flows"]["web"]["new_field"] = 1
    (run / "expanded.json").write_text(json.dumps(expanded, indent=3))     # other bytes, same cells
    full.export(study, 2, 1.0, 2, out, data)
    assert "1 field(s) only one of it" in capsys.readouterr().out
    assert load_study_record(data / study.name)["rounds_done"] == [1, 2]
    assert (data / study.name / "expanded.json.gz").read_bytes() == recorded


def test_a_round_is_refused_before_it_runs_when_the_scenario_changed(tmp_path: Path) -> None:
    from testbed.run.runner import expanded
    from testbed.scenario.loader import load

    data = tmp_path / "data"
    cells = expanded(load(full.SCENARIOS / full.STUDIES[1].scenario))
    (data / "saarto").mkdir(parents=True)
    full.cells_record.store(data / "saarto", cells)
    argv = ["--rounds", "1", "--dry-run", "--study", "saarto", "--out", str(tmp_path / "out"), "--data", str(data)]
    assert full.main(argv) == 0
    cells["cells"][0]["link"]["down"]["delay_us"] = 1
    full.cells_record.store(data / "saarto", cells)
    with pytest.raises(SystemExit, match="as squall expands it now has cells other"):
        full.main(argv)


def test_a_damaged_data_file_is_named_with_its_line(tmp_path: Path) -> None:
    study = full.STUDIES[0]
    run = _round_run(tmp_path / "out", 1, "a")
    full.export(study, 1, None, 1, tmp_path / "out", tmp_path / "data")
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


def test_a_cell_added_removed_or_twice_is_refused_not_noted() -> None:
    a, b = {"cell": "a", "flows": {"web": {"workload": "s"}}}, {"cell": "b", "flows": {"web": {"workload": "m"}}}
    changed, one_side = full.cells_record.compare({"cells": [a]}, {"cells": [a, b]})
    assert changed == ["cell b: only now"] and one_side == []
    changed, _ = full.cells_record.compare({"cells": [a, b]}, {"cells": [a]})
    assert changed == ["cell b: only then"]
    changed, _ = full.cells_record.compare({"cells": [a, b]}, {"cells": [a, b, dict(b)]})
    assert changed == ["cell b: 2 times now"]
    # a field inside a cell that only one side has: noted
    changed, one_side = full.cells_record.compare({"cells": [a]}, {"cells": [{**a, "new": 1}]})
    assert changed == [] and one_side == ["cells.a.new (only now)"]


def test_a_damaged_cells_record_is_named(tmp_path: Path) -> None:
    (tmp_path / "expanded.json.gz").write_bytes(b"\x1f\x8b not gzip")
    with pytest.raises(SystemExit, match="expanded.json.gz is damaged"):
        full.cells_record.recorded(tmp_path)


def test_a_conclusions_round_runs_the_chosen_cells_only(tmp_path: Path) -> None:
    study = full.STUDIES[0]
    command = full.round_command(study, 6, 2, 110, out=tmp_path, cells=["link-e0_a", "link-r0_b"])
    assert command[command.index("--cells") + 1] == "link-e0_a,link-r0_b"
    assert "--cells" not in full.round_command(study, 5, 2, 110, out=tmp_path)


def test_a_round_of_some_cells_replaces_their_rows_only(tmp_path: Path) -> None:
    study = full.STUDIES[0]
    out, data = tmp_path / "out", tmp_path / "data"
    for k in (1, 3):
        _round_run(out, k, "a")
        full.export(study, k, 1.0, 2, out, data)
    run = _round_run(out, 2, "a")
    (run / "meta.json").write_text(json.dumps({"squall_revision": "a", "testbed": {"run": {"cells": "tcp-iw4"}}}))
    full.export(study, 2, 1.0, 2, out, data)
    reps = {c.cell: [r.ref.rep for r in c.replications] for c in load_study(data / study.name)}
    # the fixture has a (failed) replication 2 of tcp-baseline too: a run of tcp-iw4 only leaves it out
    assert reps == {"tcp-baseline": [1, 3], "tcp-iw4": [1, 2, 3]}
    assert load_study_record(data / study.name)["rounds"]["2"]["cells"] == 1
    # a run of some cells cannot start a study's data
    with pytest.raises(DataError, match="no committed rounds for a run of some cells"):
        full.export(study, 2, 1.0, 2, out, tmp_path / "other")


def test_the_conclusions_cells_are_those_their_checks_read() -> None:
    """On the committed data: the mixtures' DiffServ cases (2 TCP + 1 UDP from 0 s, with and
    without DiffServ, every link and variant), nothing else (the CBI conclusion compares the
    IIP HTTP tables' pairs, validation/PROTOCOL.md)."""
    chosen = set(full.conclusion_cells()["iip-mixture"])
    cells = [c.cell for c in load_study(full.DATA / "iip-mixture")]
    expected = {c for c in cells if "2tcp+1udp-0s-0s-0s-" in c}
    assert chosen == expected and len(chosen) == 24


def test_rounds_after_rounds_are_planned_for_the_conclusions_cells(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    shutil.copytree(full.DATA / "iip-http", data / "iip-http")
    done = len(load_study_record(data / "iip-http")["rounds_done"])
    argv = ["--rounds", str(done), "--conclusion-rounds", str(done + 1), "--dry-run", "--study", "iip-http",
            "--out", str(tmp_path / "out"), "--data", str(data)]
    assert full.main(argv) == 0
    # (a note may say the committed expanded.json was written by another squall version)
    [line] = [line for line in capsys.readouterr().out.splitlines() if " round " in line]
    assert f"iip-http round {done + 1}:" in line
    # the conclusions' 128 cells but the 48 CBI ones, which run as chains
    chosen = line.split("--cells ")[1].split(",")
    assert len(chosen) == 80 and not any("cbi" in c for c in chosen)


def test_the_mixtures_committed_rounds_are_refused_for_the_protocols_stream(tmp_path: Path) -> None:
    """The committed mixture rows ran the UDP stream fitted to the tables (34.6 ms); the
    protocol's scenario sends the text's 32 kbit/s, so a further round is refused rather than
    mixed with them (validation/PROTOCOL.md: the protocol's run starts afresh)."""
    data = tmp_path / "data"
    shutil.copytree(full.DATA / "iip-mixture", data / "iip-mixture")
    study = next(s for s in full.STUDIES if s.name == "iip-mixture")
    with pytest.raises(SystemExit, match="'cbr-iip-mixture' then, 'cbr-32k' now"):
        full.check_cells_now(study, data)


def test_a_round_whose_capture_holds_an_undeclared_connection_is_refused_with_its_cause(tmp_path: Path) -> None:
    """A connection no flow declares (here an earlier replication's FIN) is not a changed
    scenario: the refusal names the cell and the connection, and nothing is written."""
    from dataclasses import replace

    from analysis.aggregate.replication_values import FlowInfo
    from validation.data import merge_round
    study = full.STUDIES[0]
    out, data = tmp_path / "out", tmp_path / "data"
    _round_run(out, 1, "a")
    full.export(study, 1, 1.0, 2, out, data)
    before = (data / study.name / "replications.csv").read_text()
    committed = load_study(data / study.name)
    stray = FlowInfo("tcp 198.18.110.1:50526", "tcp")
    fresh = [replace(c, flows=[*c.flows, stray]) if i == 0 else c for i, c in enumerate(committed)]
    with pytest.raises(DataError, match=rf"connections no flow declares \({committed[0].cell}: tcp 198.18.110.1:50526\)"):
        merge_round(fresh, 1, data / study.name, {})
    assert (data / study.name / "replications.csv").read_text() == before


def test_the_cbi_cells_run_as_chains_and_the_rounds_after_the_first_without_them() -> None:
    http, saarto = full.STUDIES[0], full.STUDIES[1]
    chained = full.chain_cells(http)
    assert len(chained) == 48 and all("cbi" in c for c in chained)
    assert full.round_cells(http, 1, 5) is None                 # round 1: every cell, the chains join its data
    later = full.round_cells(http, 2, 5)
    assert later is not None and len(later) == 144 - 48 and not set(later) & set(chained)
    assert full.chain_cells(saarto) == [] and full.round_cells(saarto, 2, 5) is None


def test_the_chains_run_their_replications_in_one_run(tmp_path: Path) -> None:
    study = full.STUDIES[0]
    command = full.round_command(study, full.CHAINS, 4, 110, out=tmp_path, cells=["a", "b"], chain_length=10)
    assert command[command.index("--results") + 1] == str(tmp_path / study.name / "chains")
    assert command[command.index("--replications"):command.index("--replications") + 2] == ["--replications", "10"]
    assert "--first-replication" not in command and command[command.index("--cells") + 1] == "a,b"


def test_the_chains_replace_their_cells_rows_round_by_round(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each replication the chains' run has replaces that round's row of its cell; a replication
    it does not have yet keeps the round's; study.json keeps the chains beside the rounds."""
    from test_analysis_run_support import write_replication

    study = full.STUDIES[0]
    out, data = tmp_path / "out", tmp_path / "data"
    for k in (1, 2, 3):
        _round_run(out, k, "a")
        full.export(study, k, 1.0, 2, out, data)
    rounds = {r.ref.rep: r.values for c in load_study(data / study.name) if c.cell == "tcp-iw4" for r in c.replications}
    chains = build_run(out / study.name / "chains" / "iip-http-20261127T000000Z", "iip-http")
    (chains / "meta.json").write_text(json.dumps({"squall_revision": "b", "testbed": {"run": {
        "cells": "tcp-iw4", "replications": 3}}}))
    shutil.rmtree(chains / "cells" / "tcp-iw4" / "rep-01")
    write_replication(chains / "cells" / "tcp-iw4" / "rep-01", "ok", {})          # no error drop now
    shutil.rmtree(chains / "cells" / "tcp-iw4" / "rep-03")                         # not run yet
    full.export(study, full.CHAINS, None, 2, out, data)
    merged = {c.cell: {r.ref.rep: r for r in c.replications} for c in load_study(data / study.name)}
    assert sorted(merged["tcp-iw4"]) == [1, 2, 3]
    assert merged["tcp-iw4"][1].values != rounds[1]                                # the chain's
    assert merged["tcp-iw4"][3].values == rounds[3]                                # round 3's
    record = load_study_record(data / study.name)
    assert record["chains"]["seconds"] is None and full.finished_chains(study, data) is None
    full.export(study, full.CHAINS, 30.0, 2, out, data)
    assert full.finished_chains(study, data)["replications"] == 3
    chained = {c.cell: {r.ref.rep: r.values for r in c.replications} for c in load_study(data / study.name)}
    # a round begun with every cell (before its CBI cells became chains), finished after them
    monkeypatch.setattr(full, "chain_cells", lambda s: ["tcp-iw4"])
    shutil.rmtree(out / study.name / "round-2")
    _round_run(out, 2, "c")
    full.export(study, 2, 2.0, 2, out, data)
    after = {c.cell: {r.ref.rep: r.values for r in c.replications} for c in load_study(data / study.name)}
    assert after["tcp-iw4"] == chained["tcp-iw4"]              # the chains' rows stay
    assert load_study_record(data / study.name)["chains"]["seconds"] == 30.0


def test_a_round_resumed_runs_and_counts_its_own_cells_only(tmp_path: Path) -> None:
    """A round begun with the CBI cells among its cells, resumed once they are chains: the resume
    names the round's cells, and their replications alone say whether the round is finished."""
    study = full.STUDIES[0]
    out = tmp_path / "out"
    run = build_run(out / study.name / "round-3" / "iip-http-20261124T000000Z", "iip-http")
    (run / "meta.json").write_text(json.dumps({"testbed": {"run": {"replications": 3, "first_replication": 3}}}))
    (run / "scenario.toml").write_text((full.SCENARIOS / study.scenario).read_text())
    command = full.round_command(study, 3, 2, 110, out=out, cells=["tcp-iw4"])
    assert command[1:3] == ["run", "--resume"] and command[command.index("--cells") + 1] == "tcp-iw4"
    assert full.unfinished(study, 3, out, ["tcp-iw4"]) == 0             # iw4 has its 3
    assert full.unfinished(study, 3, out) > 0                           # baseline's rep 3 never ran


def test_chains_run_to_fewer_replications_than_asked_are_said_not_grown(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    (data / "iip-http").mkdir(parents=True)
    (data / "iip-http" / "study.json").write_text(json.dumps(
        {"rounds": {"1": {"seconds": 1.0}}, "chains": {"seconds": 5.0, "replications": 10}}))
    argv = ["--rounds", "5", "--conclusion-rounds", "12", "--dry-run", "--study", "iip-http",
            "--out", str(tmp_path / "out"), "--data", str(data)]
    assert full.main(argv) == 0
    out = capsys.readouterr().out
    assert "the CBI chains ran to replication 10, fewer than the 12 now asked for" in out
    assert "the CBI chains: /" not in out
