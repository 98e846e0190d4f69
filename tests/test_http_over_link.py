"""A study-shaped run end to end: nginx on the fixed host, squall-http on the mobile host,
the IIP optimal link (64 kbit/s, 300 ms, MTU 576) emulated in between, TCP profile applied
after the link is up. The server's first flights show the profile's initial window."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from scapy.layers.inet import IP, TCP

from conftest import require_programs, workload_lane
from testbed.lanes import lane as lanes
from testbed.lanes.hosts import NamespaceTestbed
from testbed import tcp_profile
from testbed.lanes.capture import Capture, read_packets
from testbed.lanes.http_server import HttpServer, HttpServerConfig
from testbed.link.session import LinkSession
from testbed.paths import bin_dir
from testbed.processes import ProgramGroup
from testbed.link.simple import error_free
from testbed.scenario.workloads import load

pytestmark = pytest.mark.netns
LANE = workload_lane(4)
PORT = 8080


def server_first_flights(packets: list[IP], server: str) -> list[int]:
    """Per connection: data segments the server sent before the client acknowledged any."""
    flights = []
    for port in sorted({p[TCP].dport for p in packets if p.src == server}):
        conn = [p for p in packets if port in (p[TCP].sport, p[TCP].dport)]
        isn = next(p[TCP].seq for p in conn if p.src == server and p[TCP].flags.S)
        count = 0
        for p in conn:
            if p.src == server and len(p[TCP].payload) > 0:
                count += 1
            elif p.src != server and p[TCP].ack > isn + 1:
                break
        flights.append(count)
    return flights


@pytest.mark.parametrize("profile, iw", [("baseline", 2), ("iw4", 4)])
def test_http10_page_over_the_emulated_link(tmp_path: Path, profile: str, iw: int) -> None:
    require_programs("squall-emulator", "squall-npa", "squall-http")
    page = load("s+2s")
    with lanes.lane_up(LANE) as lane, LinkSession(lane, error_free(64_000, 300_000, 576), tmp_path / "link"):
        settings = NamespaceTestbed(lane).apply_tcp(tcp_profile.load(profile))
        cfg = HttpServerConfig(lane.ns.fixed, lane.fixed_host, PORT, tmp_path / "server", [page.sizes])
        with HttpServer(cfg), ProgramGroup(tmp_path / "progs") as group, \
                Capture(lane.ns.fixed, "eth0", tmp_path / "fixed.pcap", f"tcp port {PORT}"):
            group.start("client", lane.ns.mobile, [str(bin_dir() / "squall-http"), "--connect",
                                                   f"{lane.fixed_host}:{PORT}", "--workload", "s+2s",
                                                   "--timeout", "60s"])
            assert group.wait_exit("client", 90) == 0, group.stderr()["client"]
            summary = json.loads(group.programs["client"].stdout().splitlines()[-1])
    assert summary["ok"] and [o["bytes"] for o in summary["objects"]] == list(page.sizes)
    # Three connections of at least one 600 ms round trip each for SYN and request.
    assert summary["response_time_us"] > 3 * 600_000
    assert all(r["initcwnd"] == iw for r in settings["hosts"]["fixed"]["routes"])
    packets = read_packets(tmp_path / "fixed.pcap")
    syn = next(p for p in packets if p.src == lane.mobile_host and p[TCP].flags.S)
    assert dict(syn[TCP].options)["MSS"] == 536  # the client's side of the link has MTU 576
    assert server_first_flights(packets, lane.fixed_host) == [iw, iw, iw]
