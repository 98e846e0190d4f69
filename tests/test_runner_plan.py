"""The runner without lanes: which replications run where, the progress line, the end table."""
from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path

import pytest

from test_mistakes import GOOD
from testbed.cli import main as cli_main
from testbed.scenario import loader as scenario
from testbed.errors import ConfigError
from testbed.run.progress import Progress
from testbed.run.results import RunDir, Status
from testbed.run.runner import select_cells
from testbed.run.unit import plan
from testbed.run.status import median_metrics, medians_text

REPO = Path(__file__).resolve().parent.parent
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
    units = plan(list(sc.cells), range(1, 4), run_dir)
    assert [(u.cell.cell_id, u.replications, u.keep_lane) for u in units] == [
        ("tcp-baseline", (1,), False), ("tcp-baseline", (3,), False), ("tcp-cbi", (1, 2, 3), True)]


def test_a_run_from_a_later_replication_plans_only_those(loaded) -> None:
    sc, run_dir = loaded
    units = plan(list(sc.cells), range(3, 4), run_dir)
    # the CBI chain starts at 3 too: its unit warms the lane up with replication 2 (test_unit_chain)
    assert [(u.cell.cell_id, u.replications) for u in units] == [("tcp-baseline", (3,)), ("tcp-cbi", (3,))]


def test_first_replication_is_stored_resumed_and_reported(tmp_path: Path, capsys) -> None:
    from testbed.run.runner import RunOptions, reopen_run, start_run

    path = tmp_path / "plan.toml"
    path.write_text(SCENARIO)
    options = RunOptions(results=tmp_path / "results", replications=4, first_replication=3)
    _, run_dir, reps = start_run(path, options)
    assert reps == range(3, 5)
    assert reopen_run(run_dir.root, RunOptions())[2] == range(3, 5)
    assert reopen_run(run_dir.root, RunOptions(replications=5))[2] == range(3, 6)
    for cell in ("tcp-baseline", "tcp-cbi"):
        for rep in (3, 4):
            run_dir.finish(cell, rep, run_dir.begin(cell, rep), ok(rep))
    # replications 1 and 2 were never selected: not missing, and the run is complete
    assert cli_main(["status", str(run_dir.root), "--json"]) == 0
    state = json.loads(capsys.readouterr().out)
    assert (state["first_replication"], state["replications"], state["complete"]) == (3, 4, True)
    assert state["counts"] == {"ok": 4, "failed": 0, "timeout": 0, "degraded": 0, "missing": 0}
    assert cli_main(["status", str(run_dir.root)]) == 0
    assert "2 cells x replications 3..4" in capsys.readouterr().out


def test_degraded_and_timed_out_replications_are_kept_unless_asked_to_redo_them(loaded) -> None:
    """A timeout is a result of the link (analysis/metrics/censoring.py): running it again until it
    finishes would keep only the lucky draws."""
    sc, run_dir = loaded
    from analysis.results.degraded import details_of

    cause = ("flow perf: its programs waited 30 ms for a CPU (server iperf3 30 ms), 2.5 % of its 1.2 s "
             "(the limit is 1 %, the scenario's cpu_wait_tolerance, and at least 10 ms)")
    for rep, state in ((1, "degraded"), (2, "failed"), (3, "ok"), (4, "timeout")):
        details = {"degraded": details_of(cause, "cpu_wait_tolerance")} if state == "degraded" else {}
        run_dir.finish("tcp-baseline", rep, run_dir.begin("tcp-baseline", rep),
                       Status(state, "", "20260101T000000Z", 1.0, details))
    baseline = [c for c in sc.cells if c.cell_id == "tcp-baseline"]
    assert [u.replications for u in plan(baseline, range(1, 6), run_dir)] == [(2,), (5,)]
    assert [u.replications for u in plan(baseline, range(1, 6), run_dir, redo=("degraded",))] == [(1,), (2,), (5,)]
    assert [u.replications for u in plan(baseline, range(1, 6), run_dir, redo=("timeout",))] == [(2,), (4,), (5,)]
    # the end of a run says what it kept and how to run those again, and is not all ok
    from testbed.run.ending import say_kept

    err = io.StringIO()
    assert say_kept(run_dir, baseline, range(1, 6), err) == 2
    said = err.getvalue()
    assert "1 replication(s) degraded" in said and f"squall run --resume {run_dir.root} --redo-degraded" in said
    # which program waited, how long, the tolerance and its key, and what to do
    assert f"  tcp-baseline rep-01: {cause}\n" in said
    assert ("the machine was too busy for them: run fewer lanes at once (a smaller `squall run --parallel N`)"
            in said)
    assert "`squall calibrate`" in said and "raise the scenario's cpu_wait_tolerance;" in said
    assert "1 replication(s) timed out with flows unfinished: kept as results" in said
    assert f"squall run --resume {run_dir.root} --redo-timeouts" in said


