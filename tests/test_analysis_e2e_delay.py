"""The end-to-end one-way delay of every packet (analysis/metrics/series.py, `e2e_delay_ms` of the
delays table): the receiving host's capture time minus the sending host's, checked against
scapy's reading of the two captures matched by IP id, without squall's join."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scapy.layers.inet import IP
from scapy.utils import rdpcap

from analysis.metrics.per_connection import analyse_replication
from analysis.metrics.series import link_delays
from test_analysis_support import FIXED, MOBILE, ScriptedLink, tcp, udp_datagram

INGRESS_US = (150, 40, 2000)      # sender's capture before the emulator's `in`, per datagram
EGRESS_US = (60, 900, 30)         # receiver's capture after the `out`


def scripted(tmp_path: Path) -> Path:
    """Nine datagrams down (the 5th lost on the link), an ACK up; the captures shifted from
    the log's times by known host delays."""
    link = ScriptedLink()
    for i in range(9):
        link.send(i * 10_000, udp_datagram(i, i * 10_000), fate="drop_err" if i == 4 else "out",
                  delay_us=100_000 + 1000 * i, hits=1 if i == 4 else 0)
    link.send(150_000, tcp(MOBILE, FIXED, 40001, 8080, 1, 1, "A"))
    link.fixed_frames = [(t - INGRESS_US[i % 3] if i < 9 else t, f) for i, (t, f) in enumerate(link.fixed_frames)]
    link.mobile_frames = [(t + EGRESS_US[i % 3] if i < 8 else t, f) for i, (t, f) in enumerate(link.mobile_frames)]
    link.write(tmp_path)
    return tmp_path


def scapy_delays_ms(directory: Path) -> dict[int, float]:
    """IP id -> receiver's capture time − sender's, for datagrams in both captures."""
    def times(name: str) -> dict[int, float]:
        return {p[IP].id: float(p.time) for p in rdpcap(str(directory / name)) if IP in p and p[IP].dst == MOBILE}
    sent, received = times("fixed.pcap"), times("mobile.pcap")
    return {i: (received[i] - sent[i]) * 1000 for i in sent if i in received}


def test_e2e_delay_is_what_the_two_captures_say(tmp_path: Path) -> None:
    directory = scripted(tmp_path)
    r = analyse_replication(directory)
    d = link_delays(r.log, lambda proto, src, dst: "voice" if proto == "udp" else "ack", r.capture_times)
    voice = np.flatnonzero(d["flow"] == "voice")
    expected = scapy_delays_ms(directory)
    delivered = [i for i in voice if d["fate"][i] == "out"]
    assert len(delivered) == 8 == len(expected)
    got = sorted(d["e2e_delay_ms"][delivered])
    assert got == pytest.approx(sorted(expected.values()), abs=1e-3)    # scapy: float seconds
    # the link's share plus both hosts' ways: ingress + link delay + egress
    for i in delivered:
        assert d["e2e_delay_ms"][i] > d["delay_ms"][i]
    lost = [i for i in voice if d["fate"][i] == "drop_err"]
    assert len(lost) == 1 and np.isnan(d["e2e_delay_ms"][lost[0]])
    # the ACK went up: sent by the mobile host, received by the fixed one, no host delay scripted
    (ack,) = np.flatnonzero(d["flow"] == "ack")
    assert d["dir"][ack] == "up" and d["e2e_delay_ms"][ack] == pytest.approx(d["delay_ms"][ack])


def test_without_captures_the_e2e_delay_is_unknown(tmp_path: Path) -> None:
    r = analyse_replication(scripted(tmp_path))
    d = link_delays(r.log, lambda proto, src, dst: "voice")
    assert np.isnan(d["e2e_delay_ms"]).all() and not np.isnan(d["delay_ms"]).all()
