"""`squall analyze` on a hand-built run directory (tests/test_analysis_run_support.py):
the CSVs have the right rows, failed / missing / unanalysable replications are listed and
counted, the others are analysed with the values computed by hand."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from analysis.join.flows import match_flow, parse_workloads
from analysis.read.router_queue import queue_stats, read_queue_samples
from analysis.aggregate.run_analysis import analyse_run
from analysis.aggregate.summary import load_analysis, write_summary
from test_analysis_run_support import build_run, truncate_capture
from testbed.cli import main as squall

MOBILE = "198.18.61.2"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, tuple[int, int]]:
    root = build_run(tmp_path_factory.mktemp("run") / "fixture-20261122T030000Z")
    cut = truncate_capture(root / "cells" / "tcp-iw4" / "rep-02" / "mobile.pcap")
    assert squall(["analyze", str(root), "--jobs", "2"]) == 1  # one is unanalysable
    return root, cut


def _csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_runs_csv_lists_every_replication_with_its_state(run_dir) -> None:
    root, (frame, offset) = run_dir
    runs = {(r["cell"], r["replication"]): r for r in _csv(root / "summary" / "runs.csv")}
    assert list(runs) == [("tcp-baseline", "1"), ("tcp-baseline", "2"), ("tcp-baseline", "3"),
                          ("tcp-iw4", "1"), ("tcp-iw4", "2"), ("tcp-iw4", "3")]
    assert runs[("tcp-baseline", "2")]["status"] == "failed"
    assert runs[("tcp-baseline", "2")]["reason"] == "squall-http exited with status 1"
    assert runs[("tcp-baseline", "3")]["status"] == "missing"
    bad = runs[("tcp-iw4", "2")]
    assert bad["analysed"] == "False" and bad["web.response_time_s"] == ""
    assert "mobile.pcap" in bad["error"]
    assert f"frame {frame} at byte offset {offset}" in bad["error"]
    ok = runs[("tcp-baseline", "1")]
    assert float(ok["web.response_time_s"]) == pytest.approx(0.92)
    assert ok["web.client_retried_requests"] == "0"      # squall-http's summary, as it says it
    assert runs[("tcp-iw4", "1")]["web.response_time_s"] == "1.11"
    assert runs[("tcp-iw4", "3")]["web.response_time_s"] == "1.12"
    assert runs[("tcp-iw4", "1")]["run.error_drops"] == "1"
    assert runs[("tcp-iw4", "3")]["run.congestion_drops"] == "1"
    assert runs[("tcp-iw4", "3")]["run.fate_drop_sbuf"] == "1"


def test_connections_csv_has_one_row_per_connection_with_its_class(run_dir) -> None:
    root, _ = run_dir
    rows = _csv(root / "summary" / "connections.csv")
    # 3 connections in each of the 4 readable replications (the failed one too, marked)
    assert len(rows) == 12
    assert {r["flow"] for r in rows} == {"web"} and {r["flow_kind"] for r in rows} == {"http"}
    failed = [r for r in rows if r["cell"] == "tcp-baseline" and r["replication"] == "2"]
    assert len(failed) == 3 and {r["status"] for r in failed} == {"failed"}
    rep1 = {r["client"]: r for r in rows if r["cell"] == "tcp-iw4" and r["replication"] == "1"}
    main, small, large = (rep1[f"{MOBILE}:{p}"] for p in (41000, 41001, 41002))
    assert (main["class"], large["class"], small["class"]) == ("main", "inline1", "inline2")
    # the small object's only segment was hit and dropped, then resent 200 ms later
    assert (small["response_us"], small["error_drops"], small["retransmissions"]) == (
        "410000", "1", "1")
    assert float(small["response_throughput_bytes_per_s"]) == pytest.approx(500 / 0.41, 1e-5)
    assert (main["elapsed_us"], main["response_us"]) == ("420000", "220000")


def test_cells_csv_counts_failed_replications(run_dir) -> None:
    root, _ = run_dir
    cells = {(r["cell"], r["metric"]): r for r in _csv(root / "summary" / "cells.csv")}
    base = cells[("tcp-baseline", "web.response_time_s")]
    assert (base["n"], base["failed"], base["median"]) == ("1", "2", "0.92")
    iw4 = cells[("tcp-iw4", "web.response_time_s")]
    assert (iw4["n"], iw4["failed"]) == ("2", "1")
    assert (iw4["min"], iw4["p25"], iw4["median"], iw4["p75"], iw4["max"], iw4["mean"]) == (
        "1.11", "1.1125", "1.115", "1.1175", "1.12", "1.115")
    thro = cells[("tcp-iw4", "web.main.throughput_Bps")]
    # main response: 1000 B in 220 ms (rep 1) and in 420 ms after a send-buffer drop (rep 3)
    assert float(thro["min"]) == pytest.approx(1000 / 0.42, 1e-5)
    assert float(thro["max"]) == pytest.approx(1000 / 0.22, 1e-5)
    assert float(thro["median"]) == pytest.approx((1000 / 0.42 + 1000 / 0.22) / 2, 1e-5)


def test_analysis_json_round_trips(run_dir) -> None:
    root, _ = run_dir
    loaded = load_analysis(root)
    fresh = analyse_run(root, jobs=1, progress=None)
    assert [c.summaries for c in loaded.cells] == [c.summaries for c in fresh.cells]
    assert [[r.values for r in c.replications] for c in loaded.cells] == \
        [[r.values for r in c.replications] for c in fresh.cells]


def test_missing_file_is_unanalysable_and_named(tmp_path: Path) -> None:
    root = build_run(tmp_path / "run")
    (root / "cells" / "tcp-iw4" / "rep-01" / "emulator.log").unlink()
    analysis = analyse_run(root, jobs=1, progress=None)
    r = next(r for r in analysis.replications if r.ref.cell == "tcp-iw4" and r.ref.rep == 1)
    assert not r.analysed and r.error is not None
    assert r.error.endswith("rep-01/emulator.log: missing (plain or .gz)")
    out = write_summary(analysis)
    assert (out / "cells.csv").exists()


def test_runner_workloads_shape_matches_connections_by_endpoint() -> None:
    flows = parse_workloads({
        "bulk1": {"kind": "bulk", "port": 5001, "sender": {
            "argv": ["squall-bulk", "send"], "exit_code": 0, "summary": {
                "tool": "squall-bulk", "mode": "send", "local": "198.18.1.1:40312",
                "remote": "198.18.1.2:5001"}}},
        "bulk2": {"kind": "bulk", "port": 5001, "sender": {
            "argv": ["squall-bulk", "send"], "exit_code": 0, "summary": {
                "tool": "squall-bulk", "mode": "send", "local": "198.18.1.1:40313",
                "remote": "198.18.1.2:5001"}}},
        "voice": {"kind": "udp", "port": 6001, "receiver": {"summary": None}},
    }, "workloads.json")
    assert [(f.name, f.kind) for f in flows] == [("bulk1", "bulk"), ("bulk2", "bulk"),
                                                 ("voice", "udp")]
    assert match_flow(flows, "tcp", ("198.18.1.1", 40313), ("198.18.1.2", 5001)).name == "bulk2"
    assert match_flow(flows, "udp", ("198.18.1.1", 9), ("198.18.1.2", 6001)).name == "voice"
    unknown = match_flow(flows, "tcp", ("198.18.1.1", 1), ("198.18.1.2", 80))
    assert (unknown.name, unknown.kind) == ("tcp 198.18.1.2:80", "tcp")


def test_command_flows_are_matched_by_their_port_for_tcp_and_udp() -> None:
    """A command flow (any program) prints no summary: its connections and datagrams are its port's."""
    flows = parse_workloads({
        "perf": {"kind": "command", "port": 7001, "workload": "iperf3",
                 "client": {"argv": ["iperf3", "-c"], "exit_code": 0, "summary": None},
                 "server": {"argv": ["iperf3", "-s"], "exit_code": -15, "summary": None}},
        "bulk": {"kind": "bulk", "port": 5002, "sender": {"summary": None}},
    }, "workloads.json")
    assert [(f.name, f.kind) for f in flows] == [("perf", "command"), ("bulk", "bulk")]
    for proto in ("tcp", "udp"):
        match = match_flow(flows, proto, ("198.18.1.2", 40000), ("198.18.1.1", 7001))
        assert (match.name, match.kind) == ("perf", "command")
    # iperf3 -u -R: the server sends the datagrams from its port to the client's
    assert match_flow(flows, "udp", ("198.18.1.1", 7001), ("198.18.1.2", 40000)).name == "perf"
    assert match_flow(flows, "tcp", ("198.18.1.2", 40000), ("198.18.1.1", 5002)).name == "bulk"
    assert match_flow(flows, "udp", ("198.18.1.2", 40000), ("198.18.1.1", 5002)).name == "udp 198.18.1.1:5002"