@pytest.mark.parametrize("flag", ["--redo-degraded", "--redo-timeouts"])
def test_redo_goes_with_resume(capsys, flag: str) -> None:
    assert cli_main(["run", "x.toml", flag]) == 2
    assert "go with --resume RUN_DIR" in capsys.readouterr().err


def test_cell_glob(loaded) -> None:
    sc, _ = loaded
    assert [c.cell_id for c in select_cells(sc, "*cbi")] == ["tcp-cbi"]
    # several globs, comma-separated: a cell matched by either, in the scenario's order, once
    assert [c.cell_id for c in select_cells(sc, "tcp-cbi, tcp-base*,*cbi")] == ["tcp-baseline", "tcp-cbi"]
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
    progress.tick()                      # nothing but the times changed: nothing
    progress.record("a", "failed", 30.0)
    clock.t = 3.0
    progress.tick()                      # changed, but 1.8 s since the last line ... printed
    progress.record("b", "degraded", 20.0)      # counted apart from the failed ones
    clock.t = 4.5
    progress.tick()
    clock.t = 65.0
    progress.tick()                      # nothing changed, but a minute since the last line
    progress.record("b", "timeout", 20.0)       # a result, counted apart too
    clock.t = 67.0
    progress.tick()
    assert stream.getvalue().splitlines() == [
        "[demo] 0s elapsed, cells 0/2, replications 0/4 done, 0 failed, 0 degraded, ETA ?",
        "[demo] 1s elapsed, cells 0/2, replications 1/4 done, 0 failed, 0 degraded, ETA 15s",  # 10 s x 3 left / 2 lanes
        "[demo] 3s elapsed, cells 1/2, replications 2/4 done, 1 failed, 0 degraded, ETA 20s",  # 20 s x 2 / 2
        "[demo] 4s elapsed, cells 1/2, replications 3/4 done, 1 failed, 1 degraded, ETA 10s",  # 20 s x 1 / 2
        "[demo] 1m05s elapsed, cells 1/2, replications 3/4 done, 1 failed, 1 degraded, ETA 10s",
        "[demo] 1m07s elapsed, cells 2/2, replications 4/4 done, 1 failed, 1 degraded, 1 timed out, ETA 0s",
    ]


