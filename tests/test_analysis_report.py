"""`squall report`: the studies' tables with values computed by hand for the fixture runs,
printed and written to summary/report.md, and a self-contained summary/report.html."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from test_analysis_run_support import build_run, truncate_capture
from test_analysis_support import FIXED, MOBILE, START_REALTIME_US, ScriptedLink, tcp, udp_datagram
from analysis.report.describe import parameter_tables
from testbed.cli import main as squall

MS = 1000


def _table(markdown: str, title: str) -> list[list[str]]:
    """The rows (cells stripped) of the markdown table under `## title`."""
    lines = markdown.splitlines()
    start = lines.index(f"## {title}")
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split(" | ")])
    return [rows[0]] + rows[2:]


@pytest.fixture(scope="module")
def http_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = build_run(tmp_path_factory.mktemp("http") / "iip-http-20261122T030000Z", "iip-http")
    truncate_capture(root / "cells" / "tcp-iw4" / "rep-02" / "mobile.pcap")
    assert squall(["report", str(root), "--jobs", "1"]) == 0
    return root, (root / "summary" / "report.md").read_text()


def test_http_table_like_iip_tables_9_to_30(http_report, capsys) -> None:
    _, md = http_report
    assert _table(md, "HTTP pages: HTTP 1.0") == [
        ["Name", "baseline tiny", "iw4 tiny"],
        # page: main 1000 B (FIN at the client 420 ms after its SYN), in-line objects
        # 80 ms later, the larger one's FIN 420 ms after their SYNs: 920 ms; iw4: 1110 ms
        # (the small object resent 200 ms later) and 1120 ms (the main object resent)
        ["Time", "0.920", "1.115"],
        # main object's response: 1000 B / 220 ms; 1000 B / 420 ms after a drop
        ["Med_thro", "4545.5", "3463.2"],
        ["Min_thro", "4545.5", "2381.0"],
        ["Max_thro", "4545.5", "4545.5"],
        # highest class median: main [0, 1] congestion drops; inline2 [1, 0] error drops
        ["Drops_c", "0", "0.5"],
        ["Drops_e", "0", "0.5"],
        ["n (failed)", "1 (2)", "2 (1)"],
    ]


def test_saarto_summary_with_sum_of_maximum_drops(http_report) -> None:
    _, md = http_report
    assert _table(md, "Summary of iw4 results: HTTP 1.0") == [
        ["WL", "tiny"],
        ["Response time (s)", "1.115"],
        ["Med th. (m) B/s", "3463.2"],
        # slowest in-line object: 500 B in 410 ms (rep 1), 500 B in 210 ms (rep 3)
        ["Slowest th. (i) B/s", f"{(500 / 0.41 + 500 / 0.21) / 2:.1f}"],
        ["Fastest th. (i) B/s", "4545.5"],
        ["Drops (c) median", "0.5"],
        ["Drops (e) median", "0.5"],
        # main: max(0, 1) + inline1: 0 + inline2: max(1, 0)
        ["Σ maximum drops", "2"],
    ]


def test_failed_replications_are_listed(http_report) -> None:
    _, md = http_report
    rows = _table(md, "Replications not in the statistics")
    assert [r[:3] for r in rows[1:]] == [["tcp-baseline", "2", "failed"],
                                         ["tcp-baseline", "3", "missing"],
                                         ["tcp-iw4", "2", "ok, unanalysable"]]
    assert re.search(r"mobile\.pcap: frame \d+ at byte offset \d+", rows[3][3])


def test_report_is_printed_and_html_is_self_contained(http_report, capsys) -> None:
    root, md = http_report
    html = (root / "summary" / "report.html").read_text()
    assert "<td>3463.2</td>" in html and "Σ maximum drops" in html
    images = re.findall(r'<img[^>]*src="([^"]*)"', html)
    assert len(images) >= 4 and all(src.startswith("data:image/png;base64,") for src in images)
    # nothing outside the file: no links (but to its own sections), scripts, style sheets
    # or remote resources
    assert not re.search(r'(href|src)="(?!data:|#)', html)
    anchors = re.findall(r'href="#([^"]+)"', html)
    assert anchors and all(f'id="{a}"' in html for a in anchors)
    assert "<script" not in html and "<link" not in html and "url(" not in html
    squall(["report", str(root)])  # from summary/analysis.json this time
    assert capsys.readouterr().out.strip() == md.strip()


# --- a traffic mixture: 3 bulk transfers and a UDP flow (IIP tables 32-36) -----------------

def bulk(link: ScriptedLink, port: int, size: int, drop: tuple[int, str] | None) -> None:
    """The fixed host sends `size` bytes to the mobile receiver in 500-byte segments from
    t = 0; a dropped segment is resent 200 ms after the last one. Elapsed (first SYN ->
    ACK of FIN at the sender) = 420 ms + 10 ms per segment after the second (+200 ms)."""
    def f(t: int, seq: int, ack: int, flags: str, payload: int = 0, **kw: object) -> None:
        link.send(t * MS, tcp(FIXED, MOBILE, port, 5001, seq, ack, flags, payload),
                  **kw)  # type: ignore[arg-type]

    def m(t: int, seq: int, ack: int, flags: str) -> None:
        link.send(t * MS, tcp(MOBILE, FIXED, 5001, port, seq, ack, flags))

    f(0, 100, 0, "S")
    m(100, 900, 101, "SA")
    f(200, 101, 901, "A")
    n = size // 500
    for j in range(n):
        fate = drop[1] if drop and drop[0] == j else "out"
        f(200 + 10 * j, 101 + 500 * j, 901, "PA", 500, fate=fate,
          hits=1 if fate == "drop_err" else 0)
    t_fin = 200 + 10 * n
    if drop:
        f(t_fin + 190, 101 + 500 * drop[0], 901, "PA", 500)
        t_fin += 200
    f(t_fin, 101 + size, 901, "FA")
    m(t_fin + 100, 901, 102 + size, "A")
    m(t_fin + 101, 901, 102 + size, "FA")
    f(t_fin + 201, 102 + size, 902, "A")


def voice(link: ScriptedLink, jitter_ms: int, dropped: int | None) -> None:
    """10 datagrams every 20 ms, delayed 100 ms, odd ones `jitter_ms` more."""
    for k in range(10):
        link.send(k * 20 * MS, udp_datagram(k, START_REALTIME_US + k * 20 * MS),
                  fate="drop_router" if k == dropped else "out",
                  delay_us=(100 + jitter_ms * (k % 2)) * MS)


MIXTURE_REPS = [  # (drops of the 3 transfers A 1000 B, B 1000 B, C 1500 B), jitter, lost
    ({"B": (1, "drop_err")}, 2, None),
    ({"A": (0, "drop_router")}, 3, None),
    ({"C": (0, "drop_err")}, 1, 4),
]


def build_mixture(root: Path, starts_us: dict[str, int] | None = None,
                  name: str = "mix") -> Path:
    """One cell, 3 replications; `starts_us`: the flows' declared start offsets; `name`: the
    scenario's (a study's name gets the study's tables)."""
    starts_us = starts_us or {}
    root.mkdir(parents=True)
    (root / "scenario.toml").write_text(f'name = "{name}"\nseed = 1\nreplications = 3\n'
                                        'link = "e0"\n')
    (root / "expanded.json").write_text(json.dumps({"name": name, "cells": [
        {"cell": "tcp-baseline_link-e0", "axes": {"tcp": "baseline", "link": "e0"}}]}))
    for rep, (drops, jitter, lost) in enumerate(MIXTURE_REPS, start=1):
        d = root / "cells" / "tcp-baseline_link-e0" / f"rep-{rep:02d}"
        d.mkdir(parents=True)
        link = ScriptedLink()
        for name, port, size in (("A", 40001, 1000), ("B", 40002, 1000), ("C", 40003, 1500)):
            bulk(link, port, size, drops.get(name))
        voice(link, jitter, lost)
        link.write(d)
        workloads = {f"bulk{n}": {"kind": "bulk", "port": 5001,
                                  "start_us": starts_us.get(f"bulk{n}", 0), "sender": {"summary": {
            "tool": "squall-bulk", "mode": "send", "ok": True, "local": f"{FIXED}:{port}",
            "remote": f"{MOBILE}:5001"}}} for n, port in (("A", 40001), ("B", 40002),
                                                         ("C", 40003))}
        workloads["voice"] = {"kind": "udp", "port": 6001, "sender": {"summary": {
            "tool": "squall-udp", "mode": "send", "ok": True, "remote": f"{MOBILE}:6001"}}}
        (d / "workloads.json").write_text(json.dumps(workloads))
        (d / "status.json").write_text(json.dumps({"status": "ok", "reason": ""}))
    return root


