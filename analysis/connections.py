"""Grouping a capture's packets into TCP connections and UDP flows."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from analysis.pcap import (ACK, FIN, FRAGMENT, L4_TRUNCATED, PROTO_TCP, PROTO_UDP, RST, SYN,
                           Packet)

Endpoint = tuple[str, int]  # (address, port)


@dataclass(slots=True)
class TcpConnection:
    """One TCP connection in one capture. `client` sent the first SYN (or, when the
    capture missed the handshake, the first packet seen)."""
    client: Endpoint
    server: Endpoint
    packets: list[Packet] = field(default_factory=list)  # both directions, capture order
    saw_syn: bool = False

    def sent_by(self, endpoint: Endpoint) -> list[Packet]:
        return [p for p in self.packets if (p.src, p.sport) == endpoint]

    def payload_bytes(self, endpoint: Endpoint) -> int:
        return sum(p.payload_len for p in self.packets if (p.src, p.sport) == endpoint)


@dataclass(slots=True)
class UdpFlow:
    """The datagrams of one direction of one 5-tuple, in capture order."""
    src: Endpoint
    dst: Endpoint
    packets: list[Packet] = field(default_factory=list)


def _key(p: Packet) -> tuple[Endpoint, Endpoint]:
    a, b = (p.src, p.sport), (p.dst, p.dport)
    return (a, b) if a <= b else (b, a)


def _is_new_syn(p: Packet) -> bool:
    return bool(p.tcp_flags & SYN) and not p.tcp_flags & ACK


@dataclass(slots=True)
class _Open:
    conn: TcpConnection
    isn: int | None          # the client's initial sequence number, if its SYN was seen
    closed: bool = False     # a FIN each way, or a RST, has been seen
    fins: set[Endpoint] = field(default_factory=set)


def tcp_connections(packets: Iterable[Packet]) -> list[TcpConnection]:
    """TCP connections in order of their first packet. A SYN on a 4-tuple whose previous
    connection has closed, or a SYN with another initial sequence number, starts a new one
    (a SYN retransmission keeps its ISN, so it stays in its connection)."""
    result: list[TcpConnection] = []
    open_by_key: dict[tuple[Endpoint, Endpoint], _Open] = {}
    for p in packets:
        if p.proto != PROTO_TCP or p.status & (FRAGMENT | L4_TRUNCATED):
            continue
        key = _key(p)
        current = open_by_key.get(key)
        new_syn = _is_new_syn(p)
        if current is None or (new_syn and (current.closed or current.isn != p.tcp_seq)):
            # A capture that starts at the SYN+ACK still knows who the client is.
            synack = bool(p.tcp_flags & SYN and p.tcp_flags & ACK)
            here, there = (p.src, p.sport), (p.dst, p.dport)
            conn = TcpConnection(client=there if synack else here,
                                 server=here if synack else there, saw_syn=new_syn)
            current = open_by_key[key] = _Open(conn, p.tcp_seq if new_syn else None)
            result.append(conn)
        current.conn.packets.append(p)
        _track_close(current, p)
    return result


def _track_close(state: _Open, p: Packet) -> None:
    if p.tcp_flags & RST:
        state.closed = True
    elif p.tcp_flags & FIN:
        state.fins.add((p.src, p.sport))
        state.closed = len(state.fins) == 2


def udp_flows(packets: Iterable[Packet]) -> list[UdpFlow]:
    """UDP flows per direction (src, sport, dst, dport), in order of their first datagram."""
    flows: dict[tuple[Endpoint, Endpoint], UdpFlow] = {}
    for p in packets:
        if p.proto != PROTO_UDP or p.status & (FRAGMENT | L4_TRUNCATED):
            continue
        key = ((p.src, p.sport), (p.dst, p.dport))
        flow = flows.get(key)
        if flow is None:
            flow = flows[key] = UdpFlow(src=key[0], dst=key[1])
        flow.packets.append(p)
    return list(flows.values())