def test_progress_names_the_running_cells_and_plans_the_eta_from_the_start() -> None:
    stream, clock = io.StringIO(), Clock()
    # cell a planned at 20 s a replication, b at 40 s; 3 + 2 replications on 2 lanes
    progress = Progress("demo", {"a": 3, "b": 2}, parallel=2, stream=stream, clock=clock,
                        estimates={"a": 20.0, "b": 40.0})
    assert progress.eta() == "1m10s"                      # (3 x 20 + 2 x 40) / 2 before anything ran
    progress.start("a", 1)
    progress.start("b", 1)
    clock.t = 10.0
    assert progress.line() == ("[demo] 10s elapsed, cells 0/2, replications 0/5 done, 0 failed, 0 degraded; "
                               "running a rep-01, b rep-01, ETA 1m00s")    # (10 + 2 x 20 + 30 + 40) / 2
    clock.t = 30.0
    progress.record("a", "ok", 30.0, 1)                   # a takes 30 s, not 20: b's plan is scaled by 1.5
    progress.start("a", 2)
    progress.start("a", 3)
    # a: 2 running at 30 s each; b: 1 running (60 s expected, 30 s done) and 1 waiting (60 s)
    assert progress._work_left_s() == 30 + 30 + 30 + 60
    assert "running b rep-01, a rep-02, 1 more" in progress.line() and progress.eta() == "1m15s"
    clock.t = 75.0
    progress.record("b", "timeout", 75.0, 1)
    progress.record("a", "ok", 40.0, 2)
    progress.record("a", "ok", 40.0, 3)
    progress.start("b", 2)
    assert progress._work_left_s() == 75.0 and progress.eta() == "38s"       # b's own measured time
    assert "cells 1/2" in progress.line() and "1 timed out" in progress.line()
    clock.t = 200.0                                       # running beyond what was expected: nothing negative
    assert progress._work_left_s() == 0.0 and progress.eta() == "0s"


def test_planned_replication_time_from_the_flows() -> None:
    from testbed.run.progress import SETUP_ESTIMATE_S, planned_replication_s

    sc = scenario.load(REPO / "scenarios" / "demo.toml")
    e0 = next(c for c in sc.cells if c.cell_id == "link-e0_tcp-baseline_http-1.0")
    # s+2s (10480 B) + 3 requests of 350 B at 64 kbit/s, and 4 round trips of 600 ms
    assert planned_replication_s(e0, sc.timeout_us) == pytest.approx(SETUP_ESTIMATE_S + 11530 * 8 / 64000 + 2.4)
    iperf3 = scenario.load(REPO / "scenarios" / "examples" / "iperf3.toml")
    # a command's length is not known before it ran: its timeout
    assert planned_replication_s(iperf3.cells[0], iperf3.timeout_us) == SETUP_ESTIMATE_S + 120
    curl = scenario.load(REPO / "scenarios" / "examples" / "curl.toml")       # served 25 kB at 64 kbit/s
    assert planned_replication_s(curl.cells[0], curl.timeout_us) == pytest.approx(SETUP_ESTIMATE_S + 25000 * 8 / 64000
                                                                                  + 2.4)


def test_end_table_medians_of_the_generators_summaries_and_the_analysed_udp_numbers() -> None:
    """A page's and a transfer's from their generators; a UDP stream's from the analysis only
    (one source of truth: the report's numbers), whatever squall-udp's receiver says; loss in
    percent, jitter in seconds."""
    def rep(page_us: int, bulk_us: int, throughput_Bps: float) -> tuple[dict, dict]:
        return ({"web": {"kind": "http", "client": {"summary": {"ok": True, "response_time_us": page_us}}},
                 "b": {"kind": "bulk", "sender": {"summary": {"bytes": 100_000, "connect_start_us": 0,
                                                              "end_us": bulk_us}}},
                 "v": {"kind": "udp", "receiver": {"summary": {"throughput_bps": 1, "jitter_mean_us": 1,
                                                               "loss": 0.75}}},
                 "c": {"kind": "command", "client": {"run_time_us": 2_000_000}}},
                {"v.throughput_Bps": throughput_Bps, "v.jitter_mean_ms": 2.0, "v.loss_pct": 1.0,
                 "c.udp.throughput_Bps": 500.0, "c.udp.jitter_mean_ms": None, "c.udp.loss_pct": 0.0})
    medians = median_metrics([rep(4_000_000, 10_000_000, 4000), rep(6_000_000, 20_000_000, 3875),
                              rep(5_000_000, 16_000_000, 3750)])
    assert medians["v"] == {"throughput": 31_000.0, "jitter": 0.002, "loss_pct": 1.0}
    assert medians_text(medians) == ("web: page time 5.00 s; b: elapsed 16.00 s, goodput 50.0 kbit/s; "
                                     "v: throughput 31.0 kbit/s, jitter 2.0 ms, loss 1.0 %; "
                                     "c: run time 2.00 s, throughput 4.0 kbit/s, loss 0.0 %")
    # before the analysis: nothing of the UDP stream, not its receiver's numbers
    assert median_metrics([(rep(4_000_000, 10_000_000, 4000)[0], {})])["v"] == {}
    assert medians_text(median_metrics([])) == "-"


