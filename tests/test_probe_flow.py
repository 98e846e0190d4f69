"""The `probe` flow kind (testbed/scenario/flows/probe.py) without root: its keys and their
mistakes, irtt's command lines, its `squall show` line, its summary of irtt's JSON, and the
analysis refusing to join probes the log and irtt count differently (analysis/metrics/probes.py)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from analysis.join.flows import FlowSpec
from analysis.metrics.probes import probe_rows, probe_values
from analysis.metrics.series import DELAY_COLUMNS
from testbed.errors import ConfigError
from testbed.run.status import medians_text
from testbed.scenario.flows import ProbeFlow, parse_flows_section


def parse(**keys: object) -> ProbeFlow:
    (flow,) = parse_flows_section({"p": {"kind": "probe", **keys}}, "x.toml: flows")
    assert isinstance(flow, ProbeFlow)
    return flow


def test_a_probe_flow_runs_irtts_server_and_client_with_its_keys() -> None:
    flow = parse(interval="10ms", duration="3s", length="200B", dscp="EF", direction="down")
    assert flow.hosts() == ("mobile", "fixed")      # client at the mobile host, server at the fixed
    assert flow.passive_argv(str, "198.18.0.1:7301", Path("l")) == ["irtt", "server", "-b", "198.18.0.1:7301",
                                                                   "-i", "0"]
    assert flow.active_argv(str, "198.18.0.1:7301", offset_us=0, log=Path("l"), timeout_us=1) == [
        "irtt", "client", "-i", "10000us", "-d", "3000000us", "-l", "200", "--dscp=184", "-Q", "-o", "-",
        "198.18.0.1:7301"]
    assert flow.port(2) == 7303 and flow.workload_label == "irtt 10 ms 200 B"
    assert flow.describe() == ("p: probe, irtt: 200 B probes every 10 ms for 3 s; client at the mobile host, "
                               "server at the fixed host (down); start 0 s; DSCP 46")
    assert parse(duration="1s").interval_us == 20_000 and parse(duration="1s").length == 172
    assert parse(duration="1s", direction="up").hosts() == ("fixed", "mobile")


@pytest.mark.parametrize("keys, key, words", [
    ({}, "duration", "missing"),
    ({"duration": "1s", "tool": "ping"}, "tool", "not a probe tool"),
    ({"duration": "1s", "interval": "500us"}, "interval", "at least 1 ms"),
    ({"duration": "10ms", "interval": "20ms"}, "duration", "at least the interval"),
    ({"duration": "1s", "length": "20B"}, "length", "60 B"),
    ({"duration": "1s", "length": "2000B"}, "length", "1472 B"),
    ({"duration": "1s", "workload": "s+2s"}, "workload", "unknown key"),
])
def test_probe_mistakes_name_the_key(keys: dict, key: str, words: str) -> None:
    with pytest.raises(ConfigError) as e:
        parse(**keys)
    assert f"flows.p.{key}" in str(e.value) and words in str(e.value)


IRTT = {"config": {"local_address": "198.19.0.2:40000", "remote_address": "198.18.0.1:7301",
                   "params": {"length": 100}},
        "stats": {"packets_sent": 2, "packets_received": 1, "server_packets_received": 2,
                  "rtt": {"median": 58_000_000}, "send_delay": {"median": 29_000_000},
                  "receive_delay": {"median": 29_000_000}},
        "round_trips": [{"seqno": 0, "lost": "false", "delay": {"rtt": 58_000_000, "send": 29_000_000,
                                                                 "receive": 29_000_000},
                         "timestamps": {"server": {"receive": {"wall": 10_000_000}, "send": {"wall": 10_250_000}}}},
                        {"seqno": 1, "lost": "true_down", "delay": {"send": 29_500_000}}]}


def test_the_summary_is_irtts_counts_and_medians_and_the_status_tables_rtt() -> None:
    flow = parse(duration="1s")
    summary = flow.summary(json.dumps(IRTT, indent=1))
    assert summary is not None and summary["tool"] == "irtt" and summary["rtt_median_ms"] == 58.0
    assert summary["local"] == "198.19.0.2:40000" and summary["packets_sent"] == 2
    assert ProbeFlow.main_metrics({"client": {"summary": summary}}) == {"RTT": 0.058}
    assert medians_text({"p": {"RTT": 0.058}}) == "p: RTT 58.0 ms"
    assert flow.summary("irtt: connection refused") is None
    assert flow.problem("client", 0, None, stopped=False, stderr="x") is not None
    assert flow.problem("server", None, None, stopped=True, stderr="") is None


def delays(rows: list[tuple[str, int, float, float, str, int]]) -> dict[str, np.ndarray]:
    """DELAY_COLUMNS of (dir, pkt_id, t_s, delay_ms, fate, payload_len) rows of flow `p`."""
    columns = {c: [] for c in DELAY_COLUMNS}
    for d, pkt, t, delay, fate, length in rows:
        for c, v in zip(("flow", "dir", "pkt_id", "t_s", "delay_ms", "fate", "hits", "ip_len", "payload_len",
                         "e2e_delay_ms"), ("p", d, pkt, t, delay, fate, 0, length + 28, length, delay + 0.1)):
            columns[c].append(v)
    return {c: np.array(v, dtype=object if c in ("flow", "dir", "fate") else None) for c, v in columns.items()}


def test_probes_are_joined_in_order_with_the_logs_fates(tmp_path: Path) -> None:
    (tmp_path / "p.client.stdout").write_text(json.dumps(IRTT))
    log = delays([("up", 1, 0.0, 29.0, "out", 60), ("down", 2, 0.03, 29.0, "out", 60),     # handshake
                  ("up", 3, 0.1, 29.0, "out", 100), ("down", 4, 0.13, 29.0, "out", 100),
                  ("up", 5, 0.15, 29.0, "out", 100), ("down", 6, 0.18, np.nan, "drop_sbuf", 100)])
    trips = [{"flow": "p", "request_pkt_id": 3, "reply_pkt_id": 4, "request_state": "good", "rtt_ms": 58.2},
             {"flow": "p", "request_pkt_id": 5, "reply_pkt_id": 6, "request_state": "good", "rtt_ms": None}]
    warnings: list[str] = []
    rows = probe_rows(tmp_path, [FlowSpec("p", "probe")], log, trips, warnings)
    assert warnings == []
    assert [(r["seqno"], r["request_fate"], r["reply_fate"], r["irtt_lost"]) for r in rows] == [
        (0, "out", "out", "false"), (1, "out", "drop_sbuf", "true_down")]
    assert [r["irtt_server_ms"] for r in rows] == [0.25, None]      # the turnaround irtt's RTT leaves out
    values = probe_values(rows)
    assert values["p.probes"] == 2 and values["p.probes_lost_down"] == 1 and values["p.probes_lost_up"] == 0
    assert values["p.rtt_median_ms"] == 58.0 and values["p.rtt_link_median_ms"] == 58.0
    assert values["p.owd_up_median_ms"] == 29.25          # irtt's send delays of both probes


def test_probes_counted_differently_by_the_log_and_irtt_are_not_joined(tmp_path: Path) -> None:
    (tmp_path / "p.client.stdout").write_text(json.dumps(IRTT))
    log = delays([("up", 3, 0.1, 29.0, "out", 100), ("down", 4, 0.13, 29.0, "out", 100)])
    warnings: list[str] = []
    assert probe_rows(tmp_path, [FlowSpec("p", "probe")], log, [], warnings) == []
    assert warnings == ["flow p: the emulator log took in 1 probe requests of 100 B, irtt sent 2; its probes are "
                        "not joined"]


def test_a_probe_flow_without_irtts_json_is_a_warning_not_made_up(tmp_path: Path) -> None:
    (tmp_path / "p.client.stdout").write_text("irtt: no route to host\n")
    warnings: list[str] = []
    assert probe_rows(tmp_path, [FlowSpec("p", "probe")], delays([]), [], warnings) == []
    assert warnings == [f"{tmp_path / 'p.client.stdout'}: no irtt JSON; flow p's probes are left out"]