def test_mixture_table_like_iip_tables_32_to_36(tmp_path: Path) -> None:
    root = build_mixture(tmp_path / "iip-mixture-20261122T030000Z", name="iip-mixture")
    assert squall(["report", str(root), "--no-plots", "--jobs", "1"]) == 0
    md = (root / "summary" / "report.md").read_text()
    rows = _table(md, "Traffic mixture: TCP transfers by elapsed time and the UDP flow")
    assert rows[0] == ["tcp", "link", "TCP flow", "Elapsed min (s)", "perc25", "median",
                       "perc75", "max", "avg", "Through (B/s) median", "Rext pkts median",
                       "conges drops median", "error drops median", "UDP conges drops median",
                       "UDP error drops median", "UDP through (B/s) median",
                       "UDP jitter (ms) (min-max)"]
    # elapsed per replication: A 420/620/420 ms, B 620/420/420, C 430/430/630
    # -> fastest 420, 420, 420; medium 430, 430, 420; slowest 620, 620, 630
    udp = ["0", "0", f"{1320 / 0.183:.1f}", "(1.00-3.00)"]
    assert rows[1] == ["baseline", "e0", "fastest", "0.420", "0.420", "0.420", "0.420",
                       "0.420", "0.420", f"{1000 / 0.42:.1f}", "0", "0", "0", *udp]
    assert rows[2] == ["", "", "medium", "0.420", "0.425", "0.430", "0.430", "0.430",
                       f"{(0.43 + 0.43 + 0.42) / 3:.3f}", f"{1500 / 0.43:.1f}", "0",
                       "0", "0", *udp]
    assert rows[3] == ["", "", "slowest", "0.620", "0.620", "0.620", "0.625", "0.630",
                       f"{(0.62 + 0.62 + 0.63) / 3:.3f}", f"{1000 / 0.62:.1f}", "1",
                       "0", "1", *udp]