def test_a_cluster_submission_remembers_what_it_redoes(loaded) -> None:
    from testbed.run.submission import Submission

    sc, run_dir = loaded
    units = plan(list(sc.cells), range(1, 2), run_dir)
    Submission.new(run_dir.root, units, 10, 2, redo=("degraded", "timeout"))
    assert Submission.load(run_dir.root, 1).redo == ("degraded", "timeout")
    # a requeued task redoes a degraded replication made before its submission, not one it made
    from testbed.run.worker import _pending

    cell = sc.cells[0].cell_id
    sub = Submission.load(run_dir.root, 1)
    for rep, started in ((1, "20000101T000000Z"), (2, "29990101T000000Z")):
        run_dir.finish(cell, rep, run_dir.begin(cell, rep), Status("degraded", "", started, 1.0, {}))
    unit = next(u for u in units if u.cell.cell_id == cell)
    again = _pending(run_dir, sub, replace(unit, replications=(1, 2)))
    assert again is not None and again.replications == (1,)
    for older, redo in (({"redo_degraded": True}, ("degraded",)), ({"redo_degraded": False}, ())):
        sub = Submission.new(run_dir.root, units, 10, 2)
        data = json.loads(sub.path.read_text())
        del data["redo"]                            # a record written before the key existed
        sub.path.write_text(json.dumps(data | older))
        assert Submission.load(run_dir.root, sub.number).redo == redo


def test_a_failed_analysis_names_what_is_missing_instead_of_calling_the_results_complete(tmp_path: Path) -> None:
    from testbed.run.runner import analyse

    out, err = io.StringIO(), io.StringIO()
    analyse(tmp_path / "not-a-run", out, err, ["tcp-cbi rep-02: missing", "tcp-cbi rep-03: partial"])
    text = err.getvalue()
    assert "2 replication(s) are missing, partial or failed (tcp-cbi rep-02: missing; tcp-cbi rep-03: partial)" in text
    assert "the analysis failed" in text and "complete" not in text


def test_a_resumed_run_finds_a_relative_channel_trace_beside_the_original_scenario(tmp_path: Path) -> None:
    from testbed.run.runner import RunOptions, reopen_run, start_run

    study = tmp_path / "study"
    (study / "traces").mkdir(parents=True)
    (study / "traces" / "c.trace").write_text("good 2s\nbad 700ms\n")
    path = study / "traced.toml"
    path.write_text('seed = 1\n[link]\nprofile = "r2"\nchannel = { trace = "traces/c.trace" }\n'
                    '[flows.web]\nkind = "http"\nworkload = "s+2s"\n')
    options = RunOptions(results=tmp_path / "results")
    sc, run_dir, _ = start_run(path, options)
    expected = str(study / "traces" / "c.trace")
    assert sc.cells[0].link.channel.trace == expected
    resumed, _, _, _ = reopen_run(run_dir.root, options)       # loads run_dir/scenario.toml
    assert resumed.cells[0].link.channel.trace == expected


