"""Round trips of a probing program's datagrams matched in the emulator log, beside the link's
state (analysis/metrics/round_trips.py): known answers on a scripted link."""
from __future__ import annotations

from pathlib import Path

import pytest
from scapy.all import IP, UDP, Raw  # type: ignore[attr-defined]

from analysis.results.layout import ReplicationRef
from analysis.aggregate.replication_values import analyse_run_replication
from test_analysis_support import FIXED, MOBILE, ScriptedLink

MS = 1000
SERVER = 7001


def probe(src: str, dst: str, sport: int, dport: int) -> IP:
    return IP(src=src, dst=dst) / UDP(sport=sport, dport=dport) / Raw(bytes(60))


def in_bad_state(link: ScriptedLink, pkt_ids: set[int]) -> None:
    """The log's `state` column says `bad` on every event of these packets."""
    lines = []
    for t, k, text in link.log_lines:
        cols = text.split("\t")
        if cols[3].isdigit() and int(cols[3]) in pkt_ids:
            cols[5] = "bad"
        lines.append((t, k, "\t".join(cols)))
    link.log_lines = lines


def test_requests_and_replies_are_matched_with_the_links_state(tmp_path: Path) -> None:
    """10 requests up every 20 ms; the server answers 0.2 ms after each arrives. Requests 0-4
    in the good state (50 ms each way), 5-9 in the bad one (150 ms up). Request 3 is lost up,
    the reply to request 7 lost down: no round trip for them, and none made up."""
    link = ScriptedLink()
    bad: set[int] = set()
    for k in range(10):
        t = k * 20 * MS
        up_ms = 150 if k >= 5 else 50
        first = link.next_pkt_id
        link.send(t, probe(MOBILE, FIXED, 40000, SERVER), delay_us=up_ms * MS,
                  fate="drop_err" if k == 3 else "out", hits=1 if k == 3 else 0)
        if k != 3:
            link.send(t + up_ms * MS + 200, probe(FIXED, MOBILE, SERVER, 40000), delay_us=50 * MS,
                      fate="drop_err" if k == 7 else "out", hits=1 if k == 7 else 0)
        if k >= 5:
            bad |= set(range(first, link.next_pkt_id))
    in_bad_state(link, bad)
    rep = tmp_path / "rep-01"
    rep.mkdir()
    link.write(rep)
    r = analyse_run_replication(ReplicationRef("c", 1, rep, "ok", ""))
    assert r.analysed, r.error
    rows = r.round_trips
    assert [row["request_state"] for row in rows] == ["good"] * 5 + ["bad"] * 5
    assert [row["rtt_ms"] for row in rows] == pytest.approx(
        [100.2, 100.2, 100.2, None, 100.2, 200.2, 200.2, None, 200.2, 200.2])
    assert [row["request_fate"] for row in rows][3] == "drop_err" and rows[3]["reply_fate"] is None
    assert rows[7]["reply_fate"] == "drop_err" and rows[7]["reply_state"] == "bad"
    assert rows[0]["link_rtt_ms"] == pytest.approx(100.0) and rows[7]["link_rtt_ms"] is None
    flow = rows[0]["flow"]
    assert (r.values[f"{flow}.rtt.good.probes"], r.values[f"{flow}.rtt.good.answered"]) == (5, 4)
    assert (r.values[f"{flow}.rtt.bad.probes"], r.values[f"{flow}.rtt.bad.answered"]) == (5, 4)
    assert r.values[f"{flow}.rtt.good.median_ms"] == pytest.approx(100.2)
    assert r.values[f"{flow}.rtt.bad.median_ms"] == pytest.approx(200.2)


def test_one_way_datagrams_have_no_round_trips(tmp_path: Path) -> None:
    link = ScriptedLink()
    for k in range(5):
        link.send(k * 20 * MS, probe(FIXED, MOBILE, 40000, 6001))
    rep = tmp_path / "rep-01"
    rep.mkdir()
    link.write(rep)
    r = analyse_run_replication(ReplicationRef("c", 1, rep, "ok", ""))
    assert r.analysed and r.round_trips == []
    assert not [k for k in r.values if ".rtt." in k]
