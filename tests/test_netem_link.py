"""netem's duplication and corruption on real packets through the emulator: a duplicated echo
request reaches the mobile host twice (it answers both), a corrupted echo reply never counts
as one at the fixed host, and the log names the copies and the flipped bits."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from conftest import require_programs
from testbed import netns
from testbed.lanes.capture import Capture, read_packets
from testbed.link.session import LinkSession
from testbed.link.simple import ALWAYS_GOOD, direction
from testbed.scenario.link_section import LinkConfig, NetemConfig

pytestmark = pytest.mark.netns
PINGS = 4


def log_events(path: Path) -> list[list[str]]:
    return [line.split("\t") for line in path.read_text().splitlines() if not line.startswith("#")]


def echo_types(pcap: Path) -> list[tuple[int, bool]]:
    """Per ICMP packet of the capture: its type and whether its checksum holds."""
    from scapy.layers.inet import ICMP
    from scapy.utils import checksum
    return [(ip.getlayer(ICMP).type, checksum(bytes(ip.getlayer(ICMP))) == 0)
            for ip in read_packets(pcap) if ip.getlayer(ICMP) is not None]


def ping(lane, workdir: Path) -> tuple[list[tuple[int, bool]], str]:
    """PINGS echo requests from the fixed host: the ICMP types its capture saw, ping's output."""
    pcap = workdir / "fixed.pcap"
    with Capture(lane.ns.fixed, lane.fixed_eth.dev, pcap, f"icmp and host {lane.mobile_host}"):
        done = netns.run_in(lane.ns.fixed, ["ping", "-n", "-c", str(PINGS), "-i", "0.3", "-W", "2",
                                            lane.mobile_host], check=False, timeout=30)
    return echo_types(pcap), done.stdout


def test_a_duplicated_request_is_answered_twice_and_a_corrupted_reply_is_lost(lane, tmp_path: Path) -> None:
    require_programs("squall-emulator", "squall-npa")
    plain = direction(1_000_000, 10_000, 1500)
    down = dataclasses.replace(plain, netem=NetemConfig(duplicate="100%"))
    link = LinkConfig("netem duplicate", ALWAYS_GOOD, down, plain)
    with LinkSession(lane, link, tmp_path / "dup") as session:
        types, said = ping(lane, tmp_path)
    assert types.count((8, True)) == PINGS and types.count((0, True)) == 2 * PINGS
    assert f"{PINGS} received, +" in said and "duplicates" in said   # ping may exit before the last copy
    events = log_events(session.log_path)
    copies = [e for e in events if e[1] == "duplicate"]
    assert len(copies) == PINGS and all(e[19].startswith("of=") for e in copies)
    outs = {e[3] for e in events if e[1] == "out" and e[2] == "down"}
    assert {e[3] for e in copies} <= outs          # every copy went out as a packet of its own

    up = dataclasses.replace(plain, netem=NetemConfig(corrupt="100%"))
    link = LinkConfig("netem corrupt", ALWAYS_GOOD, plain, up)
    with LinkSession(lane, link, tmp_path / "corrupt") as session:
        types, said = ping(lane, tmp_path)
    corrupted = [e for e in log_events(session.log_path) if e[1] == "corrupt"]
    assert len(corrupted) == PINGS and all(e[19].startswith("bit=") for e in corrupted)
    # one flipped bit breaks the IP header's checksum (the reply is dropped on its way) or the
    # ICMP checksum (netem fixes neither): no intact reply arrives
    assert types.count((8, True)) == PINGS and (0, True) not in types, said