def test_status_json_has_the_counts_each_replication_and_the_cluster_jobs(tmp_path: Path, monkeypatch,
                                                                          capsys) -> None:
    from testbed.run.runner import expanded
    from testbed.run.submission import Submission

    path = tmp_path / "plan.toml"
    path.write_text(SCENARIO)
    sc = scenario.load(path)
    run_dir = RunDir.create(tmp_path / "results", sc.name, sc.source, expanded(sc),
                            {"testbed": {"run": {"replications": 2, "cells": None}}})
    page = {"web": {"kind": "http", "client": {"summary": {"ok": True, "response_time_us": 4_000_000}}},
            "v": {"kind": "udp", "receiver": {"summary": {"loss": 0.75, "jitter_mean_us": 3000}}}}
    (run_dir.root / "summary").mkdir()      # the analysis' numbers: what the report prints
    (run_dir.root / "summary" / "analysis.json").write_text(json.dumps({"cells": [
        {"cell": "tcp-baseline", "replications": [{"rep": 1, "values": {"v.loss_pct": 1.5,
                                                                        "v.jitter_mean_ms": 2.5}}]}]}))
    for cell, rep, state, reason in (("tcp-baseline", 1, "ok", ""), ("tcp-baseline", 2, "failed", "flow web: x"),
                                     ("tcp-cbi", 1, "degraded", "timing error p99 2 ms")):
        work = run_dir.begin(cell, rep)
        (work / "workloads.json").write_text(json.dumps(page))
        run_dir.finish(cell, rep, work, Status(state, reason, "20260101T000000Z", 12.5, {}))
    sub = Submission.new(run_dir.root, plan(list(sc.cells), range(1, 3), run_dir), 10, 2)
    assert len(sub.units) == 2
    sub.jobs = {"arrays": [{"job_id": "77", "first_unit": 0, "units": 2}], "analysis": "78"}
    sub.save()
    from testbed.run import slurm_jobs
    from testbed.run.slurm_jobs import TaskState
    monkeypatch.setattr(slurm_jobs, "query", lambda ids: {"77_0": TaskState("77_0", "RUNNING", node="n1"),
                                                          "77_1": TaskState("77_1", "FAILED", "2:0", "n2"),
                                                          "78": TaskState("78", "PENDING")})

    assert cli_main(["status", str(run_dir.root), "--json"]) == 1
    state = json.loads(capsys.readouterr().out)
    assert (state["name"], state["replications"], state["complete"]) == (sc.name, 2, False)
    assert state["counts"] == {"ok": 1, "failed": 1, "timeout": 0, "degraded": 1, "missing": 1}
    baseline, cbi = state["cells"]
    assert baseline["cell"] == "tcp-baseline"
    # a loss in percent, a jitter in seconds: the analysis', not squall-udp's 75 % and 3 ms
    assert baseline["medians"] == {"web": {"page time": 4.0}, "v": {"jitter": 0.0025, "loss_pct": 1.5}}
    assert baseline["counts"] == {"ok": 1, "failed": 1, "timeout": 0, "degraded": 0, "missing": 0}
    assert baseline["replications"] == [
        {"replication": 1, "status": "ok", "reason": "", "started_utc": "20260101T000000Z", "duration_s": 12.5},
        {"replication": 2, "status": "failed", "reason": "flow web: x", "started_utc": "20260101T000000Z",
         "duration_s": 12.5}]
    assert cbi["medians"] == {} and [r["status"] for r in cbi["replications"]] == ["degraded", "missing"]
    (slurm,) = state["slurm"]
    assert (slurm["submission"], slurm["analysis"]) == (1, "78")
    assert slurm["states"] == {"77_0": "RUNNING", "77_1": "FAILED", "78": "PENDING"}
    assert [(t["task"], t["state"], [u["unit"] for u in t["units"]]) for t in slurm["tasks"]] == [
        ("77_0", "RUNNING", [0]), ("77_1", "FAILED", [1])]
    assert slurm["tasks"][1]["output"].startswith("(no output file")      # a failure outside any replication
    # The table says the same.
    assert cli_main(["status", str(run_dir.root)]) == 1
    text = capsys.readouterr().out
    assert "tcp-baseline rep-02: failed: flow web: x" in text and "tcp-cbi rep-01: degraded: timing" in text
    assert "web: page time 4.00 s" in text
    assert "slurm submission 1: arrays 77 (2 units), analysis 78: 1 failed, 1 running" in text
    assert "  task 77_1 (" in text and ") FAILED on n2 exit 2:0: (no output file" in text


