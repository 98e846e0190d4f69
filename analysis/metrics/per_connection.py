"""One replication's results directory -> per-connection and per-flow metrics.

Reads `emulator.log`, `fixed.pcap` and `mobile.pcap` (DESIGN.md §3.4), plain or gzip-compressed
(analysis/results/stored.py). Each TCP
connection is measured in its sender's capture, the other endpoint's packets (the HTTP
client's SYN and request, a bulk receiver's ACKs) in that endpoint's capture (`peer`), and
each UDP flow in its receiver's, joined with the emulator log. Every TCP segment a host
sent is classified once, in its own capture (`hosts`: what the kernel's counters of that
host count). Which capture is whose comes from the log: sources of `down` packets are on
the fixed side, sources of `up` packets on the mobile side."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from analysis.metrics.connections import Endpoint, TcpConnection, UdpFlow, tcp_connections_of, udp_flows
from analysis.read.emulog import EmulatorLog, read_emulator_log
from analysis.read.event_table import NULL
from analysis.join.fate_map import FateMap
from analysis.join.by_identity import join_records
from analysis.read.pcap import PROTO_UDP, address_texts, ip_records, packets_of, read_capture
from analysis.results.directory import CAPTURES, LOG_NAME
from analysis.results.stored import stored
from analysis.metrics.tcp import RTO_FLOOR_US, TcpMetrics, default_sender, tcp_metrics
from analysis.metrics.udp import UdpMetrics, udp_metrics



@dataclass(slots=True)
class CaptureTimes:
    """When a host's capture saw the link's packets: `pkt_id` (the log's packet) and `ts_us`
    (capture time, µs since the epoch) of every captured frame the log knows, and `sent`:
    the host sent it into the link (else it came out of the link to the host)."""
    pkt_id: np.ndarray
    ts_us: np.ndarray
    sent: np.ndarray


@dataclass(slots=True)
class HostCapture:
    side: str  # fixed | mobile
    fates: FateMap
    tcp: list[TcpConnection]
    udp: list[UdpFlow]
    times: CaptureTimes


@dataclass(slots=True)
class Received:
    """One direction of a TCP connection or a UDP flow as its receiver captured it: the
    capture time (µs since the epoch) and payload length of every data packet of it
    (retransmissions and duplicates included: what arrived)."""
    proto: str          # tcp | udp
    src: tuple[str, int]
    dst: tuple[str, int]
    ts_us: np.ndarray
    payload: np.ndarray


@dataclass(slots=True)
class ReplicationMetrics:
    directory: Path
    log_cut_short: bool
    tcp: list[tuple[str, TcpMetrics]] = field(default_factory=list)  # (measured at side, m)
    udp: list[tuple[str, UdpMetrics]] = field(default_factory=list)  # (received at side, m)
    warnings: list[str] = field(default_factory=list)
    # TCP connections as each side's capture shows them (for times seen at the client)
    connections: dict[str, list[TcpConnection]] = field(default_factory=dict)
    # what each measured connection's receiver and each UDP flow's receiver captured
    received: list[Received] = field(default_factory=list)
    log: EmulatorLog | None = field(default=None, repr=False, compare=False)
    # per side: the metrics of every TCP connection's endpoint at that host, measured in
    # its capture (its own segments: data, SYNs, requests, ACKs)
    hosts: dict[str, list[TcpMetrics]] = field(default_factory=dict)
    # per side: when its capture saw the link's packets (for the end-to-end one-way delay)
    capture_times: dict[str, CaptureTimes] = field(default_factory=dict)
    # per side: the fate of every packet of its capture by frame number (its join with the
    # log, made once here; validation/rto_causes.py reads each ACK's fate from it)
    fates: dict[str, FateMap] = field(default_factory=dict)


def side_addresses(log: EmulatorLog) -> dict[str, set[str]]:
    """The hosts' addresses: sources of `down` packets are on the fixed side."""
    table = log.table
    ins = table.is_("event", "in") & (table.texts["src"] != 0)
    down = table.is_("dir", "down")
    return {side: {table.strings[i] for i in np.unique(table.texts["src"][rows]).tolist()}
            for side, rows in (("fixed", ins & down), ("mobile", ins & ~down))}


def _load(directory: Path, side: str, log: EmulatorLog) -> HostCapture | None:
    path = stored(directory, CAPTURES[side])
    if not path.exists():
        return None
    records = ip_records(read_capture(path))
    udp = udp_flows(packets_of(records[records["proto"] == PROTO_UDP]))
    fates = join_records(records, log, side)
    return HostCapture(side, fates, tcp_connections_of(records), udp,
                       capture_times(records, fates, side_addresses(log)[side]))


def capture_times(records: np.ndarray, fates: FateMap, own: set[str]) -> CaptureTimes:
    """CaptureTimes of one capture's IP records joined with the log (`own`: the host's
    addresses, the sources of what it sent)."""
    known = fates.pkt_id != NULL
    rows = np.searchsorted(records["frame_no"], fates.frame_no[known])
    sources = address_texts(records["ip_version"][rows], records["src"][rows]) if len(rows) else []
    sent = np.fromiter((s in own for s in sources), bool, len(rows))
    return CaptureTimes(fates.pkt_id[known], records["ts_us"][rows].astype(np.int64), sent)


def analyse_replication(directory: str | os.PathLike[str],
                        rto_floor_us: int = RTO_FLOOR_US) -> ReplicationMetrics:
    """Raises AnalysisInputError (CaptureError, LogFormatError) on unreadable inputs."""
    directory = Path(directory)
    log = read_emulator_log(stored(directory, LOG_NAME))
    result = ReplicationMetrics(directory, log.cut_short, log=log)
    if log.cut_short:
        result.warnings.append(f"{stored(directory, LOG_NAME)}: no trailer: the emulator was cut "
                               "short; packets still in the link count as pending")
    sides = side_addresses(log)
    captures = {side: _load(directory, side, log) for side in CAPTURES}
    own: dict[str, list[tuple[TcpConnection, Endpoint, TcpMetrics]]] = {}
    for side, cap in captures.items():
        if cap is None:
            result.warnings.append(f"{stored(directory, CAPTURES[side])}: missing; connections "
                                   f"sent from the {side} host are not measured")
            continue
        result.connections[side] = cap.tcp
        result.capture_times[side] = cap.times
        result.fates[side] = cap.fates
        own[side] = _own_endpoints(directory, side, cap, sides, rto_floor_us, result.warnings)
        result.hosts[side] = [m for _, _, m in own[side]]
    for side, mine in own.items():
        other_side = "mobile" if side == "fixed" else "fixed"
        other = captures[other_side]
        theirs = {id(c): m for c, _, m in own.get(other_side, [])}
        for conn, sender, m in mine:
            if default_sender(conn) != sender:
                continue  # measured at the sender; this endpoint is that one's peer
            twin = _twin(conn, other) if other is not None else None
            if twin is not None:
                receiver = conn.server if sender == conn.client else conn.client
                m.peer = theirs.get(id(twin))
                m.reverse_fates = (m.peer.fates if m.peer is not None
                                   else other.fates.counts(twin.frames_sent_by(receiver)))
                result.received.append(_received_tcp(twin, sender, receiver))
            result.tcp.append((side, m))
    for side, cap in captures.items():
        if cap is None:
            continue
        other_side = "mobile" if side == "fixed" else "fixed"
        other = captures[other_side]
        for flow in cap.udp:
            if flow.src[0] in sides[side] and other is not None \
                    and _same_flow(other.udp, flow) is None:
                # sent through the link and nothing of it arrived: all of it lost
                nothing = UdpFlow(flow.src, flow.dst)
                result.udp.append((other_side, udp_metrics(nothing, flow, cap.fates, other.fates)))
            if flow.src[0] not in sides[other_side]:
                continue  # not received through the link at this host
            sent = _same_flow(other.udp, flow) if other is not None else None
            result.udp.append((side, udp_metrics(flow, sent, other.fates if other else None,
                                                  cap.fates)))
            result.received.append(Received(
                "udp", flow.src, flow.dst,
                np.fromiter((p.ts_us for p in flow.packets), np.int64, len(flow.packets)),
                np.fromiter((p.payload_len for p in flow.packets), np.int64, len(flow.packets))))
    return result


def _own_endpoints(directory: Path, side: str, cap: HostCapture, sides: dict[str, set[str]],
                   rto_floor_us: int, warnings: list[str],
                   ) -> list[tuple[TcpConnection, Endpoint, TcpMetrics]]:
    """Each connection of the capture with its endpoint at this host and the metrics of
    that endpoint's segments. A connection with no endpoint the log places here (its
    sender never reached the link) is named in a warning when it carried data."""
    out = []
    for conn in cap.tcp:
        endpoint = next((e for e in (conn.client, conn.server) if e[0] in sides[side]), None)
        if endpoint is None:
            sender = default_sender(conn)
            other_side = "mobile" if side == "fixed" else "fixed"
            if sender[0] not in sides[other_side]:
                warnings.append(f"{stored(directory, CAPTURES[side])}: TCP {conn.client} -> "
                                f"{conn.server}: sender {sender} never reached the link "
                                "(not in the emulator log); not measured")
            continue
        out.append((conn, endpoint, tcp_metrics(conn, endpoint, cap.fates, rto_floor_us)))
    return out


def _twin(conn: TcpConnection, other: HostCapture) -> TcpConnection | None:
    """The same connection in the other host's capture."""
    first = conn.first_packet()
    return next((c for c in other.tcp if {c.client, c.server} == {conn.client, conn.server}
                 and c.first_packet().tcp_seq == first.tcp_seq), None)


def _received_tcp(twin: TcpConnection, sender: tuple[str, int],
                  receiver: tuple[str, int]) -> Received:
    """The sender's segments with payload, in the receiver's capture."""
    records = twin.unmade_records()
    if records is not None:
        payload = records["payload_len"]
        sent = twin.sent_mask(sender) & (payload > 0)
        # two columns only: the records are 160 bytes each
        ts, payload = records["ts_us"][sent].astype(np.int64), payload[sent].astype(np.int64)
    else:
        packets = [p for p in twin.sent_by(sender) if p.payload_len > 0]
        ts = np.fromiter((p.ts_us for p in packets), np.int64, len(packets))
        payload = np.fromiter((p.payload_len for p in packets), np.int64, len(packets))
    return Received("tcp", sender, receiver, ts, payload)


def _same_flow(flows: list[UdpFlow], flow: UdpFlow) -> UdpFlow | None:
    return next((f for f in flows if (f.src, f.dst) == (flow.src, flow.dst)), None)