def test_a_transfer_starting_later_keeps_its_name(tmp_path: Path) -> None:
    root = build_mixture(tmp_path / "iip-mixture-20261122T030000Z", {"bulkC": 5_000_000},
                         "iip-mixture")
    assert squall(["report", str(root), "--no-plots", "--jobs", "1"]) == 0
    md = (root / "summary" / "report.md").read_text()
    rows = _table(md, "Traffic mixture: TCP transfers by elapsed time and the UDP flow")
    # A and B start together: 420/620, 620/420, 420/420 ms; C alone: 430, 430, 630 ms
    assert [r[2:9] for r in rows[1:]] == [
        ["fastest", "0.420", "0.420", "0.420", "0.420", "0.420", "0.420"],
        ["slowest", "0.420", "0.520", "0.620", "0.620", "0.620", f"{(0.42 + 1.24) / 3:.3f}"],
        ["bulkC", "0.430", "0.430", "0.430", "0.530", "0.630", f"{(0.86 + 0.63) / 3:.3f}"]]
    with open(root / "summary" / "runs.csv", newline="") as f:
        jain = [float(r["tcp.jain_index"]) for r in csv.DictReader(f)]
    a, b = 1000 / 0.42, 1000 / 0.62   # throughputs of the two that started together
    assert jain == pytest.approx([(a + b) ** 2 / (2 * (a * a + b * b))] * 2 + [1.0], rel=1e-5)


def test_http_columns_are_variant_major_and_tables_split_by_other_axes() -> None:
    from analysis.report.contents import http_tables
    from analysis.aggregate.run_analysis import CellResult
    from analysis.aggregate.replication_values import FlowInfo

    cells = [CellResult(f"{w}-{v}-{link}", {"link": link, "workload": w, "tcp": v},
                        [FlowInfo("web", "http", "1.1", None)], [], {})
             for link in ("e0", "r2") for w in ("s+2s", "l+8m") for v in ("baseline", "iw4")]
    tables = http_tables(cells)
    assert [t.title for t in tables] == ["HTTP pages: link e0, HTTP 1.1",
                                         "HTTP pages: link r2, HTTP 1.1"]
    assert tables[0].header == ["Name", "baseline s+2s", "baseline l+8m", "iw4 s+2s",
                                "iw4 l+8m"]
    assert [row[0] for row in tables[0].rows] == ["Time", "Med_thro", "Min_thro", "Max_thro",
                                                  "Drops_c", "Drops_e", "n (failed)"]