# --- a study at the documented limits: 10 000 cells x 10 000 replications --------------------------

BIG = (GOOD.replace('"mistake"', '"big"').replace("replications = 2", "replications = 10000")
       + '[matrix]\n"link.delay" = [{delays}]\n"flows.web.start" = [{starts}]\n')


def big_scenario(directory: Path, delays: int = 100, starts: int = 100) -> Path:
    path = directory / "big.toml"
    path.write_text(BIG.format(delays=", ".join(f'"{i}ms"' for i in range(1, delays + 1)),
                               starts=", ".join(f'"{i * 10}ms"' for i in range(starts))))
    return path


def test_planning_looks_into_each_cell_once_not_for_every_status(tmp_path: Path, monkeypatch) -> None:
    """1000 cells x 10 000 replications, one finished: one listing per cell, one status read, and the
    units made only as they are taken (10^7 of them would not fit in memory as objects)."""
    sc = scenario.load(big_scenario(tmp_path, delays=10))
    run_dir = RunDir.create(tmp_path / "results", "big", "", {}, {})
    cell = sc.cells[3].cell_id
    done = run_dir.replication(cell, 7)
    done.mkdir(parents=True)
    (done / "status.json").write_text(json.dumps({"status": "ok", "reason": "", "started_utc": "x",
                                                  "duration_s": 1.0, "details": {}}))
    asked: list[tuple[str, int]] = []
    real_status = RunDir.status
    monkeypatch.setattr(RunDir, "status", lambda self, c, r: asked.append((c, r)) or real_status(self, c, r))
    seen: list[tuple[int, int]] = []
    units = plan(list(sc.cells), range(1, 10001), run_dir, progress=lambda k, n: seen.append((k, n)))
    assert asked == [(cell, 7)]
    assert len(units) == 1000 * 10000 - 1 and units.replications()[cell] == 9999
    assert [reps for c, reps in units.todo if c.cell_id != cell][0] == range(1, 10001)
    first = next(iter(units))
    assert (first.cell.cell_id, first.replications, first.keep_lane) == (sc.cells[0].cell_id, (1,), False)
    assert seen[0] == (1, 1000) and seen[-1] == (1000, 1000)


@pytest.mark.netns
def test_run_says_it_is_planning_and_stops_with_its_message_on_sigterm(tmp_path: Path) -> None:
    """10 000 x 10 000: the run directory is made, planning is said, SIGTERM ends it with squall's words."""
    import os
    import queue
    import signal
    import subprocess
    import sys
    import threading

    from conftest import lane_base

    path = big_scenario(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "testbed.cli", "run", str(path), "--results",
                             str(tmp_path / "results"), "--lane-base", str(lane_base() + 2)],
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(line) for line in proc.stderr], daemon=True)  # type: ignore
    reader.start()

    def next_line() -> str:
        try:
            return lines.get(timeout=90)
        except queue.Empty:
            return ""
    try:
        line = next_line()
        while line and "planning:" not in line:
            line = next_line()
        assert line.startswith("squall run: planning: ") and " of 10000 cells" in line, "planning is not said"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 128 + signal.SIGTERM
    finally:
        proc.kill()
        proc.wait()
    reader.join(10)
    rest = "".join(lines.get() for _ in range(lines.qsize()))
    (run,) = (tmp_path / "results").iterdir()
    assert "squall run: SIGTERM received while planning; no replication ran. Resume with:\n" \
           f"  squall run --resume {run}" in rest, rest


