"""Real traffic through an emulated link takes the time the link parameters predict."""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import last_json_line, require_programs, run_to_completion
from testbed import netns
from testbed.capture import Capture, read_packets
from testbed.link_session import LinkSession, program_path
from testbed.processes import ProgramGroup
from testbed.simple_link import error_free

RATE_BPS, DELAY_US, MTU = 64_000, 300_000, 576
pytestmark = pytest.mark.netns


def serialisation_us(ip_len: int, rate_bps: int = RATE_BPS) -> float:
    return ip_len * 8 * 1e6 / rate_bps


def echo_rtts_us(packets) -> list[float]:
    """RTTs of ICMP echo request/reply pairs in one capture (same host clock)."""
    from scapy.layers.inet import ICMP

    sent: dict[tuple[int, int], float] = {}
    rtts = []
    for ip in packets:
        icmp = ip.getlayer(ICMP)
        key = (icmp.id, icmp.seq)
        if icmp.type == 8:
            sent[key] = float(ip.time)
        elif icmp.type == 0 and key in sent:
            rtts.append((float(ip.time) - sent.pop(key)) * 1e6)
    return rtts


def test_ping_rtt_equals_serialisation_both_ways_plus_twice_the_delay(lane, tmp_path: Path) -> None:
    require_programs("squall-emulator", "squall-npa")
    # 84-byte pings (56 B payload + 8 B ICMP + 20 B IP): 2 x 10.5 ms + 2 x 300 ms = 621 ms.
    predicted_us = 2 * serialisation_us(84) + 2 * DELAY_US
    pcap = tmp_path / "fixed.pcap"
    with LinkSession(lane, error_free(RATE_BPS, DELAY_US, MTU), tmp_path) as session:
        assert session.mtu == {"npa-router": MTU, "npa-mobile": MTU}
        with Capture(lane.ns.fixed, lane.fixed_eth.dev, pcap, f"icmp and host {lane.mobile_host}"):
            # One ping at a time (interval > RTT): no queueing, only serialisation and delay.
            netns.run_in(lane.ns.fixed, ["ping", "-n", "-c", "5", "-i", "0.8", "-s", "56", "-W", "3",
                                         lane.mobile_host], timeout=20)
    rtts = echo_rtts_us(read_packets(pcap))
    assert len(rtts) == 5
    for rtt in rtts:
        assert rtt == pytest.approx(predicted_us, abs=2_000), f"RTTs {rtts} µs; predicted {predicted_us} µs"
    assert session.result.stop_acknowledged and session.result.exit_codes["emulator"] == 0


def tcp_options_len(ns: str) -> int:
    """Bytes of TCP options in every data segment: 12 with timestamps (NOP, NOP, TS), else 0."""
    on = netns.run_in(ns, ["sysctl", "-n", "net.ipv4.tcp_timestamps"]).stdout.strip() != "0"
    return 12 if on else 0


def test_bulk_tcp_goodput_is_what_the_mss_to_mtu_ratio_allows(lane, tmp_path: Path) -> None:
    require_programs("squall-emulator", "squall-npa", "squall-bulk")
    # Goodput = rate x (MTU - 40 - TCP options) / MTU: each 576-byte segment carries
    # 576 - 20 (IP) - 20 (TCP) - 12 (timestamps) = 524 payload bytes -> 58 222 bit/s.
    options = tcp_options_len(lane.ns.fixed)
    predicted_bps = RATE_BPS * (MTU - 40 - options) / MTU
    count, length = 100, 2096   # 209 600 bytes
    # A send buffer larger than the transfer: no congestion drop on the error-free link.
    link = error_free(RATE_BPS, DELAY_US, MTU, send_buffer=1_000_000)
    port = 5001
    bulk = str(program_path("squall-bulk"))
    with LinkSession(lane, link, tmp_path / "link") as session, \
            ProgramGroup(tmp_path / "workload") as group:
        receiver = group.start("bulk-recv", lane.ns.mobile,
                               [bulk, "recv", "--listen", f"{lane.mobile_host}:{port}"])
        group.wait_ready("bulk-recv", "listening", 5)
        sent = run_to_completion(group, "bulk-send", lane.ns.fixed,
                                 [bulk, "send", "--connect", f"{lane.mobile_host}:{port}",
                                  "--count", str(count), "--length", str(length)], timeout_s=120)
        received = last_json_line(receiver, group.wait_exit("bulk-recv", 10))
    assert sent["bytes"] == received["bytes"] == count * length
    # Receiver side, first to last data byte.
    goodput_bps = 8 * received["bytes"] / ((received["last_byte_us"] - received["first_byte_us"]) / 1e6)
    assert goodput_bps == pytest.approx(predicted_bps, rel=0.03), \
        f"goodput {goodput_bps:.0f} bit/s; predicted {predicted_bps:.0f} bit/s (TCP options {options} B)"
    assert session.result.exit_codes["emulator"] == 0
