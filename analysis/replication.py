"""One replication's results directory -> per-connection and per-flow metrics.

Reads `emulator.log`, `fixed.pcap` and `mobile.pcap` (DESIGN.md §3.4). Each TCP
connection is measured in its sender's capture and each UDP flow in its receiver's,
joined with the emulator log. Which capture is whose comes from the log: sources of
`down` packets are on the fixed side, sources of `up` packets on the mobile side."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from analysis.connections import TcpConnection, UdpFlow, tcp_connections, udp_flows
from analysis.emulog import EmulatorLog, read_emulator_log
from analysis.join import PacketFate, join_capture
from analysis.pcap import Packet, read_packets
from analysis.tcp_metrics import RTO_FLOOR_US, TcpMetrics, default_sender, tcp_metrics
from analysis.udp_metrics import UdpMetrics, udp_metrics

LOG_NAME = "emulator.log"
CAPTURES = {"fixed": "fixed.pcap", "mobile": "mobile.pcap"}


@dataclass(slots=True)
class HostCapture:
    side: str  # fixed | mobile
    packets: list[Packet]
    fates: dict[int, PacketFate]
    tcp: list[TcpConnection]
    udp: list[UdpFlow]


@dataclass(slots=True)
class ReplicationMetrics:
    directory: Path
    log_cut_short: bool
    tcp: list[tuple[str, TcpMetrics]] = field(default_factory=list)  # (measured at side, m)
    udp: list[tuple[str, UdpMetrics]] = field(default_factory=list)  # (received at side, m)
    warnings: list[str] = field(default_factory=list)
    # TCP connections as each side's capture shows them (for times seen at the client)
    connections: dict[str, list[TcpConnection]] = field(default_factory=dict)


def _side_addresses(log: EmulatorLog) -> dict[str, set[str]]:
    sides: dict[str, set[str]] = {"fixed": set(), "mobile": set()}
    for e in log.events:
        if e.event == "in" and e.src is not None:
            sides["fixed" if e.dir == "down" else "mobile"].add(e.src)
    return sides


def _load(directory: Path, side: str, log: EmulatorLog) -> HostCapture | None:
    path = directory / CAPTURES[side]
    if not path.exists():
        return None
    packets = read_packets(path)
    return HostCapture(side, packets, join_capture(packets, log), tcp_connections(packets),
                       udp_flows(packets))


def analyse_replication(directory: str | os.PathLike[str],
                        rto_floor_us: int = RTO_FLOOR_US) -> ReplicationMetrics:
    """Raises AnalysisInputError (CaptureError, LogFormatError) on unreadable inputs."""
    directory = Path(directory)
    log = read_emulator_log(directory / LOG_NAME)
    result = ReplicationMetrics(directory, log.cut_short)
    if log.cut_short:
        result.warnings.append(f"{directory / LOG_NAME}: no trailer: the emulator was cut "
                               "short; packets still in the link count as pending")
    sides = _side_addresses(log)
    captures = {side: _load(directory, side, log) for side in CAPTURES}
    for side, cap in captures.items():
        if cap is None:
            result.warnings.append(f"{directory / CAPTURES[side]}: missing; connections "
                                   f"sent from the {side} host are not measured")
            continue
        result.connections[side] = cap.tcp
        other_side = "mobile" if side == "fixed" else "fixed"
        for conn in cap.tcp:
            sender = default_sender(conn)
            if sender[0] in sides[side]:
                m = tcp_metrics(conn, sender, cap.fates, rto_floor_us)
                other = captures[other_side]
                if other is not None:
                    m.reverse_fates = _reverse_fates(conn, sender, other)
                result.tcp.append((side, m))
            elif sender[0] not in sides[other_side]:
                result.warnings.append(f"{directory / CAPTURES[side]}: TCP {conn.client} -> "
                                       f"{conn.server}: sender {sender} never reached the "
                                       "link (not in the emulator log); not measured")
        other = captures[other_side]
        for flow in cap.udp:
            if flow.src[0] not in sides[other_side]:
                continue  # not received through the link at this host
            sent = _same_flow(other.udp, flow) if other is not None else None
            result.udp.append((side, udp_metrics(flow, sent, other.fates if other else None)))
    return result


def _reverse_fates(conn: TcpConnection, sender: tuple[str, int],
                   other: HostCapture) -> dict[str, int] | None:
    """Fates of the receiver's packets, from the receiver's own capture."""
    first = conn.packets[0]
    twin = next((c for c in other.tcp if {c.client, c.server} == {conn.client, conn.server}
                 and c.packets[0].tcp_seq == first.tcp_seq), None)
    if twin is None:
        return None
    receiver = conn.server if sender == conn.client else conn.client
    counts: dict[str, int] = {}
    for p in twin.sent_by(receiver):
        fate = other.fates.get(p.frame_no)
        if fate is not None:
            counts[fate.fate] = counts.get(fate.fate, 0) + 1
    return counts


def _same_flow(flows: list[UdpFlow], flow: UdpFlow) -> UdpFlow | None:
    return next((f for f in flows if (f.src, f.dst) == (flow.src, flow.dst)), None)
