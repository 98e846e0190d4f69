"""Tidy summary tables: one column per matrix axis, no column repeating another, Parquet
beside every CSV, `analysis.load_run` giving the same DataFrames from either, the time
series (throughput over time, link delays, the kernel's tcp_info samples and their plot),
the median's bootstrap interval, UDP loss, per-class router queues and the `degraded`
status."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

import analysis
from analysis.aggregate.statistics import median_ci, summarize
from analysis.aggregate.run_analysis import analyse_run
from analysis.aggregate.summary import TABLES, load_analysis, write_summary
from analysis.read.tcp_samples import COLUMNS, FORMAT_LINE, INFINITE_SSTHRESH
from test_analysis_report import build_mixture
from test_analysis_run_support import build_run
from test_analysis_support import FIXED, MOBILE, START_REALTIME_US

ROUTER_LINES = ["# router down EF arrivals 10 enqueued 10 drops 0 tail_drops 0 red_drops 0 dequeue_drops 0 "
                "marks 0 backlog_pkts 0 backlog_bytes 0",
                "# router down BE arrivals 30 enqueued 27 drops 3 tail_drops 3 red_drops 0 dequeue_drops 0 "
                "marks 1 backlog_pkts 0 backlog_bytes 0"]


CELL = "tcp-baseline_link-e0"
SAMPLER_T0_US = START_REALTIME_US - 20_000      # the samplers started 20 ms before t = 0
OTHER = ("198.18.61.9", 50000)                  # a connection of no flow (a lab's ssh session)


def sampler_line(k: int, src: tuple[str, int], dst: tuple[str, int], cwnd: int, ssthresh: int,
                 srtt_ms: int, acked: int, received: int, total_retrans: int = 0) -> str:
    """Sample k (every 50 ms from the samplers' start) of one connection, in squall-tcp-sampler's
    format 1 (instruments/README.md): rttvar 50 ms, RTO 400 ms, MSS 500."""
    return "\t".join(str(v) for v in (
        k * 50_000, src[0], src[1], dst[0], dst[1], 1, 0, cwnd, ssthresh, srtt_ms * 1000, 50_000,
        400_000, 500, 0, 0, 0, total_retrans, k, acked, received))


def write_sampler_output(rep: Path) -> None:
    """Both hosts' samples 1-5 of transfer A (40001 -> 5001): its sender's window grows from 11
    segments, its slow-start threshold is set (7) from the 4th sample on, its smoothed RTT
    grows from 210 ms by 10 ms a sample; its receiver acknowledges nothing but the SYN. The
    fixed host also samples a connection of no flow."""
    head = [FORMAT_LINE, "# interval_us 50000", f"# t0_realtime_us {SAMPLER_T0_US}",
            "\t".join(COLUMNS)]
    a, receiver = (FIXED, 40001), (MOBILE, 5001)
    fixed = [sampler_line(k, a, receiver, 10 + k, INFINITE_SSTHRESH if k < 4 else 7, 200 + 10 * k,
                          1 + 500 * k, 0, total_retrans=int(k >= 4)) for k in range(1, 6)]
    fixed.append(sampler_line(3, (FIXED, 22), OTHER, 10, INFINITE_SSTHRESH, 1, 9000, 300))
    mobile = [sampler_line(k, receiver, a, 10, INFINITE_SSTHRESH, 1, 1, 500 * k)
              for k in range(1, 6)]
    for host, lines in (("fixed", fixed), ("mobile", mobile)):
        (rep / f"{host}.tcpinfo.tsv").write_text("\n".join(
            [*head, *lines, f"# end samples 5 missed 0 rows {len(lines)}"]) + "\n")


@pytest.fixture(scope="module")
def mixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = build_mixture(tmp_path_factory.mktemp("tidy") / "mix-20261122T030000Z")
    for log in root.glob("cells/*/rep-*/emulator.log"):   # a DiffServ router stage
        log.write_text(log.read_text() + "\n".join(ROUTER_LINES) + "\n")
    write_sampler_output(root / "cells" / CELL / "rep-01")
    # the hosts' kernels counted what the analysis counts: the fixed host resent B's segment
    (root / "cells" / CELL / "rep-01" / "kernel-counters.json").write_text(json.dumps(
        {host: {"delta": {"TcpRetransSegs": n}} for host, n in (("fixed", 1), ("mobile", 0))}))
    write_summary(analyse_run(root, jobs=1, progress=None, interval_us=50_000))
    return root


def _csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_every_table_has_a_column_per_axis_after_the_cell(mixture: Path) -> None:
    for name in TABLES:
        path = mixture / "summary" / f"{name}.csv"
        rows = _csv(path)
        assert rows, name
        assert path.read_text().split("\n")[0].split(",")[:3] == ["cell", "tcp", "link"], name
        assert {(r["tcp"], r["link"]) for r in rows} == {("baseline", "e0")}, name
        assert (mixture / "summary" / f"{name}.parquet").exists()


def test_an_axis_named_like_a_column_gets_a_prefix(tmp_path: Path) -> None:
    root = build_run(tmp_path / "run")
    (root / "expanded.json").write_text(json.dumps(
        [{"cell": c, "axes": {"flow": c[4:]}} for c in ("tcp-baseline", "tcp-iw4")]))
    write_summary(analyse_run(root, jobs=1, progress=None))
    row = _csv(root / "summary" / "connections.csv")[0]
    assert list(row)[:3] == ["cell", "axis.flow", "replication"]
    assert row["flow"] == "web" and row["axis.flow"] == "baseline"
    run = analysis.load_run(root)
    assert run.axes == ["flow"] and run.connections["axis.flow"].iloc[0] == "baseline"


def test_a_label_with_a_unit_gets_its_si_value_beside_it(tmp_path: Path) -> None:
    """expanded.json's axis_si (testbed/units.py si_quantity) -> `<axis>_s` after the
    label, a number in every table (Float64 in pandas, seconds in the Parquet file's unit)."""
    root = build_run(tmp_path / "run")
    (root / "expanded.json").write_text(json.dumps(
        {"cells": [{"cell": c, "axes": {"delay": d}, "axis_si": {"delay": [s, "s"]}}
                   for c, d, s in (("tcp-baseline", "50ms", 0.05), ("tcp-iw4", "1.5s", 1.5))]}))
    write_summary(analyse_run(root, jobs=1, progress=None))
    for name in ("connections", "runs", "delays"):
        header = (root / "summary" / f"{name}.csv").read_text().split("\n")[0].split(",")
        assert header[:3] == ["cell", "delay", "delay_s"], name
    run = analysis.load_run(root)
    by_cell = dict(zip(run.runs["cell"], zip(run.runs["delay"], run.runs["delay_s"])))
    assert by_cell == {"tcp-baseline": ("50ms", 0.05), "tcp-iw4": ("1.5s", 1.5)}
    assert str(run.delays["delay_s"].dtype) == "Float64" and run.axes == ["delay"]
    schema = pq.read_schema(root / "summary" / "runs.parquet")
    assert schema.field("delay_s").metadata[b"unit"] == b"s"


def test_no_run_level_column_repeats_another(mixture: Path, tmp_path: Path) -> None:
    runs = pd.read_csv(mixture / "summary" / "runs.csv")
    values = runs.drop(columns=["cell", "tcp", "link", "replication", "status", "reason",
                                "analysed", "error"])
    # a ranked role and a flow are different columns only where the ranking can differ
    # from one replication to the next; totals and counters aside, no two are equal
    bulk = [c for c in values if c.startswith(("bulkA.", "bulkB.", "bulkC.", "tcp."))
            and c.endswith(".elapsed_s")]
    assert sorted(bulk) == ["bulkA.elapsed_s", "bulkB.elapsed_s", "bulkC.elapsed_s",
                            "tcp.fastest.elapsed_s", "tcp.medium.elapsed_s",
                            "tcp.slowest.elapsed_s"]
    # one transfer alone: its flow's columns only (no tcp.only.* copy of them)
    alone = build_mixture(tmp_path / "alone-20261122T030000Z", {"bulkB": 5_000_000,
                                                                 "bulkC": 5_000_000})
    write_summary(analyse_run(alone, jobs=1, progress=None))
    columns = list(pd.read_csv(alone / "summary" / "runs.csv").columns)
    assert not [c for c in columns if c.startswith("tcp.only.")]
    assert "bulkA.elapsed_s" in columns and "tcp.transfers" in columns


def test_load_run_gives_the_same_frames_from_parquet_and_csv(mixture: Path) -> None:
    typed = analysis.load_run(mixture, analyse=False)
    text = analysis.load_run(mixture, analyse=False, source="csv")
    assert typed.name == "mix" and typed.axes == ["tcp", "link"]
    for name in TABLES:
        pd.testing.assert_frame_equal(getattr(typed, name), getattr(text, name), rtol=1e-11)
    # and the same numbers as the analysis wrote
    fresh = analyse_run(mixture, jobs=1, progress=None, interval_us=50_000)
    runs = typed.runs.set_index("replication")
    for r in fresh.replications:
        for key, value in r.values.items():
            got = runs.loc[r.ref.rep, key]
            assert (pd.isna(got) if value is None else got == pytest.approx(value, rel=1e-11)), key
    assert str(runs["tcp.transfers"].dtype) == "Int64"          # counts stay integers
    cells = typed.cells.set_index("metric")
    assert cells.loc["bulkA.elapsed_s", "n"] == 3


def test_load_run_analyses_a_run_that_was_not(tmp_path: Path) -> None:
    root = build_mixture(tmp_path / "mix-20261122T030000Z")
    with pytest.raises(FileNotFoundError, match="squall analyze"):
        analysis.load_run(root, analyse=False)
    run = analysis.load_run(root)
    assert len(run.runs) == 3 and (root / "summary" / "runs.parquet").exists()


def test_udp_loss_and_router_classes(mixture: Path) -> None:
    run = analysis.load_run(mixture, analyse=False)
    runs = run.runs.set_index("replication")
    # 10 datagrams; replication 3 lost the 5th (a router drop)
    assert list(runs["voice.sent"]) == [10, 10, 10]
    assert list(runs["voice.lost"]) == [0, 0, 1]
    assert list(runs["voice.loss_pct"]) == [0.0, 0.0, 10.0]
    udp = run.connections[run.connections.kind == "udp"].sort_values("replication")
    assert list(udp.congestion_drops) == [0, 0, 1] and list(udp.error_drops) == [0, 0, 0]
    assert list(runs["queue.EF.arrivals"]) == [10] * 3
    assert list(runs["queue.BE.drops"]) == [3] * 3 and list(runs["queue.BE.marks"]) == [1] * 3
    assert list(runs["queue.drops"]) == [3] * 3 and list(runs["queue.arrivals"]) == [40] * 3


def test_tc_router_queues_per_class(tmp_path: Path) -> None:
    root = build_mixture(tmp_path / "mix-20261122T030000Z")
    data = json.loads((root / "expanded.json").read_text())
    data["cells"][0]["router"] = {"classes": [{"name": "UDP"}, {"name": "TCP"}]}
    (root / "expanded.json").write_text(json.dumps(data))
    tsv = ("# format 1\n# interval_us 1000\n"
           "1000\tqdisc\t1:\troot\thtb\t0\t0\t0\t0\t0\t-\n"
           "1000\tqdisc\t10:\t1:10\tpfifo\t160\t1\t0\t0\t0\t-\n"
           "1000\tqdisc\t20:\t1:20\tpfifo\t3000\t5\t2\t0\t0\t-\n"
           "2000\tqdisc\t1:\troot\thtb\t0\t0\t0\t0\t0\t-\n"
           "2000\tqdisc\t10:\t1:10\tpfifo\t0\t0\t0\t0\t0\t-\n"
           "2000\tqdisc\t20:\t1:20\tpfifo\t6000\t10\t7\t0\t0\t-\n# end samples 2\n")
    for rep in root.glob("cells/*/rep-*"):
        (rep / "router-queue.tsv").write_text(tsv)
    values = analyse_run(root, jobs=1, progress=None).replications[0].values
    assert (values["queue.UDP.max_backlog_pkts"], values["queue.TCP.max_backlog_pkts"],
            values["queue.max_backlog_pkts"]) == (1, 10, 10)
    assert (values["queue.UDP.drops"], values["queue.TCP.drops"], values["queue.drops"]) == (
        0, 5, 5)
    assert values["queue.TCP.mean_backlog_pkts"] == 7.5


def test_throughput_series_per_flow(mixture: Path) -> None:
    run = analysis.load_run(mixture, analyse=False)
    voice = run.throughput[(run.throughput.flow == "voice") & (run.throughput.replication == 1)]
    # 10 datagrams of 132 B sent every 20 ms from t = 0, received 100 ms later (odd ones
    # 2 ms more): bins of 50 ms from 100 ms
    assert list(voice.t_s) == pytest.approx([0.1, 0.15, 0.2, 0.25])
    assert list(voice.bytes) == [3 * 132, 2 * 132, 3 * 132, 2 * 132]
    assert list(voice.kbit_per_s) == pytest.approx([3 * 132 * 8 / 50, 2 * 132 * 8 / 50] * 2)
    assert set(voice.interval_s) == {0.05} and set(voice.flow_kind) == {"udp"}
    bulk = run.throughput[(run.throughput.flow == "bulkA") & (run.throughput.replication == 1)]
    assert bulk.bytes.sum() == 1000                  # 2 segments of 500 B, none lost
    assert set(run.throughput.flow) == {"bulkA", "bulkB", "bulkC", "voice"}


def test_link_delays_per_packet(mixture: Path) -> None:
    run = analysis.load_run(mixture, analyse=False)
    voice = run.delays[(run.delays.flow == "voice")].sort_values(["replication", "t_s"])
    rep1 = voice[voice.replication == 1]
    # jitter 2 ms in replication 1: odd datagrams 102 ms
    assert list(rep1.delay_ms) == [100.0, 102.0] * 5
    assert list(rep1.t_s) == pytest.approx([k * 0.02 for k in range(10)])
    assert set(rep1.dir) == {"down"} and set(rep1.fate) == {"out"}
    rep3 = voice[voice.replication == 3]
    dropped = rep3[rep3.fate == "drop_router"]
    assert list(dropped.t_s) == pytest.approx([0.08]) and dropped.delay_ms.isna().all()
    # bulk B's second segment hit once and dropped in replication 1 (IIP error drop)
    b = run.delays[(run.delays.flow == "bulkB") & (run.delays.replication == 1)]
    err = b[b.fate == "drop_err"]
    assert len(err) == 1 and list(err.hits) == [1] and list(err.payload_len) == [500]
    assert set(b.dir) == {"down", "up"}              # the ACKs too


def test_tcpinfo_table_has_each_hosts_samples_on_the_emulators_clock(mixture: Path) -> None:
    rows = _csv(mixture / "summary" / "tcpinfo.csv")
    assert len(rows) == 11 and {(r["cell"], r["replication"]) for r in rows} == {(CELL, "1")}
    sender = [r for r in rows if r["host"] == "fixed" and r["sport"] == "40001"]
    # the samplers started 20 ms before the emulator's t = 0
    assert [r["t_s"] for r in sender] == ["0.03", "0.08", "0.13", "0.18", "0.23"]
    assert {(r["flow"], r["src"], r["dst"], r["dport"]) for r in sender} == {
        ("bulkA", FIXED, MOBILE, "5001")}
    assert [r["cwnd"] for r in sender] == ["11", "12", "13", "14", "15"]
    # the kernel's "infinite" initial threshold is no value
    assert [r["ssthresh"] for r in sender] == ["", "", "", "7", "7"]
    assert [r["srtt_ms"] for r in sender] == ["210.0", "220.0", "230.0", "240.0", "250.0"]
    assert {(r["rttvar_ms"], r["rto_ms"], r["mss"]) for r in sender} == {("50.0", "400.0", "500")}
    assert [r["total_retrans"] for r in sender] == ["0", "0", "0", "1", "1"]
    # the same connection at its receiver: the flow's too
    receiver = [r for r in rows if r["host"] == "mobile"]
    assert {(r["flow"], r["sport"], r["bytes_acked"]) for r in receiver} == {("bulkA", "5001", "1")}
    assert [r["bytes_received"] for r in receiver] == ["500", "1000", "1500", "2000", "2500"]
    other = [r for r in rows if r["dport"] == str(OTHER[1])]
    assert [(r["host"], r["flow"], r["t_s"]) for r in other] == [("fixed", "", "0.13")]


def test_load_run_gives_the_tcpinfo_samples_typed(mixture: Path) -> None:
    samples = analysis.load_run(mixture, analyse=False).tcpinfo
    assert [str(samples[c].dtype) for c in ("t_s", "cwnd", "ssthresh", "srtt_ms", "flow")] == [
        "Float64", "Int64", "Int64", "Float64", "string"]
    sender = samples[(samples.host == "fixed") & (samples.sport == 40001)]
    assert list(sender.t_s) == pytest.approx([0.03, 0.08, 0.13, 0.18, 0.23])
    assert list(sender.ssthresh.isna()) == [True, True, True, False, False]
    assert list(sender.ssthresh.dropna()) == [7, 7] and list(sender.rto_ms) == [400.0] * 5
    assert samples[samples.dport == OTHER[1]].flow.isna().all()    # no flow: <NA>
    # docs/analysis-in-python.md: the data senders (bytes_acked grows) per variant and flow
    senders = samples[samples.bytes_acked > 1]
    assert senders.groupby(["tcp", "flow"]).cwnd.max().to_dict() == {("baseline", "bulkA"): 15}
    assert senders.groupby(["tcp", "flow"]).srtt_ms.median().to_dict() == {
        ("baseline", "bulkA"): 230.0}


def test_tcpinfo_plot_draws_each_data_senders_window_and_rtt(mixture: Path, tmp_path: Path,
                                                           drawn_figures) -> None:
    import analysis.report.plots as plots

    figures = drawn_figures
    written = plots.plot_run(load_analysis(mixture), tmp_path, CELL, 1)
    out = tmp_path / f"tcpinfo_{CELL}_rep-01.png"
    assert out in written and out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in out.with_suffix(".svg").read_bytes()[:2000]
    window, rtt = figures[out.name].axes
    # transfer A's sender only: not its receiver (nothing acknowledged), not the connection
    # of no flow
    (cwnd, ssthresh), (srtt, rto) = window.get_lines(), rtt.get_lines()
    assert cwnd.get_label() == "bulkA fixed:40001->5001 cwnd"
    times = [0.03, 0.08, 0.13, 0.18, 0.23]
    for line in (cwnd, ssthresh, srtt, rto):
        assert list(line.get_xdata()) == pytest.approx(times)
    assert list(cwnd.get_ydata()) == [11, 12, 13, 14, 15]
    assert [float(y) for y in ssthresh.get_ydata()][3:] == [7.0, 7.0]
    assert all(pd.isna(y) for y in ssthresh.get_ydata()[:3])
    assert list(srtt.get_ydata()) == [210.0, 220.0, 230.0, 240.0, 250.0]
    assert list(rto.get_ydata()) == [400.0] * 5


def test_load_run_gives_the_kernel_counters_beside_the_analysis(mixture: Path) -> None:
    kernel = analysis.load_run(mixture, analyse=False).kernel
    assert set(kernel.replication) == {1, 2, 3}
    retx = kernel[(kernel.replication == 1) & (kernel.quantity == "retransmissions")]
    assert [str(retx[c].dtype) for c in ("analysis", "kernel", "holds", "relation")] == [
        "Int64", "Int64", "boolean", "string"]
    assert retx[["host", "analysis", "kernel", "difference", "relation", "holds", "counters"]
                ].values.tolist() == [["fixed", 1, 1, 0, "equal", True, "TcpRetransSegs"],
                                      ["mobile", 0, 0, 0, "equal", True, "TcpRetransSegs"]]
    # without kernel-counters.json the analysis' count stands alone
    assert kernel[kernel.replication == 2].kernel.isna().all()


def test_throughput_bins_agree_with_tshark_io_stat(mixture: Path) -> None:
    """An independent count: tshark's io,stat over the receiver's capture (its intervals
    start at the capture's first frame, here t = 100 ms: the shift is one bin of 50 ms
    plus a whole number of bins, so the bins line up)."""
    if shutil.which("tshark") is None:
        pytest.skip("tshark is not installed (scripts/install-deps installs it)")
    rep = mixture / "cells" / "tcp-baseline_link-e0" / "rep-01"
    out = subprocess.run(["tshark", "-r", str(rep / "mobile.pcap"), "-q", "-z",
                          "io,stat,0.05,SUM(tcp.len)tcp.len && tcp.dstport==5001,"
                          "SUM(udp.length)udp.length && udp.dstport==6001,"
                          "COUNT(udp.length)udp.length && udp.dstport==6001"],
                         capture_output=True, text=True, check=True).stdout
    theirs = []
    for line in out.splitlines():
        cols = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cols) >= 4 and "<>" in cols[0]:
            start = float(cols[0].split("<>")[0])
            theirs.append((round(start + 0.1, 3), int(cols[1]), int(cols[2]) - 8 * int(cols[3])))
    run = analysis.load_run(mixture, analyse=False)
    t = run.throughput[run.throughput.replication == 1]
    ours_tcp = t[t.flow_kind == "bulk"].groupby("t_s").bytes.sum()
    ours_udp = t[t.flow_kind == "udp"].set_index("t_s").bytes
    assert theirs, out
    for start, tcp_bytes, udp_bytes in theirs:
        assert ours_tcp.get(start, 0) == tcp_bytes, start
        assert ours_udp.get(start, 0) == udp_bytes, start
    assert sum(b for _, b, _ in theirs) == ours_tcp.sum() == 3500
    assert START_REALTIME_US  # the captures' clock is the log's


def test_median_interval_is_seeded_and_holds_the_median() -> None:
    values = [12.0, 9.5, 11.0, 14.2, 10.1, 13.3, 9.9, 12.8]
    low, high = median_ci(values)
    s = summarize(values)
    assert low is not None and high is not None
    assert low <= s.median <= high and min(values) <= low and high <= max(values)
    assert median_ci(list(reversed(values))) == (low, high)   # the values decide, not order
    assert (s.median_ci_low, s.median_ci_high) == (low, high)
    assert median_ci([1.0, 2.0]) == (None, None)
    assert median_ci([5.0] * 10) == (5.0, 5.0)


def test_degraded_replications_are_analysed_not_counted(tmp_path: Path) -> None:
    root = build_run(tmp_path / "run")
    status = root / "cells" / "tcp-iw4" / "rep-03" / "status.json"
    data = json.loads(status.read_text())
    status.write_text(json.dumps({**data, "status": "degraded",
                                  "reason": "timing error: mobile ingress p99 2300 us"}))
    a = analyse_run(root, jobs=1, progress=None)
    iw4 = next(c for c in a.cells if c.cell == "tcp-iw4")
    # analysed, but in the statistics only as failed (as failed and timed-out ones)
    assert iw4.summaries["web.response_time_s"].n == 2
    assert iw4.summaries["web.response_time_s"].failed == 1
    assert [r.ref.status for r in iw4.replications] == ["ok", "ok", "degraded"]
    assert iw4.replications[2].analysed and not iw4.replications[2].counts


def test_tcpinfo_plot_draws_only_the_data_sending_end(mixture: Path, tmp_path: Path, drawn_figures) -> None:
    """A receiver whose own bytes are acknowledged too (an HTTP client's requests, iperf3's control
    messages) is not drawn under the caption that says the sender is."""
    import analysis.report.plots as plots

    samples = analysis.load_run(mixture, analyse=False).tcpinfo
    samples.loc[samples.host == "mobile", "bytes_acked"] = 300       # the receiver's requests
    assert "the receiving end is not drawn" in plots.CAPTIONS["tcpinfo"]
    rep_dir = mixture / "cells" / CELL / "rep-01"
    out = plots.plot_tcpinfo(CELL, 1, rep_dir, tmp_path / "tcpinfo.png", samples)
    assert out is not None
    window, _ = drawn_figures[out.name].axes
    labels = [line.get_label() for line in window.get_lines() if not line.get_label().startswith("_")]
    assert labels == ["bulkA fixed:40001->5001 cwnd"]
