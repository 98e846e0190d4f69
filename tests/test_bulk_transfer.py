"""squall-bulk over a real veth pair: every byte arrives, the receiver's times match the
capture, several connections into one receiver, TOS marking and start offset, and the
receiver's --delayed-acks."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from scapy.layers.inet import TCP

from conftest import require_programs, run_to_completion, workload_lane
from support_tcp import data_segments, payload_len, pure_acks
from testbed import netns
from testbed.lanes.capture import Capture, read_packets
from testbed.paths import bin_dir
from testbed.processes import ProgramGroup
from support_testnet import veth_net

pytestmark = pytest.mark.netns
LANE = workload_lane(1)
PORT = 5001


def delivered_bytes(packets: list, sport: int) -> int:
    """Distinct sequence space carried by data segments of one connection (retransmissions once)."""
    covered: set[int] = set()
    for p in packets:
        if p.haslayer(TCP) and p[TCP].sport == sport and payload_len(p) > 0:
            covered.update(range(p[TCP].seq, p[TCP].seq + payload_len(p)))
    return len(covered)


def test_transfer_arrives_complete_with_times_and_tos(tmp_path: Path) -> None:
    require_programs("squall-bulk")
    bulk = str(bin_dir() / "squall-bulk")
    with veth_net(LANE, rate="2mbit") as net, ProgramGroup(tmp_path / "progs") as group:
        with Capture(net.mobile_ns, "eth0", tmp_path / "mobile.pcap", f"tcp port {PORT}"):
            group.start("recv", net.mobile_ns, [bulk, "recv", "--listen", f"{net.mobile_addr}:{PORT}",
                                                "--log", str(tmp_path / "recv.log")])
            group.wait_ready("recv", "listening", 5)
            started_us = time.time_ns() // 1000
            sent = run_to_completion(group, "send", net.fixed_ns,
                                     [bulk, "send", "--connect", f"{net.mobile_addr}:{PORT}", "--count", "90",
                                      "--length", "2096", "--tos", "0xb8", "--start-offset", "500ms"], 60)
            assert group.wait_exit("recv", 10) == 0, group.stderr()["recv"]
        received = json.loads(group.programs["recv"].stdout().splitlines()[-1])
    assert sent["bytes"] == received["bytes"] == 90 * 2096
    assert sent["connect_start_us"] - started_us >= 500_000
    packets = read_packets(tmp_path / "mobile.pcap")
    sport = int(sent["local"].rsplit(":", 1)[1])
    assert delivered_bytes(packets, sport) == 188640
    data = [p for p in packets if p[TCP].sport == sport and payload_len(p) > 0]
    assert {p.tos for p in data} == {0xB8}
    # The receiver's first/last byte times fall on the capture's first/last data segment.
    first_us, last_us = float(data[0].time) * 1e6, float(data[-1].time) * 1e6
    assert 0 <= received["first_byte_us"] - first_us < 50_000
    assert 0 <= received["last_byte_us"] - last_us < 50_000
    goodput = received["bytes"] * 8 / ((received["last_byte_us"] - received["first_byte_us"]) / 1e6)
    assert goodput < 2.1e6  # shaped to 2 Mbit/s
    events = [line.split("\t")[1] for line in (tmp_path / "recv.log").read_text().splitlines()
              if not line.startswith("#")]
    assert events == ["accept", "first_byte", "last_byte", "end"]


def receiver_acks(tmp_path: Path, net, delayed_acks: bool) -> tuple[dict, list[str], int, int]:
    """One 90 x 2096 B transfer at 2 Mbit/s: the receiver's summary, log header, pure ACKs, and
    the data segments it received."""
    bulk = str(bin_dir() / "squall-bulk")
    tmp_path.mkdir()
    with ProgramGroup(tmp_path / "progs") as group, \
            Capture(net.mobile_ns, "eth0", tmp_path / "mobile.pcap", f"tcp port {PORT}"):
        group.start("recv", net.mobile_ns, [bulk, "recv", "--listen", f"{net.mobile_addr}:{PORT}",
                                            "--log", str(tmp_path / "recv.log")]
                    + (["--delayed-acks"] if delayed_acks else []))
        group.wait_ready("recv", "listening", 5)
        run_to_completion(group, "send", net.fixed_ns, [bulk, "send", "--connect", f"{net.mobile_addr}:{PORT}"], 60)
        assert group.wait_exit("recv", 10) == 0, group.stderr()["recv"]
        received = json.loads(group.programs["recv"].stdout().splitlines()[-1])
    header = [line for line in (tmp_path / "recv.log").read_text().splitlines() if line.startswith("#")]
    packets = read_packets(tmp_path / "mobile.pcap")
    return received, header, pure_acks(packets, net.mobile_addr), data_segments(packets, net.fixed_addr)


def test_delayed_acks_receiver_sends_fewer_pure_acks(tmp_path: Path) -> None:
    require_programs("squall-bulk")
    with veth_net(LANE, rate="2mbit") as net:
        quick = receiver_acks(tmp_path / "quick", net, False)
        delayed = receiver_acks(tmp_path / "delayed", net, True)
    assert (quick[0]["delayed_acks"], delayed[0]["delayed_acks"]) == (False, True)
    assert "# delayed_acks\toff" in quick[1] and "# delayed_acks\ton" in delayed[1]
    assert quick[0]["bytes"] == delayed[0]["bytes"] == 90 * 2096
    # segments 6 ms apart: quick ACKs at the start of the transfer, then one ACK per two
    # segments; with --delayed-acks one per two segments from the start (workloads/README.md)
    (_, _, quick_acks, _), (_, _, delayed_acks, segments) = quick, delayed
    assert delayed_acks <= segments // 2 + 5 < quick_acks


def test_receiver_takes_several_connections(tmp_path: Path) -> None:
    require_programs("squall-bulk")
    bulk = str(bin_dir() / "squall-bulk")
    with veth_net(LANE) as net, ProgramGroup(tmp_path / "progs") as group:
        group.start("recv", net.mobile_ns, [bulk, "recv", "--listen", f"{net.mobile_addr}:{PORT}",
                                            "--connections", "3"])
        group.wait_ready("recv", "listening", 5)
        for i, count in enumerate((100, 100, 90)):
            group.start(f"send{i}", net.fixed_ns, [bulk, "send", "--connect", f"{net.mobile_addr}:{PORT}",
                                                   "--count", str(count), "--nodelay"])
        for i in range(3):
            assert group.wait_exit(f"send{i}", 30) == 0, group.stderr()[f"send{i}"]
        assert group.wait_exit("recv", 10) == 0, group.stderr()["recv"]
        received = json.loads(group.programs["recv"].stdout().splitlines()[-1])
    assert sorted(c["bytes"] for c in received["connections"]) == [90 * 2096, 100 * 2096, 100 * 2096]
    assert received["bytes"] == 290 * 2096
    assert received["first_byte_us"] == min(c["first_byte_us"] for c in received["connections"])


def test_interrupted_receiver_reports_incomplete(tmp_path: Path) -> None:
    require_programs("squall-bulk")
    bulk = str(bin_dir() / "squall-bulk")
    with veth_net(LANE) as net, ProgramGroup(tmp_path / "progs") as group:
        group.start("recv", net.mobile_ns, [bulk, "recv", "--listen", f"{net.mobile_addr}:{PORT}"])
        group.wait_ready("recv", "listening", 5)
        code = group.stop("recv")
        summary = json.loads(group.programs["recv"].stdout().splitlines()[-1])
    assert code == 1
    assert summary["ok"] is False and "0 of 1 connections" in summary["error"]


def test_refused_connection_exits_1_with_a_json_summary() -> None:
    bulk, http = str(bin_dir() / "squall-bulk"), str(bin_dir() / "squall-http")
    with veth_net(LANE) as net:  # nothing listens on the fixed host: the kernel resets
        r = netns.run_in(net.mobile_ns, [bulk, "send", "--connect", f"{net.fixed_addr}:{PORT}"], check=False)
        assert r.returncode == 1
        summary = json.loads(r.stdout.splitlines()[-1])
        assert summary["ok"] is False and f"connecting to {net.fixed_addr}:{PORT}" in summary["error"]
        r = netns.run_in(net.mobile_ns, [http, "--connect", f"{net.fixed_addr}:{PORT}", "--workload", "s+2s"],
                         check=False)
        assert r.returncode == 1
        assert f"connection 0 to {net.fixed_addr}:{PORT}: connect" in json.loads(r.stdout.splitlines()[-1])["error"]


def test_ipv6_bulk_and_cbr(tmp_path: Path) -> None:
    require_programs("squall-bulk", "squall-udp")
    bulk, udp = str(bin_dir() / "squall-bulk"), str(bin_dir() / "squall-udp")
    with veth_net(LANE) as net, ProgramGroup(tmp_path / "progs") as group:
        ns = net.mobile_ns  # IPv6 on the namespace's own loopback only
        for key in ("all", "lo"):
            netns.run_in(ns, ["sysctl", "-q", "-w", f"net.ipv6.conf.{key}.disable_ipv6=0"])
        group.start("recv", ns, [bulk, "recv", "--listen", "[::1]:0"])
        port = group.wait_ready("recv", "listening", 5).rsplit(":", 1)[1]
        sent = run_to_completion(group, "send", ns, [bulk, "send", "--connect", f"[::1]:{port}", "--count", "5"], 30)
        assert group.wait_exit("recv", 10) == 0
        assert sent["remote"] == f"[::1]:{port}" and sent["bytes"] == 5 * 2096
        group.start("urecv", ns, [udp, "recv", "--listen", "[::1]:0", "--idle-timeout", "300ms"])
        port = group.wait_ready("urecv", "listening", 5).rsplit(":", 1)[1]
        run_to_completion(group, "usend", ns, [udp, "send", "--connect", f"[::1]:{port}", "--size", "100",
                                               "--rate", "100pps", "--count", "10", "--tos", "0xb8"], 30)
        assert group.wait_exit("urecv", 10) == 0
        received = json.loads(group.programs["urecv"].stdout().splitlines()[-1])
    assert (received["received"], received["lost"]) == (10, 0)