COMMAND_SCENARIO = """
seed = 3
replications = 1
link = "e0"
[flows.get]
kind = "command"
serve = ["20kB"]
client = ["curl", "-o", "/dev/null", "{url}"]
"""


def test_title_note_and_the_command_flows_programs_are_in_meta_json(tmp_path: Path) -> None:
    """`squall run --title/--note` (as Flent's) and the version of each program a command flow
    runs, as this machine's `PROGRAM --version` says it, beside squall's own version."""
    from testbed.run.meta import squall_version
    from testbed.run.runner import RunOptions, start_run

    path = tmp_path / "cmd.toml"
    path.write_text(COMMAND_SCENARIO)
    options = RunOptions(results=tmp_path / "results", title="first try", note="on the lab box")
    _, run_dir, _ = start_run(path, options)
    meta = json.loads((run_dir.root / "meta.json").read_text())
    assert (meta["title"], meta["note"]) == ("first try", "on the lab box")
    assert meta["squall_version"] == squall_version() and meta["host"]
    assert list(meta["flow_programs"]) == ["curl"]
    assert meta["flow_programs"]["curl"].startswith("curl ")
    assert cli_main(["run", "--resume", str(run_dir.root), "--note", "again"]) == 2


def test_expanded_json_gives_a_label_with_a_unit_its_si_value(tmp_path: Path) -> None:
    """The matrix label "50ms" is text in the tables; expanded.json's axis_si carries its value
    in SI units (the analysis writes it beside the label: `<axis>_s`)."""
    from testbed.run.runner import expanded
    from testbed.units import si_quantity

    path = tmp_path / "axes.toml"
    path.write_text(SCENARIO.replace('tcp = ["baseline", "cbi"]',
                                     '"link.down.delay" = ["50ms", "1.5s"]\ntcp = ["baseline"]'))
    cells = json.loads(json.dumps(expanded(scenario.load(path))))["cells"]
    assert [(c["axes"]["link.down.delay"], c["axis_si"]) for c in cells] == [
        ("50ms", {"link.down.delay": [0.05, "s"]}), ("1.5s", {"link.down.delay": [1.5, "s"]})]
    assert si_quantity("384kbit") == (384000, "bit/s") and si_quantity("12000B") == (12000, "B")
    assert si_quantity("e0") is None and si_quantity("1.1") is None


def test_settings_that_do_not_apply_are_named_and_hidden_in_the_report(tmp_path: Path) -> None:
    """An HTTP/1.1 flow's `parallel` (HTTP/1.0's), HTTP/1.0's `persistent` and `pipeline`, and
    the channel of a link without errors change nothing: expanded.json names them
    (`inapplicable`) and the report's parameter tables leave them out."""
    from analysis.report.describe import cell_parameters
    from testbed.run.runner import expanded

    path = tmp_path / "web.toml"
    path.write_text(SCENARIO.replace('link = "e0"', 'link = { profile = "e0", channel = "iip-short" }')
                    .replace('tcp = ["baseline", "cbi"]',
                             '"link.profile" = ["e0", "r2"]\n"flows.web.http" = ["1.0", "1.1"]'))
    cells = {c["cell"]: c for c in json.loads(json.dumps(expanded(scenario.load(path))))["cells"]}
    assert cells["profile-e0_http-1.1"]["inapplicable"] == ["link.channel", "flows.web.parallel"]
    assert cells["profile-r2_http-1.0"]["inapplicable"] == ["flows.web.persistent", "flows.web.pipeline"]
    shown = cell_parameters(cells["profile-e0_http-1.1"])
    assert "flows.web.parallel" not in shown and "flows.web.persistent" in shown
    assert not any(k.startswith("link.channel") for k in shown)
    shown = cell_parameters(cells["profile-r2_http-1.0"])
    assert shown["flows.web.parallel"] == "4" and "link.channel.bad" in shown
    assert "flows.web.pipeline" not in shown
