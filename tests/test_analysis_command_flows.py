"""Command flows (any program, `kind = "command"`) in the run analysis: a flow of several TCP
connections as one transfer (its values, its connections' classes), its plain table in the
report, its times in the box plots and CDF, and its UDP datagrams apart from its connections.

The run is scripted on `ScriptedLink` (100 ms each way). `perf` is iperf3 --reverse as seen
on the wire: the mobile client opens a control connection to the fixed server's port 7001 at
t = 0 and sends its 400-byte parameters; at 300 ms it opens the data connection, on which
the server sends 2000 B in 500-byte segments; 310 ms after its FIN the server sends its
100-byte results on the control connection and closes it. `get` is curl: one connection to
port 7002 at t = 0, a 100-byte request, a 1000-byte answer."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from analysis.aggregate.run_analysis import analyse_run
from analysis.aggregate.summary import write_summary
from test_analysis_report import _table
from test_analysis_support import FIXED, MOBILE, ScriptedLink, tcp, udp_datagram
from testbed.cli import main as squall

MS = 1000
SEGMENT = 500
CELL = "tcp-baseline"
DATA_DROPS = [None, None, 1]     # per replication: the data segment error-dropped once


def connection(link: ScriptedLink, t0: int, client_port: int, server_port: int, request: int,
               response: int, respond_at: int | None = None, drop: int | None = None) -> int:
    """The mobile client connects at t0 (ms) and sends `request` bytes; the server answers
    `response` bytes from `respond_at` (default t0 + 300), a segment every 10 ms, a dropped
    one resent 200 ms after the last; then the server closes, the client closes on its
    FIN. Returns the time of the server's FIN. At the server, the connection lasts from
    t0 + 100 (the SYN arrives) to its FIN + 200 (the ACK of its FIN arrives)."""
    cs, ss = 1000, 5000

    def m(t: int, seq: int, ack: int, flags: str, payload: int = 0) -> None:
        link.send(t * MS, tcp(MOBILE, FIXED, client_port, server_port, seq, ack, flags, payload))

    def f(t: int, seq: int, ack: int, flags: str, payload: int = 0, fate: str = "out") -> None:
        link.send(t * MS, tcp(FIXED, MOBILE, server_port, client_port, seq, ack, flags, payload),
                  fate=fate, hits=1 if fate == "drop_err" else 0)

    m(t0, cs, 0, "S")
    f(t0 + 100, ss, cs + 1, "SA")
    m(t0 + 200, cs + 1, ss + 1, "A")
    if request:
        m(t0 + 200, cs + 1, ss + 1, "PA", request)
    ack = cs + 1 + request
    start = t0 + 300 if respond_at is None else respond_at
    sizes = [SEGMENT] * (response // SEGMENT) + ([response % SEGMENT] if response % SEGMENT else [])
    for j, size in enumerate(sizes):
        f(start + 10 * j, ss + 1 + j * SEGMENT, ack, "PA", size,
          fate="drop_err" if j == drop else "out")
    t_fin = start + 10 * len(sizes)
    if drop is not None:
        f(t_fin + 190, ss + 1 + drop * SEGMENT, ack, "PA", sizes[drop])
        t_fin += 200
    f(t_fin, ss + 1 + response, ack, "FA")
    m(t_fin + 100, ack, ss + response + 2, "A")
    m(t_fin + 101, ack, ss + response + 2, "FA")
    f(t_fin + 201, ss + response + 2, ack + 1, "A")
    return t_fin


def script_replication(link: ScriptedLink, drop: int | None) -> None:
    data_fin = connection(link, 300, 45001, 7001, 0, 2000, drop=drop)
    connection(link, 0, 45000, 7001, 400, 100, respond_at=data_fin + 310)
    connection(link, 0, 46000, 7002, 100, 1000)


def command(port: int, program: str) -> dict:
    return {"kind": "command", "port": port, "direction": "down", "start_us": 0, "tos": 0,
            "workload": program,
            "client": {"host": "mobile", "argv": [program], "exit_code": 0, "summary": None}}


def build_command_run(root: Path, udp_port: int | None = None, udp_streams: int = 1) -> Path:
    """One cell, 3 replications of `perf` and `get`; `udp_port`: also a command flow
    `stream` whose TCP connection (`get`'s script) and 5 UDP datagrams from the server's
    port (iperf3 -u) per stream use that port (the streams at once, to client ports 47001...)."""
    root.mkdir(parents=True)
    (root / "scenario.toml").write_text('name = "cmd"\nseed = 1\nreplications = 3\n')
    flows = [{"name": name, "kind": "command"} for name in ("perf", "get")]
    (root / "expanded.json").write_text(json.dumps({"name": "cmd", "cells": [
        {"cell": CELL, "axes": {"tcp": "baseline"}, "flows": flows}]}))
    (root / "meta.json").write_text("{}")
    for rep, drop in enumerate(DATA_DROPS, start=1):
        d = root / "cells" / CELL / f"rep-{rep:02d}"
        d.mkdir(parents=True)
        link = ScriptedLink()
        script_replication(link, drop)
        workloads = {"perf": command(7001, "iperf3"), "get": command(7002, "curl")}
        if udp_port is not None:
            connection(link, 0, 47000, udp_port, 100, 1000)
            for k in range(5):
                for stream in range(udp_streams):
                    link.send(k * 20 * MS + stream * MS,
                              udp_datagram(k, k * 20 * MS, sport=udp_port, dport=47001 + stream))
            workloads["stream"] = command(udp_port, "iperf3")
        link.write(d)
        (d / "workloads.json").write_text(json.dumps(workloads))
        (d / "status.json").write_text(json.dumps({"status": "ok", "reason": ""}))
    return root


@pytest.fixture(scope="module")
def command_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = build_command_run(tmp_path_factory.mktemp("command") / "cmd-20261122T030000Z")
    assert squall(["report", str(root), "--jobs", "1"]) == 0
    return root


def _runs(root: Path) -> list[dict[str, str]]:
    with open(root / "summary" / "runs.csv", newline="") as f:
        return list(csv.DictReader(f))


def _floats(rows: list[dict[str, str]], column: str) -> list[float]:
    return [float(r[column]) for r in rows]


def test_a_flow_of_two_connections_spans_both_at_the_host_that_sent_the_most(command_run) -> None:
    runs = _runs(command_run)
    assert [r["perf.connections"] for r in runs] == ["2", "2", "2"]
    # at the fixed host (the data connection's sender): the control connection's SYN
    # arrives at 100 ms; the server's FIN on it (data FIN + 320 ms: 960 ms, 1160 ms after
    # the resent segment) is acknowledged 200 ms later. Taking the control connection at
    # its own sender (the mobile host) would make it 0 -> 1261 ms instead.
    assert _floats(runs, "perf.elapsed_s") == pytest.approx([1.06, 1.06, 1.26])
    # every connection's payload: 2000 B of data and the 400-byte parameters
    assert [r["perf.bytes"] for r in runs] == ["2400", "2400", "2400"]
    assert _floats(runs, "perf.throughput_Bps") == pytest.approx(
        [2400 / 1.06, 2400 / 1.06, 2400 / 1.26])
    assert [r["perf.retransmissions"] for r in runs] == ["0", "0", "1"]
    assert [r["perf.error_drops"] for r in runs] == ["0", "0", "1"]
    # the largest connection on its own (iperf3's data connection): SYN at 400 ms, the ACK
    # of its FIN at 840 ms (1040 ms after the resent segment)
    assert _floats(runs, "perf.main.elapsed_s") == pytest.approx([0.44, 0.44, 0.64])
    assert [r["perf.main.bytes"] for r in runs] == ["2000", "2000", "2000"]
    assert _floats(runs, "perf.main.throughput_Bps") == pytest.approx(
        [2000 / 0.44, 2000 / 0.44, 2000 / 0.64])
    # a flow's response time is that of one connection only
    assert "perf.response_s" not in runs[0] and "perf.main.response_s" in runs[0]


def test_a_flow_of_one_connection_is_measured_as_a_bulk_transfer(command_run) -> None:
    runs = _runs(command_run)
    assert [r["get.connections"] for r in runs] == ["1", "1", "1"]
    # at its sender (the server): SYN at 100 ms, the ACK of its FIN at 520 ms
    assert _floats(runs, "get.elapsed_s") == pytest.approx([0.42] * 3)
    assert _floats(runs, "get.throughput_Bps") == pytest.approx([1000 / 0.42] * 3)
    assert not [c for c in runs[0] if c.startswith("get.main.")]      # no copy of get.*


def test_the_largest_connection_is_the_flows_main_one(command_run) -> None:
    with open(command_run / "summary" / "connections.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["replication"] == "1"]
    # the data connection, measured at the server; the control connection at the client
    assert sorted((r["flow"], r["client"], r["measured_at"], r["bytes"], r["class"])
                  for r in rows) == [
        ("get", f"{MOBILE}:46000", "fixed", "1000", ""),
        ("perf", f"{MOBILE}:45000", "mobile", "400", ""),
        ("perf", f"{MOBILE}:45001", "fixed", "2000", "main")]
    assert {r["flow_kind"] for r in rows} == {"command"}


def test_the_report_has_a_plain_table_of_command_flows(command_run) -> None:
    md = (command_run / "summary" / "report.md").read_text()
    assert "every metric" not in md and "get.throughput_Bps" not in md
    table = _table(md, "Command flows: elapsed time and throughput of their TCP connections")
    header = table[0]
    assert header[:3] == ["cell", "tcp", "flow"] and header[-2:] == ["n", "failed"]
    unitless = {"cell", "tcp", "flow", "connections median", "RTO events median", "n", "failed"}
    assert all(h.endswith(")") for h in header if h not in unitless), header
    perf, get = (dict(zip(header, row)) for row in table[1:])
    assert (perf["cell"], perf["flow"], get["flow"]) == (CELL, "perf", "get")
    # elapsed 1.06, 1.06, 1.26 s
    assert [perf[f"{what} (s)"] for what in ("elapsed time median", "p25", "p75", "min", "max")] \
        == ["1.060", "1.060", "1.160", "1.060", "1.260"]
    assert perf["95 % CI of the median (s)"].count("–") == 1
    assert perf["throughput median (kbit/s)"] == f"{2400 * 8 / 1.06 / 1000:.3f}"
    assert perf["largest connection's throughput median (kbit/s)"] == \
        f"{2000 * 8 / 0.44 / 1000:.3f}"
    assert perf["connections median"] == "2"
    assert perf["retransmissions median (packets)"] == "0"        # a count: 0, 0, 1
    assert perf["error drops median (packets)"] == "0"
    assert perf["link delay of data packets, median (ms)"] == "100.0"
    assert (perf["n"], perf["failed"]) == ("3", "0")
    # one connection: the largest is the flow itself
    assert get["elapsed time median (s)"] == "0.420" and get["connections median"] == "1"
    assert get["throughput median (kbit/s)"] == f"{1000 * 8 / 0.42 / 1000:.3f}"
    assert get["largest connection's throughput median (kbit/s)"] == \
        get["throughput median (kbit/s)"]


def test_command_flows_are_in_the_box_plots_and_the_cdf_of_times(command_run, tmp_path,
                                                                 drawn_figures) -> None:
    import analysis.report.plots as plots
    from analysis.aggregate.summary import load_analysis

    figures = drawn_figures
    a = load_analysis(command_run)
    plots.plot_boxes(a, tmp_path / "boxes.png")
    plots.plot_cdf_times(a, tmp_path / "cdf-times.png")
    (boxes,) = figures["boxes.png"].axes
    assert [t.get_text() for t in boxes.get_xticklabels()] == [f"{CELL}\nperf\nn = 3",
                                                                f"{CELL}\nget\nn = 3"]
    (cdf,) = figures["cdf-times.png"].axes
    lines = {line.get_label(): sorted(line.get_xdata()) for line in cdf.get_lines()}
    # the curve rises from 0 at the smallest value
    assert lines[f"{CELL}: perf (n = 3)"] == pytest.approx([1.06, 1.06, 1.06, 1.26])
    assert lines[f"{CELL}: get (n = 3)"] == pytest.approx([0.42] * 4)


def test_a_command_flows_datagrams_do_not_overwrite_its_connections(tmp_path: Path) -> None:
    """iperf3 -u: a control connection and UDP data under one flow name."""
    root = build_command_run(tmp_path / "cmd-20261122T030000Z", udp_port=7003)
    a = analyse_run(root, jobs=1, progress=None)
    values = a.replications[0].values
    # the connection's values, as get's (the same script)
    assert values["stream.elapsed_s"] == pytest.approx(0.42)
    assert values["stream.throughput_Bps"] == pytest.approx(1000 / 0.42)
    assert values["stream.connections"] == 1
    # the datagrams' as a UDP flow's, apart
    assert (values["stream.udp.sent"], values["stream.udp.lost"]) == (5, 0)
    assert values["stream.udp.throughput_Bps"] > 0
    write_summary(a)
    assert squall(["report", str(root), "--no-plots"]) == 0
    md = (root / "summary" / "report.md").read_text()
    rows = _table(md, "UDP datagrams of command flow stream: throughput, loss, jitter, delay")
    udp = dict(zip(*rows[:2]))
    assert udp["sent median (packets)"] == "5" and udp["loss median (%)"] == "0.000"
    flows = [r[2] for r in _table(md, "Command flows: elapsed time and throughput of their "
                                      "TCP connections")[1:]]
    assert flows == ["perf", "get", "stream"]


def test_a_command_flows_several_udp_streams_count_together(tmp_path: Path) -> None:
    """iperf3 -u -P 2: two streams from the server's port; neither overwrites the other."""
    root = build_command_run(tmp_path / "cmd-20261122T030000Z", udp_port=7003, udp_streams=2)
    a = analyse_run(root, jobs=1, progress=None)
    values = a.replications[0].values
    assert values["stream.udp.streams"] == 2
    assert (values["stream.udp.sent"], values["stream.udp.received"], values["stream.udp.lost"]) == (10, 10, 0)
    # 10 datagrams of 132 B received from 0 to 81 ms: both streams' bytes over their union
    assert values["stream.udp.throughput_Bps"] == pytest.approx(10 * 132 / 0.081, rel=0.02)
    one = analyse_run(build_command_run(tmp_path / "one" / "cmd-20261122T030000Z", udp_port=7003),
                      jobs=1, progress=None).replications[0].values
    assert one["stream.udp.streams"] == 1 and one["stream.udp.sent"] == 5