QUEUE_TSV = """# squall-queue-monitor samples
# format 1
# device wl0
# interval_us 1000
# t0_realtime_us 1795312345678901
# columns time_us object handle parent kind backlog_bytes backlog_pkts drops overlimits requeues marks
1000\tqdisc\t1:\troot\thtb\t1084\t2\t0\t31\t0\t-
1000\tqdisc\t10:\t1:10\tpfifo\t1084\t2\t5\t0\t0\t-
1000\tqdisc\t20:\t1:20\tred\t0\t0\t0\t0\t0\t1
1000\tclass\t1:10\t1:1\thtb\t1084\t2\t0\t31\t0\t-
2000\tqdisc\t1:\troot\thtb\t2168\t4\t0\t31\t0\t-
2000\tqdisc\t10:\t1:10\tpfifo\t1626\t3\t7\t0\t0\t-
2000\tqdisc\t20:\t1:20\tred\t542\t1\t1\t0\t0\t3
# end samples 2 missed 0
"""


def test_queue_samples_sum_the_leaf_qdiscs(tmp_path: Path) -> None:
    path = tmp_path / "router-queue.tsv"
    path.write_text(QUEUE_TSV)
    samples = read_queue_samples(path)
    assert not samples.cut_short and samples.interval_us == 1000
    assert samples.series() == ([1000, 2000], [2, 4], [1084, 2168])
    stats = queue_stats(samples)
    assert stats is not None
    assert (stats.max_backlog_pkts, stats.mean_backlog_pkts, stats.drops, stats.marks) == (
        4, 3.0, 3, 2)


