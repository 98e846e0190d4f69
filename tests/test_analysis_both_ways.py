"""Known answers of a replication accounted both ways and against its own instruments: the
client's packets beside the server's (connections.csv's peer_* columns, a page's client_*
values), UDP loss against what the sender says it sent, and every host's classes beside its
kernel's counters (kernel.csv, the report's table)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from analysis.report.kernel_table import kernel_table
from analysis.report.contents import plain_http_table
from analysis.aggregate.run_analysis import CellResult, analyse_run, cell_summaries
from analysis.results.layout import ReplicationRef
from analysis.aggregate.replication_values import analyse_run_replication
from analysis.aggregate.summary import write_summary
from test_analysis_support import FIXED, MOBILE, START_REALTIME_US, ScriptedLink, tcp, udp_datagram

MS = 1000
PORT = 8080
C_ISN, S_ISN = 1000, 5000


def uplink_troubles(link: ScriptedLink) -> None:
    """One HTTP/1.0 object: the server's packets all get through, but the client's first two
    SYNs and its first request are error-dropped on the uplink, so the client resends the SYN
    twice and the request once, all on its retransmission timer."""
    def client(t: int, seq: int, ack: int, flags: str, payload: int = 0, **kw: object) -> None:
        link.send(t * MS, tcp(MOBILE, FIXED, 41000, PORT, seq, ack, flags, payload), **kw)  # type: ignore[arg-type]

    def server(t: int, seq: int, ack: int, flags: str, payload: int = 0) -> None:
        link.send(t * MS, tcp(FIXED, MOBILE, PORT, 41000, seq, ack, flags, payload))

    client(0, C_ISN, 0, "S", fate="drop_err", hits=3)
    client(1000, C_ISN, 0, "S", fate="drop_err", hits=3)
    client(3000, C_ISN, 0, "S")
    server(3100, S_ISN, C_ISN + 1, "SA")
    client(3200, C_ISN + 1, S_ISN + 1, "A")
    client(3200, C_ISN + 1, S_ISN + 1, "PA", 350, fate="drop_err", hits=3)
    client(4200, C_ISN + 1, S_ISN + 1, "PA", 350)
    server(4300, S_ISN + 1, C_ISN + 351, "PA", 1000)
    server(4301, S_ISN + 1001, C_ISN + 351, "FA")
    client(4401, C_ISN + 351, S_ISN + 1002, "FA")
    server(4501, S_ISN + 1002, C_ISN + 352, "A")


def tail_lost_stream(link: ScriptedLink, n: int = 10, lost_at_end: int = 3) -> None:
    """A CBR stream whose last datagrams are error-dropped: the receiver never learns of them."""
    for seq in range(n):
        fate = "drop_err" if seq >= n - lost_at_end else "out"
        link.send(seq * 20 * MS, udp_datagram(seq, START_REALTIME_US + seq * 20 * MS, sport=40001),
                  fate=fate, hits=1)


def lost_stream(link: ScriptedLink, n: int = 4) -> None:
    """A stream of which nothing arrives."""
    for seq in range(n):
        link.send(seq * 20 * MS, udp_datagram(seq, START_REALTIME_US + seq * 20 * MS, sport=40002,
                                              dport=6002), fate="drop_err", hits=1)


WORKLOADS = {
    "web": {"kind": "http", "port": PORT, "start_us": 0,
            "client": {"host": "mobile", "exit_code": 0,
                       "summary": {"tool": "squall-http", "ok": True, "http": "1.0",
                                   "remote": f"{FIXED}:{PORT}", "response_time_us": 4_501_000,
                                   "connections": [{"conn": 0, "local": f"{MOBILE}:41000"}]}}},
    "voice": {"kind": "udp", "port": 6001, "start_us": 0,
              "sender": {"host": "fixed", "summary": {"tool": "squall-udp", "mode": "send",
                                                      "ok": True, "packets": 10}},
              "receiver": {"host": "mobile", "summary": {"tool": "squall-udp", "mode": "recv",
                                                         "ok": True, "received": 7,
                                                         "expected": 7, "lost": 0}}},
    "gone": {"kind": "udp", "port": 6002, "start_us": 0,
             "sender": {"host": "fixed", "summary": {"tool": "squall-udp", "mode": "send",
                                                     "ok": True, "packets": 4}}},
}

# What the hosts' kernels counted: the server sent nothing again, the client two SYNs and one
# request on its timer (a dummy `before` of 0: only the deltas are read)
COUNTERS = {
    "fixed": {"delta": {"TcpRetransSegs": 0, "TcpExtTCPTimeouts": 0, "TcpExtTCPSynRetrans": 0}},
    "emu": {"delta": {}},
    "mobile": {"delta": {"TcpRetransSegs": 3, "TcpExtTCPTimeouts": 3, "TcpExtTCPSynRetrans": 2,
                         "TcpExtTCPLossUndo": 0}},
}


def write_replication(rep_dir: Path, counters: dict = COUNTERS) -> Path:
    rep_dir.mkdir(parents=True)
    link = ScriptedLink()
    uplink_troubles(link)
    tail_lost_stream(link)
    lost_stream(link)
    link.write(rep_dir)
    (rep_dir / "workloads.json").write_text(json.dumps(WORKLOADS))
    (rep_dir / "kernel-counters.json").write_text(json.dumps(counters))
    (rep_dir / "status.json").write_text(json.dumps({"status": "ok", "reason": "",
                                                     "started_utc": "20261123T000000Z",
                                                     "duration_s": 5.0, "details": {}}))
    return rep_dir


def test_the_clients_packets_are_accounted_too(tmp_path: Path) -> None:
    r = analyse_run_replication(ReplicationRef("c", 1, write_replication(tmp_path / "rep-01"),
                                               "ok", ""))
    assert r.analysed, r.error
    [row] = [row for row in r.rows if row["kind"] == "tcp"]
    # measured at the server, which lost and resent nothing
    assert (row["error_drops"], row["retransmissions"]) == (0, 0)
    # the client's side of it, from the client's capture
    assert (row["peer_error_drops"], row["peer_congestion_drops"]) == (3, 0)
    assert (row["peer_retransmissions"], row["peer_syn_retransmissions"],
            row["peer_rto_events"], row["peer_retx_rto"]) == (3, 2, 3, 3)
    assert row["peer_packets_sent"] == 7 and row["ack_fate_drop_err"] == 3
    v = r.values
    assert (v["web.error_drops"], v["web.retransmissions"]) == (0, 0)
    assert (v["web.client_error_drops"], v["web.client_congestion_drops"]) == (3, 0)
    assert (v["web.client_retransmissions"], v["web.client_syn_retransmissions"],
            v["web.client_rto_events"]) == (3, 2, 3)
    assert (v["web.main.peer_error_drops"], v["web.main.peer_retransmissions"]) == (3, 3)


def test_udp_loss_counts_against_what_the_sender_sent(tmp_path: Path) -> None:
    r = analyse_run_replication(ReplicationRef("c", 1, write_replication(tmp_path / "rep-01"),
                                               "ok", ""))
    rows = {row["flow"]: row for row in r.rows if row["kind"] == "udp"}
    # the last 3 of 10 never arrived: the receiver's sequence numbers alone say 7 of 7
    assert (rows["voice"]["received"], rows["voice"]["generator_sent"],
            rows["voice"]["expected"], rows["voice"]["lost"]) == (7, 10, 10, 3)
    assert rows["voice"]["fate_drop_err"] == 3
    assert r.values["voice.lost"] == 3 and r.values["voice.error_drops"] == 3
    # nothing of the second stream arrived: it is there, all lost
    assert (rows["gone"]["received"], rows["gone"]["expected"], rows["gone"]["lost"]) == (0, 4, 4)
    assert r.values["gone.lost"] == 4


def test_each_hosts_classes_beside_its_kernels_counters(tmp_path: Path) -> None:
    root = tmp_path / "run"
    (root / "cells").mkdir(parents=True)
    (root / "scenario.toml").write_text('name = "both"\nseed = 1\nreplications = 2\nlink = "e0"\n')
    (root / "expanded.json").write_text(json.dumps([{"cell": "c", "axes": {}}]))
    (root / "meta.json").write_text("{}")
    write_replication(root / "cells" / "c" / "rep-01")
    # the second replication's kernel saw one timeout more than its captures show (say, a FIN
    # it could no longer send when the link went down)
    counters = json.loads(json.dumps(COUNTERS))
    counters["mobile"]["delta"]["TcpExtTCPTimeouts"] = 4
    write_replication(root / "cells" / "c" / "rep-02", counters)

    analysis = analyse_run(root, jobs=1, progress=None)
    v = analysis.replications[0].values
    assert (v["host.mobile.timeouts"], v["host.mobile.timeouts.kernel"]) == (3, 3)
    assert (v["host.mobile.syn_retransmissions"], v["host.mobile.syn_retransmissions.kernel"]) == (2, 2)
    assert (v["host.mobile.retransmissions"], v["host.mobile.retransmissions.kernel"]) == (3, 3)
    assert (v["host.fixed.timeouts"], v["host.fixed.timeouts.kernel"]) == (0, 0)
    assert "host.emu.timeouts" not in v

    out = write_summary(analysis)
    rows = list(csv.DictReader((out / "kernel.csv").open()))
    timeouts = [r for r in rows if (r["host"], r["quantity"]) == ("mobile", "timeouts")]
    assert [(r["replication"], r["analysis"], r["kernel"], r["difference"], r["relation"], r["holds"])
            for r in timeouts] == [("1", "3", "3", "0", "equal", "True"), ("2", "3", "4", "-1", "equal", "False")]
    assert {r["relation"] for r in rows if r["quantity"] == "fast_recoveries"} == {"at most"}
    assert {r["counters"] for r in rows if r["quantity"] == "fast_recoveries"} == {
        "TcpExtTCPSackRecovery+TcpExtTCPRenoRecovery"}

    table = kernel_table(analysis)
    assert table is not None
    by_host = {row[1]: row for row in table.rows}
    header = table.header
    mobile = dict(zip(header, by_host["mobile"]))
    assert mobile["replications"] == 2
    assert mobile["timeouts"] == "6 / 7" and mobile["SYN retx"] == "4 / 4"
    assert mobile["disagree"] == "1 of 2"
    assert dict(zip(header, by_host["fixed"]))["disagree"] == "0 of 2"


def test_the_http_table_shows_the_clients_packets_beside_the_servers(tmp_path: Path) -> None:
    r = analyse_run_replication(ReplicationRef("c", 1, write_replication(tmp_path / "rep-01"),
                                               "ok", ""))
    cell = CellResult("c", {}, r.flows, [r], cell_summaries([r]))
    table = plain_http_table([cell], "web")
    row = dict(zip(table.header, table.rows[0]))
    assert (row["error drops median (packets)"], row["retransmissions median (packets)"]) == (0, 0)
    assert (row["client's packets: error drops median (packets)"],
            row["client's packets: retransmissions median (packets)"]) == (3, 3)


def test_squall_udps_own_count_is_checked_and_the_report_says_so(tmp_path: Path) -> None:
    """A sender's summary claiming more than its host's capture shows is a warning of the
    replication, and the report's table of warnings shows it (the count stays the capture's)."""
    from analysis.aggregate.run_analysis import CellResult, RunAnalysis
    from analysis.results.layout import CellInfo, RunLayout
    from analysis.report.warnings_table import warnings_table

    rep_dir = write_replication(tmp_path / "rep-01")
    claims = json.loads((rep_dir / "workloads.json").read_text())
    claims["voice"]["sender"]["summary"]["packets"] = 12
    (rep_dir / "workloads.json").write_text(json.dumps(claims))
    ref = ReplicationRef("c", 1, rep_dir, "ok", "")
    r = analyse_run_replication(ref)
    assert r.values["voice.sent"] == 10 and r.values["voice.lost"] == 3
    [warning] = [w for w in r.warnings if "says it sent" in w]
    assert warning.endswith("squall-udp says it sent 12 datagrams, its host's capture shows 10")
    analysis = RunAnalysis(RunLayout(tmp_path, "x", [CellInfo("c", {})], [ref]),
                           [CellResult("c", {}, [], [r], {})])
    table = warnings_table(analysis)
    assert table is not None and ["c", 1, warning] in table.rows
