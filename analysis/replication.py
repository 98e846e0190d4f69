"""One replication's results directory -> per-connection and per-flow metrics.

Reads `emulator.log`, `fixed.pcap` and `mobile.pcap` (DESIGN.md §3.4). Each TCP
connection is measured in its sender's capture and each UDP flow in its receiver's,
joined with the emulator log. Which capture is whose comes from the log: sources of
`down` packets are on the fixed side, sources of `up` packets on the mobile side."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from analysis.connections import TcpConnection, UdpFlow, tcp_connections_of, udp_flows
from analysis.emulog import EmulatorLog, read_emulator_log
from analysis.fate_index import FateMap
from analysis.join import join_records
from analysis.pcap import PROTO_UDP, ip_records, packets_of, read_capture
from analysis.tcp_metrics import RTO_FLOOR_US, TcpMetrics, default_sender, tcp_metrics
from analysis.udp_metrics import UdpMetrics, udp_metrics

LOG_NAME = "emulator.log"
CAPTURES = {"fixed": "fixed.pcap", "mobile": "mobile.pcap"}


@dataclass(slots=True)
class HostCapture:
    side: str  # fixed | mobile
    fates: FateMap
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


def side_addresses(log: EmulatorLog) -> dict[str, set[str]]:
    """The hosts' addresses: sources of `down` packets are on the fixed side."""
    table = log.table
    ins = table.is_("event", "in") & (table.texts["src"] != 0)
    down = table.is_("dir", "down")
    return {side: {table.strings[i] for i in np.unique(table.texts["src"][rows]).tolist()}
            for side, rows in (("fixed", ins & down), ("mobile", ins & ~down))}


def _load(directory: Path, side: str, log: EmulatorLog) -> HostCapture | None:
    path = directory / CAPTURES[side]
    if not path.exists():
        return None
    records = ip_records(read_capture(path))
    udp = udp_flows(packets_of(records[records["proto"] == PROTO_UDP]))
    return HostCapture(side, join_records(records, log), tcp_connections_of(records), udp)


def analyse_replication(directory: str | os.PathLike[str],
                        rto_floor_us: int = RTO_FLOOR_US) -> ReplicationMetrics:
    """Raises AnalysisInputError (CaptureError, LogFormatError) on unreadable inputs."""
    directory = Path(directory)
    log = read_emulator_log(directory / LOG_NAME)
    result = ReplicationMetrics(directory, log.cut_short)
    if log.cut_short:
        result.warnings.append(f"{directory / LOG_NAME}: no trailer: the emulator was cut "
                               "short; packets still in the link count as pending")
    sides = side_addresses(log)
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
    first = conn.first_packet()
    twin = next((c for c in other.tcp if {c.client, c.server} == {conn.client, conn.server}
                 and c.first_packet().tcp_seq == first.tcp_seq), None)
    if twin is None:
        return None
    receiver = conn.server if sender == conn.client else conn.client
    return other.fates.counts(twin.frames_sent_by(receiver))


def _same_flow(flows: list[UdpFlow], flow: UdpFlow) -> UdpFlow | None:
    return next((f for f in flows if (f.src, f.dst) == (flow.src, flow.dst)), None)