def test_report_reanalyses_after_a_replication_is_redone(tmp_path: Path, capsys) -> None:
    import os
    import time

    root = build_run(tmp_path / "iip-http-20261122T030000Z", "iip-http")
    assert squall(["report", str(root), "--no-plots", "--jobs", "1"]) == 0
    assert "| n (failed) | 1 (2) | 3 (0) |" in capsys.readouterr().out
    # the failed baseline replication is redone (as `squall run --resume` would)
    status = root / "cells" / "tcp-baseline" / "rep-02" / "status.json"
    status.write_text(json.dumps({"status": "ok", "reason": ""}))
    later = time.time() + 5
    os.utime(status, (later, later))
    assert squall(["report", str(root), "--no-plots", "--jobs", "1"]) == 0
    assert "| n (failed) | 2 (1) | 3 (0) |" in capsys.readouterr().out


def test_without_workloads_json_connections_get_a_generic_table(tmp_path: Path) -> None:
    root = build_run(tmp_path / "fixture-20261122T030000Z")
    for path in root.glob("cells/*/rep-*/workloads.json"):
        path.unlink()
    (root / "expanded.json").write_text(json.dumps({"cells": [
        {"cell": "tcp-baseline", "axes": {"tcp": "baseline"}},
        {"cell": "tcp-iw4", "axes": {"tcp": "iw4"}}]}))
    assert squall(["report", str(root), "--no-plots", "--jobs", "1"]) == 0
    md = (root / "summary" / "report.md").read_text()
    assert "## HTTP pages" not in md
    rows = {r[0]: r for r in _table(md, "Cell tcp-iw4: every metric")[1:]}
    # the three connections share the server endpoint: one flow named after it
    assert rows["run.tcp_connections"][1:] == ["3.000"] * 6 + ["3", "0"]
    # error drops per replication: 1, 0, 0
    assert rows["run.error_drops"][1:] == ["0.000", "0.000", "0.000", "0.500", "1.000",
                                           "0.333", "3", "0"]
    assert "tcp 198.18.60.1:8080.response_throughput_Bps" not in rows  # 3 connections


# --- a scenario of the user's own: plain tables, and a report that says what was run ----

USER_CELL = {
    "link": {"name": "custom", "channel": {"initial": "good", "trace": None,
                                           "good": {"kind": "exponential", "a_us": 4_000_000,
                                                    "b_us": None, "min_us": None, "max_us": None},
                                           "bad": {"kind": "uniform", "a_us": 500_000,
                                                   "b_us": 1_500_000, "min_us": None,
                                                   "max_us": None}},
             "down": {"bandwidth": [{"at_us": 0, "rate_bps": 384000}], "delay_us": 100_000,
                      "mtu": 1500, "send_buffer": 1500, "arq_retransmissions": 3,
                      "arq_delay_us": 200_000, "error_bad": 0.5, "in_order": True},
             "up": {"bandwidth": [{"at_us": 0, "rate_bps": 64000}], "delay_us": 100_000}},
    "router": {"engine": "emulator", "classes": [
        {"name": "EF", "rate_bps": 128000, "priority": 0,
         "queue": {"discipline": "pfifo", "limit": 10}},
        {"name": "BE", "rate_bps": 256000, "priority": 1,
         "queue": {"discipline": "pfifo", "limit": 20}}],
        "filters": [{"target": "EF", "dscp": 46, "sport": None}]},
    "flows": [{"name": "voice", "kind": "udp", "start_us": 0, "tos": 184,
               "stream": {"label": "custom", "size": 132, "rate_bps": 52800}}],
}
USER_META = {"squall_revision": "0123abc", "kernel": "Linux 6.1.0-test", "machine": "x86_64",
             "testbed": {"backend": "namespaces", "lanes": [121], "run": {"replications": 3}},
             "tools": {"tcpdump": "tcpdump version 4.99.3"}, "squall_version": "0.1.0+git.0123abc",
             "host": "testhost", "scenario_sha256": "5e" * 32, "title": "UMTS mix, first try",
             "note": "kernel 6.1 on the lab box", "flow_programs": {"iperf3": "iperf 3.12"}}


