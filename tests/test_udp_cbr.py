"""squall-udp over a real veth pair: the CBR rate on the wire, sequence numbers, the
receiver's loss and jitter computed as the IIP report defines them (section 6)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from scapy.layers.inet import UDP

from conftest import require_programs, run_to_completion, workload_lane
from testbed import netns
from testbed.lanes.capture import parse_tcpdump_statistics, read_packets
from testbed.paths import bin_dir
from testbed.processes import ProgramGroup
from support_testnet import payload_capture, veth_net

pytestmark = pytest.mark.netns
LANE = workload_lane(0)
PORT = 6001


def read_recv_log(path: Path) -> list[tuple[int, int, int, int]]:
    """(recv_us, seq, send_us, size) per datagram, in arrival order."""
    rows = []
    for line in path.read_text().splitlines():
        if line.startswith("#"):
            continue
        recv_us, seq, send_us, size = (int(v) for v in line.split("\t"))
        rows.append((recv_us, seq, send_us, size))
    return rows


def jitter_from_log(rows: list[tuple[int, int, int, int]]) -> list[int]:
    """IIP section 6: spacing change of consecutive packets, pairs across a gap ignored."""
    return [abs((b[0] - a[0]) - (b[2] - a[2])) for a, b in zip(rows, rows[1:]) if b[1] == a[1] + 1]


def udp_mib(ns: str) -> dict[str, int]:
    """The namespace's own Udp counters from /proc/net/snmp (InDatagrams, RcvbufErrors, ...)."""
    lines = [line.split() for line in netns.run_in(ns, ["cat", "/proc/net/snmp"]).stdout.splitlines()
             if line.startswith("Udp:")]
    names, values = lines[0][1:], lines[1][1:]
    return dict(zip(names, (int(v) for v in values)))


def run_stream(tmp_path: Path, sender_args: list[str], rate: str | None = None,
               limit: str = "200000") -> tuple[dict, dict, list]:
    require_programs("squall-udp")
    udp = str(bin_dir() / "squall-udp")
    with veth_net(LANE, rate=rate, limit=limit) as net, ProgramGroup(tmp_path / "progs") as group:
        with payload_capture(net.mobile_ns, "eth0", tmp_path / "mobile.pcap", f"udp and dst port {PORT}"):
            group.start("recv", net.mobile_ns, [udp, "recv", "--listen", f"{net.mobile_addr}:{PORT}",
                                                "--idle-timeout", "1s", "--log", str(tmp_path / "recv.log")])
            group.wait_ready("recv", "listening", 5)
            sent = run_to_completion(group, "send", net.fixed_ns,
                                     [udp, "send", "--connect", f"{net.mobile_addr}:{PORT}", *sender_args], 60)
            code = group.wait_exit("recv", 15)
        assert code == 0, group.stderr()["recv"]
        received = json.loads(group.programs["recv"].stdout().splitlines()[-1])
        received["kernel_udp"] = udp_mib(net.mobile_ns)
    received["capture"] = parse_tcpdump_statistics((tmp_path / "mobile.pcap.stderr").read_text())
    packets = [p for p in read_packets(tmp_path / "mobile.pcap") if p.haslayer(UDP)]
    return sent, received, packets


def test_cbr_rate_on_the_wire_and_jitter(tmp_path: Path) -> None:
    sent, received, packets = run_stream(tmp_path, ["--size", "132", "--rate", "32kbit", "--duration", "3s"])
    assert sent["interval_us"] == 33000 and sent["packets"] == 91  # ceil(3 s / 33 ms)
    # On the wire: every datagram, in order, with its sequence number, at 32 kbit/s of payload.
    seqs = [int.from_bytes(bytes(p[UDP].payload)[4:12], "big") for p in packets]
    assert seqs == list(range(sent["packets"]))
    assert all(len(p[UDP].payload) == 132 for p in packets)
    wire_rate = (len(packets) - 1) * 132 * 8 / float(packets[-1].time - packets[0].time)
    assert wire_rate == pytest.approx(32000, rel=0.01)
    # The receiver's statistics agree with the capture and with its own log.
    assert (received["received"], received["lost"], received["reordered"]) == (91, 0, 0)
    assert received["packets_per_s"] == pytest.approx(1e6 / 33000, rel=0.01)
    rows = read_recv_log(tmp_path / "recv.log")
    assert [r[1] for r in rows] == seqs
    jitter = jitter_from_log(rows)
    assert received["jitter_samples"] == len(jitter) == 90
    assert (received["jitter_min_us"], received["jitter_max_us"]) == (min(jitter), max(jitter))
    assert received["jitter_mean_us"] == pytest.approx(sum(jitter) / len(jitter), rel=1e-5, abs=1e-3)


def test_losses_are_counted_and_jitter_skips_the_gaps(tmp_path: Path) -> None:
    # 400 datagrams of 1000 B at 4 Mbit/s into a 1 Mbit/s TBF with a 20 kB queue: it drops.
    sent, received, packets = run_stream(tmp_path, ["--size", "1000", "--rate", "4Mbit", "--count", "400"],
                                         rate="1mbit", limit="20000")
    rows = read_recv_log(tmp_path / "recv.log")
    on_wire = [int.from_bytes(bytes(p[UDP].payload)[4:12], "big") for p in packets]
    assert [r[1] for r in rows] == on_wire
    distinct = set(on_wire)
    assert 0 < len(distinct) < 400
    assert received["expected"] == max(distinct) + 1
    assert received["lost"] == received["expected"] - len(distinct)
    jitter = jitter_from_log(rows)
    assert received["jitter_samples"] == len(jitter) < len(rows) - 1
    assert received["jitter_max_us"] == max(jitter)
    assert received["jitter_mean_us"] == pytest.approx(sum(jitter) / len(jitter), rel=1e-5, abs=1e-3)


def test_flood_reports_packets_per_second(tmp_path: Path) -> None:
    sent, received, packets = run_stream(tmp_path, ["--size", "64", "--rate", "max", "--count", "20000"])
    assert sent["packets"] + sent["send_errors"] == 20000
    # A flood outruns tcpdump at times; the kernel's UDP MIB counts every datagram the
    # receiver's socket was given, and the capture's misses are its own reported drops.
    assert received["received"] == received["kernel_udp"]["InDatagrams"] > 0
    missed = received["capture"]["dropped_by_kernel"] + received["capture"].get("dropped_by_interface", 0)
    assert received["received"] == len(packets) + missed
    assert received["packets_per_s"] > 0
    assert received["expected"] - received["lost"] == received["received"] - received["duplicates"]