def test_queue_file_errors_name_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "router-queue.tsv"
    path.write_text(QUEUE_TSV.replace("2000\tqdisc\t10:\t1:10\tpfifo\t1626",
                                      "2000\tqdisc\t10:\t1:10\tpfifo\tmany"))
    with pytest.raises(ValueError, match=r"router-queue.tsv:12: column backlog_bytes"):
        read_queue_samples(path)


def test_status_json_is_the_source_of_status(tmp_path: Path) -> None:
    root = build_run(tmp_path / "run")
    (root / "cells" / "tcp-iw4" / "rep-03" / "status.json").write_text("{not json")
    analysis = analyse_run(root, jobs=1, progress=None)
    r = next(r for r in analysis.replications if r.ref.cell == "tcp-iw4" and r.ref.rep == 3)
    assert r.ref.status == "failed" and "status.json: cannot read as JSON" in r.ref.reason
    assert not r.counts


def test_corrupt_log_is_unanalysable_with_its_line(tmp_path: Path) -> None:
    root = build_run(tmp_path / "run")
    log = root / "cells" / "tcp-baseline" / "rep-01" / "emulator.log"
    lines = log.read_text().splitlines()
    assert lines[12].split("\t")[1] == "recv"
    lines[12] = lines[12].replace("\trecv\t", "\tteleported\t")
    log.write_text("\n".join(lines) + "\n")
    analysis = analyse_run(root, jobs=1, progress=None)
    r = next(r for r in analysis.replications if r.ref.cell == "tcp-baseline" and r.ref.rep == 1)
    assert not r.analysed and r.error is not None
    assert "emulator.log:13" in r.error and "teleported" in r.error
    base = analysis.cells[0].summaries["web.response_time_s"]
    assert (base.n, base.failed) == (0, 3)  # rep 1 unanalysable, rep 2 failed, rep 3 missing