def build_user_run(root: Path) -> Path:
    """The mixture fixture as a scenario of one's own, described in full, with a DiffServ
    router stage."""
    build_mixture(root, name="umts-mix")
    data = json.loads((root / "expanded.json").read_text())
    data.update(description="bulk TCP and a CBR stream in EF over a 384/64 kbit/s link",
                seed=7, replications=3, timeout_us=120_000_000)
    for i, cell in enumerate(data["cells"]):
        cell.update(json.loads(json.dumps(USER_CELL)), tcp={"name": "baseline", "initcwnd": 2})
    (root / "expanded.json").write_text(json.dumps(data))
    (root / "meta.json").write_text(json.dumps(USER_META))
    for k, path in enumerate(sorted(root.glob("cells/*/rep-*/status.json"))):
        status = json.loads(path.read_text())     # where each replication ran (a cluster's nodes)
        status.setdefault("details", {})["provenance"] = {"host": "node-a" if k else "node-b"}
        path.write_text(json.dumps(status))
    for log in root.glob("cells/*/rep-*/emulator.log"):
        log.write_text(log.read_text() + (
            "# router down EF arrivals 10 enqueued 10 drops 0 tail_drops 0 red_drops 0 dequeue_drops 0 marks 0 "
            "backlog_pkts 0 backlog_bytes 0\n# router down BE arrivals 30 enqueued 27 drops 3 "
            "tail_drops 3 red_drops 0 dequeue_drops 0 marks 0 backlog_pkts 0 backlog_bytes 0\n"
            "# router up all arrivals 12 enqueued 10 drops 2 tail_drops 2 red_drops 0 dequeue_drops 0 marks 0 "
            "backlog_pkts 0 backlog_bytes 0\n"))     # and an uplink router ([router.up])
    return root


@pytest.fixture(scope="module")
def user_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = build_user_run(tmp_path_factory.mktemp("user") / "umts-mix-20261122T030000Z")
    assert squall(["report", str(root), "--jobs", "1"]) == 0
    return root, (root / "summary" / "report.md").read_text()


def test_the_report_says_what_was_run(user_report) -> None:
    _, md = user_report
    assert "bulk TCP and a CBR stream in EF over a 384/64 kbit/s link" in md.split("##")[0]
    run = {r[0]: r[1] for r in _table(md, "The run")[1:]}
    assert (run["seed"], run["squall revision"], run["kernel"]) == ("7", "0123abc",
                                                                    "Linux 6.1.0-test")
    assert run["testbed"] == "namespaces; lanes 121" and run["timeout per replication"] == "120 s"
    assert (run["title"], run["note"], run["host"]) == ("UMTS mix, first try",
                                                       "kernel 6.1 on the lab box", "testhost")
    assert run["squall version"] == "0.1.0+git.0123abc"
    assert run["programs the command flows ran"] == "iperf3: iperf 3.12"
    assert run["replications ran on"] == "node-a (2), node-b (1)"
    params = {r[0]: r[1] for r in _table(md, "Parameters of every cell")[1:]}
    assert params["link.down.bandwidth"] == "384 kbit/s"
    assert params["link.up.bandwidth"] == "64 kbit/s"
    assert params["link.down.delay"] == "100 ms" and params["link.down.mtu"] == "1500 B"
    assert params["link.down.arq_delay"] == "200 ms"
    assert params["link.channel.good"] == "exponential(4 s)"
    assert params["link.channel.bad"] == "uniform(500 ms, 1.5 s)"
    assert params["router.classes.EF.rate"] == "128 kbit/s"
    assert params["router.classes.BE.queue.limit"] == "20"
    assert params["router.filters[0].dscp"] == "46" and "router.filters[0].sport" not in params
    assert params["flows.voice.stream.rate"] == "52.8 kbit/s"
    assert params["tcp.initcwnd"] == "2"
    reps = _table(md, "Replications per cell")
    assert reps[0][:6] == ["cell", "tcp", "link", "n (in the statistics)", "ok", "degraded"]
    assert reps[1][3:6] == ["3", "3", "0"]


