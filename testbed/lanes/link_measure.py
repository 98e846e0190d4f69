"""Measurements through a lane's link, and what the link parameters predict for them.

Used by the demo and by the integration tests: real traffic (ping, squall-bulk),
times from captures or from the receiving program, never from the emulator's log.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from testbed import netns
from testbed.addresses import LaneAddresses
from testbed.lanes.capture import Capture, read_packets
from testbed.paths import program_path
from testbed.processes import Program, ProgramGroup

PING_IP_LEN = 84                 # 56 B payload + 8 B ICMP + 20 B IP
TCP_IP_HEADERS = 40
TIMESTAMP_OPTION_LEN = 12        # NOP, NOP, timestamps: in every data segment when enabled


class MeasurementError(RuntimeError):
    pass


# --- predictions -------------------------------------------------------------------
def serialisation_us(ip_len: int, rate_bps: int, overhead: int = 0) -> float:
    return (ip_len + overhead) * 8 * 1e6 / rate_bps


def predicted_ping_rtt_us(rate_bps: int, delay_us: int, ip_len: int = PING_IP_LEN) -> float:
    """Request and reply each serialised once and delayed once (symmetric link, no queue)."""
    return 2 * (serialisation_us(ip_len, rate_bps) + delay_us)


def tcp_options_len(ns: str) -> int:
    """TCP option bytes in every data segment sent from ns: 12 with timestamps, else 0."""
    on = netns.run_in(ns, ["sysctl", "-n", "net.ipv4.tcp_timestamps"]).stdout.strip() != "0"
    return TIMESTAMP_OPTION_LEN if on else 0


def set_congestion_control(ns: str, name: str) -> None:
    """The TCP congestion control of new connections from ns (a per-namespace sysctl)."""
    netns.run_in(ns, ["sysctl", "-q", "-w", f"net.ipv4.tcp_congestion_control={name}"])


def predicted_goodput_bps(rate_bps: int, mtu: int, options_len: int) -> float:
    """rate x (MTU - 40 - options) / MTU: full-size segments back to back."""
    return rate_bps * (mtu - TCP_IP_HEADERS - options_len) / mtu


# --- ping --------------------------------------------------------------------------
def echo_rtts_us(packets) -> list[float]:
    """RTTs of the ICMP echo request/reply pairs of one capture (one host's clock)."""
    from scapy.layers.inet import ICMP

    sent: dict[tuple[int, int], float] = {}
    rtts = []
    for ip in packets:
        icmp = ip.getlayer(ICMP)
        if icmp is None:
            continue
        key = (icmp.id, icmp.seq)
        if icmp.type == 8:
            sent[key] = float(ip.time)
        elif icmp.type == 0 and key in sent:
            rtts.append((float(ip.time) - sent.pop(key)) * 1e6)
    return rtts


def ping_rtts_us(lane: LaneAddresses, workdir: Path, count: int = 5, interval_s: float = 0.8,
                 payload: int = 56) -> list[float]:
    """Pings the mobile host from the fixed host, one at a time; RTTs from a capture on
    the fixed host's eth0 (µs resolution, unlike ping's own output)."""
    pcap = Path(workdir) / "ping-fixed.pcap"
    with Capture(lane.ns.fixed, lane.fixed_eth.dev, pcap, f"icmp and host {lane.mobile_host}"):
        netns.run_in(lane.ns.fixed, ["ping", "-n", "-c", str(count), "-i", str(interval_s), "-s", str(payload),
                                     "-W", "5", lane.mobile_host], check=False, timeout=count * (interval_s + 5) + 5)
    return echo_rtts_us(read_packets(pcap))


# --- bulk TCP ----------------------------------------------------------------------
@dataclass(frozen=True)
class BulkResult:
    sender: dict             # squall-bulk summaries (workloads/README.md)
    receiver: dict
    first_data_s: float      # arrival of the first and the last data segment on the
    last_data_s: float       # receiver's wl0 (kernel capture timestamps, CLOCK_REALTIME)

    @property
    def bytes(self) -> int:
        return int(self.receiver["bytes"])

    @property
    def goodput_bps(self) -> float:
        """At the receiver, from the first to the last data byte: 8 x bytes / span, with
        the span from the receiver's capture, so that a late wake-up of the receiving
        program does not shorten it."""
        return 8 * self.bytes / (self.last_data_s - self.first_data_s)


def bulk_transfer(lane: LaneAddresses, workdir: Path, count: int = 100, length: int = 2096,
                  port: int = 5001, timeout_s: float = 300) -> BulkResult:
    """squall-bulk from the fixed host to the mobile host, captured on the mobile wl0."""
    bulk = str(program_path("squall-bulk"))
    target = f"{lane.mobile_host}:{port}"
    workdir = Path(workdir)
    pcap = workdir / "bulk-mobile.pcap"
    with ProgramGroup(workdir) as group, \
            Capture(lane.ns.mobile, lane.mobile_wireless.dev, pcap, f"tcp and dst port {port}"):
        receiver = group.start("bulk-recv", lane.ns.mobile, [bulk, "recv", "--listen", target])
        group.wait_ready("bulk-recv", "listening", 5)
        sender = group.start("bulk-send", lane.ns.fixed, [bulk, "send", "--connect", target,
                                                          "--count", str(count), "--length", str(length)])
        sent = summary(sender, group.wait_exit("bulk-send", timeout_s))
        received = summary(receiver, group.wait_exit("bulk-recv", 10))
    first, last = data_span_s(pcap)
    return BulkResult(sent, received, first, last)


def data_span_s(pcap: Path) -> tuple[float, float]:
    """Capture times of the first and the last TCP segment carrying data."""
    times = [float(ip.time) for ip in read_packets(pcap)
             if ip.proto == 6 and ip.len - ip.ihl * 4 - ip.payload.dataofs * 4 > 0]
    if len(times) < 2:
        raise MeasurementError(f"{pcap}: {len(times)} data segments captured; expected the whole transfer")
    return times[0], times[-1]


def summary(program: Program, code: int | None) -> dict:
    """The one-line JSON summary a workload program prints at exit."""
    lines = [line for line in program.stdout().splitlines() if line.startswith("{")]
    if code != 0 or not lines:
        state = "did not finish" if code is None else f"exited {code}"
        raise MeasurementError(f"{program.describe()} {state}; stdout: {program.stdout().strip()!r}; "
                               f"stderr: {program.stderr().strip()!r}")
    return json.loads(lines[-1])