def test_degraded_replications_are_counted_and_named(tmp_path: Path) -> None:
    root = build_run(tmp_path / "run")
    status = root / "cells" / "tcp-iw4" / "rep-03" / "status.json"
    status.write_text(json.dumps({"status": "degraded",
                                  "reason": "timing error: mobile ingress p99 2300 us"}))
    assert squall(["report", str(root), "--no-plots", "--jobs", "1"]) == 0
    md = (root / "summary" / "report.md").read_text()
    reps = {r[0]: r for r in _table(md, "Replications per cell")[1:]}
    # n, ok, degraded, failed, timeout, missing, unanalysable
    assert reps["tcp-iw4"][2:] == ["2", "2", "1", "0", "0", "0", "0"]
    assert reps["tcp-baseline"][2:] == ["1", "1", "0", "1", "0", "1", "0"]
    assert ["tcp-iw4", "3", "timing error: mobile ingress p99 2300 us"] in _table(
        md, "Degraded replications: why, and what to do")
    assert not any(r[:2] == ["tcp-iw4", "3"] for r in _table(md, "Replications not in the statistics"))


def test_plain_tables_for_a_scenario_of_ones_own(user_report) -> None:
    _, md = user_report
    for jargon in ("Traffic mixture", "Rext pkts", "conges drops", "TCP flow", "B/s",
                   "| only |"):
        assert jargon not in md
    bulk = _table(md, "Bulk TCP transfers: elapsed time and throughput")
    header = bulk[0]
    # every number states its unit; the 95 % interval of the median is there (n = 3)
    unitless = {"cell", "tcp", "link", "transfer", "RTO events median", "Jain index median",
                "n", "failed"}
    assert all("(" in h for h in header if h not in unitless), header
    row = dict(zip(header, bulk[1]))
    assert row["transfer"] == "fastest" and row["n"] == "3" and row["failed"] == "0"
    assert row["elapsed time median (s)"] == "0.420"
    assert row["95 % CI of the median (s)"] == "0.420–0.420"
    assert row["throughput median (kbit/s)"] == f"{1000 / 0.42 * 8 / 1000:.3f}"
    slowest = dict(zip(header, bulk[3]))
    assert slowest["retransmissions median (packets)"] == "1"     # a count, not 1.000
    # the other way, apart: the receivers' ACKs lost nothing here
    assert [row[f"receiver's ACKs: {k} median (packets)"] for k in
            ("retransmissions", "congestion drops", "error drops")] == ["0", "0", "0"]
    udp = dict(zip(*_table(md, "UDP flow voice: throughput, loss, jitter, delay")[:2]))
    # 10 datagrams of 132 B in 183 ms; replication 3 lost one of its 10
    assert udp["throughput median (kbit/s)"] == f"{1320 / 0.183 * 8 / 1000:.3f}"
    assert udp["loss median (%)"] == "0.000" and udp["sent median (packets)"] == "10"
    # even datagrams 100 ms, odd ones 100 + jitter (2, 3, 1 ms): medians 101, 101.5, 101
    assert udp["link delay median (ms)"] == "101.0"
    queue = _table(md, "Router queue (medians over replications)")
    assert queue[0] == ["cell", "class", "max backlog (packets)", "arrivals (packets)", "drops (packets)",
                        "ECN marks (packets)"]
    # the fixture's packets pass the stage at once (their `in` and `enqueue` at one time): backlog 0
    assert [r[1:] for r in queue[1:]] == [["all classes", "0", "40", "3", "0"], ["BE", "–", "30", "3", "0"],
                                          ["EF", "–", "10", "0", "0"], ["uplink: all classes", "0", "12", "2", "0"]]


def test_an_axis_that_sets_one_key_is_not_listed_twice() -> None:
    """A matrix axis named by the key it sets (`flows.web.http`) is the key's column; a key the
    same axis does not name stays a column of its own."""
    specs = {"a": {"flows": {"web": {"http": "1.0"}}, "link": {"mtu": 576}},
             "b": {"flows": {"web": {"http": "1.1"}}, "link": {"mtu": 1500}}}
    labels = {"a": {"flows.web.http": "1.0", "mtu": "small"}, "b": {"flows.web.http": "1.1", "mtu": "big"}}
    differ = parameter_tables(specs, labels)[1]
    assert differ.header == ["cell", "flows.web.http", "mtu", "link.mtu"]
    assert differ.rows == [["a", "1.0", "small", "576 B"], ["b", "1.1", "big", "1500 B"]]


def test_a_description_with_control_characters_is_printed_escaped(tmp_path: Path) -> None:
    """An ESC sequence would drive the reader's terminal, a newline would forge a line of the report."""
    root = build_user_run(tmp_path / "umts-mix-20261122T030000Z")
    data = json.loads((root / "expanded.json").read_text())
    data["description"] = "mix\x1b[2J\n## Forged heading\rover\x07"
    (root / "expanded.json").write_text(json.dumps(data))
    assert squall(["report", str(root), "--jobs", "1"]) == 0
    md = (root / "summary" / "report.md").read_text()
    assert not any(ch in md for ch in "\x1b\r\x07")
    assert "\n## Forged heading" not in md
    assert "mix\\x1b[2J\\n## Forged heading\\rover\\x07" in md.split("\n## ")[0]
    run = {r[0]: r[1] for r in _table(md, "The run")[1:]}
    assert run["description"] == "mix\\x1b[2J\\n## Forged heading\\rover\\x07"


def test_analyze_refuses_a_summary_directory_that_is_a_symbolic_link(tmp_path: Path, capsys) -> None:
    """Root's summary files must not land wherever a link in the run directory points."""
    root = build_mixture(tmp_path / "mix-20261122T030000Z")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root / "summary").symlink_to(elsewhere)
    assert squall(["analyze", str(root), "--jobs", "1"]) == 2
    err = capsys.readouterr().err
    assert f"{root / 'summary'}: is a symbolic link" in err and "inside the run directory" in err, err
    assert list(elsewhere.iterdir()) == []


def test_degraded_replications_values_are_shown_apart_with_their_cause(tmp_path: Path, capsys) -> None:
    """n = 1 in the statistics: the two degraded replications' values are still shown, apart,
    with which program waited, the limit, and what to do."""
    from analysis.results.degraded import details_of, reason_of

    root = build_mixture(tmp_path / "mix-20261122T030000Z")
    cause = ("flow bulkA: its programs waited 30 ms for a CPU (sender squall-bulk 30 ms), 2.4 % of its "
             "1.2 s (the limit is 1 %, the scenario's cpu_wait_tolerance, and at least 10 ms)")
    for rep in (1, 2):
        (root / "cells" / "tcp-baseline_link-e0" / f"rep-{rep:02d}" / "status.json").write_text(json.dumps({
            "status": "degraded", "reason": reason_of(cause, "cpu_wait_tolerance"),
            "details": {"degraded": details_of(cause, "cpu_wait_tolerance")}}))
    assert squall(["report", str(root), "--no-plots", "--jobs", "1"]) == 0
    md = (root / "summary" / "report.md").read_text()
    assert "2 replication(s) degraded" in md
    why = _table(md, "Degraded replications: why, and what to do")
    assert why == [["cell", "rep", "cause"], ["tcp-baseline_link-e0", "1", cause],
                   ["tcp-baseline_link-e0", "2", cause]]
    note = md.split("## Degraded replications: why, and what to do")[1].split("## ")[0]
    assert "run fewer lanes at once" in note and "`squall calibrate`" in note
    assert "raise the scenario's cpu_wait_tolerance" in note
    values = _table(md, "Degraded replications: their values (not in the statistics)")
    assert values[0] == ["cell", "rep", "measure", "value", "median in the statistics", "n"]
    runs = {int(r["replication"]): float(r["tcp.slowest.elapsed_s"]) for r in csv.DictReader(
        (root / "summary" / "runs.csv").open())}
    slowest = {int(r[1]): r for r in values[1:] if r[2] == "slowest elapsed time (s)"}
    # each degraded replication's own value, beside rep 3's alone (n = 1)
    for rep in (1, 2):
        assert float(slowest[rep][3]) == pytest.approx(runs[rep], abs=1e-3)
        assert float(slowest[rep][4]) == pytest.approx(runs[3], abs=1e-3)
        assert slowest[rep][5] == "1"
    assert {r[2] for r in values[1:]} >= {"voice throughput (kbit/s)", "voice loss (%)"}
