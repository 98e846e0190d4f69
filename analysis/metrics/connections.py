"""Grouping a capture's packets into TCP connections and UDP flows."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

import numpy as np

from analysis.read.pcap import (ACK, FIN, FRAGMENT, L4_TRUNCATED, PROTO_TCP, PROTO_UDP, RST, SYN,
                           Packet, address_ids, address_texts, packets_of)

Endpoint = tuple[str, int]  # (address, port)


class TcpConnection:
    """One TCP connection in one capture. `client` sent the first SYN (or, when the
    capture missed the handshake, the first packet seen). Made by tcp_connections_of, it
    holds its packets as records and makes the Packet objects on first use of `packets`."""
    __slots__ = ("client", "server", "saw_syn", "_packets", "_records", "_from_client")

    def __init__(self, client: Endpoint, server: Endpoint, packets: list[Packet] | None = None,
                 saw_syn: bool = False, *, records: np.ndarray | None = None,
                 from_client: np.ndarray | None = None) -> None:
        self.client, self.server, self.saw_syn = client, server, saw_syn
        self._packets = packets if packets is not None or records is not None else []
        self._records, self._from_client = records, from_client

    @property
    def packets(self) -> list[Packet]:
        """Both directions, capture order."""
        if self._packets is None:
            self._packets = packets_of(self._records)  # type: ignore[arg-type]
        return self._packets

    def __repr__(self) -> str:
        return (f"TcpConnection(client={self.client!r}, server={self.server!r}, "
                f"packets=<{self._count()}>, saw_syn={self.saw_syn!r})")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TcpConnection):
            return NotImplemented
        return ((self.client, self.server, self.saw_syn, self.packets)
                == (other.client, other.server, other.saw_syn, other.packets))

    def _count(self) -> int:
        return len(self._packets) if self._packets is not None else len(self._records)  # type: ignore[arg-type]

    def _lazy(self) -> bool:
        return self._packets is None

    def unmade_records(self) -> np.ndarray | None:
        """The records, while the Packet objects have not been made (else None)."""
        return self._records if self._packets is None else None

    def sent_mask(self, endpoint: Endpoint) -> np.ndarray:
        """Which records were sent by the endpoint (a connection made from records)."""
        mask = np.zeros(self._count(), bool)
        if endpoint == self.client:
            mask |= self._from_client  # type: ignore[arg-type]
        if endpoint == self.server:
            mask |= ~self._from_client  # type: ignore[operator]
        return mask

    def first_packet(self) -> Packet:
        if self._lazy():
            return packets_of(self._records[:1])[0]  # type: ignore[index]
        return self.packets[0]

    def sent_by(self, endpoint: Endpoint) -> list[Packet]:
        return [p for p in self.packets if (p.src, p.sport) == endpoint]

    def frames_sent_by(self, endpoint: Endpoint) -> list[int]:
        if self._lazy():
            return self._records["frame_no"][self.sent_mask(endpoint)].tolist()  # type: ignore[index]
        return [p.frame_no for p in self.packets if (p.src, p.sport) == endpoint]

    def payload_bytes(self, endpoint: Endpoint) -> int:
        if self._lazy():
            payload = self._records["payload_len"][self.sent_mask(endpoint)]  # type: ignore[index]
            return int(payload.sum(dtype=np.int64))
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
    # (src, sport, dst, dport) -> packet list of its open connection: most segments carry
    # no SYN, FIN or RST and only need appending
    plain: dict[tuple[str, int, str, int], list[Packet]] = {}
    skip = FRAGMENT | L4_TRUNCATED
    control = SYN | FIN | RST
    for p in packets:
        if p.proto != PROTO_TCP or p.status & skip:
            continue
        if not p.tcp_flags & control:
            same = plain.get((p.src, p.sport, p.dst, p.dport))
            if same is not None:
                same.append(p)
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
            plain[(*here, *there)] = plain[(*there, *here)] = conn.packets
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


def tcp_connections_of(records: np.ndarray) -> list[TcpConnection]:
    """tcp_connections(packets_of(records)) for IP records (pcap.ip_records), with each
    connection's Packet objects made only when used. Only segments that can open or
    close a connection (SYN, FIN, RST, the first of a 4-tuple) go through the state
    machine; every other segment belongs to the latest connection of its 4-tuple."""
    tcp = (records["proto"] == PROTO_TCP) & ((records["status"] & (FRAGMENT | L4_TRUNCATED)) == 0)
    if tcp.all():
        index = None
        t = records
    else:  # only the needed columns, not the 160-byte records
        index = np.flatnonzero(tcp)
        t = {name: records[name][index] for name in (
            "ip_version", "src", "dst", "sport", "dport", "tcp_flags", "tcp_seq")}
    if not len(t["sport"]):
        return []
    version = t["ip_version"]
    src = (address_ids(version, t["src"]) << 16) | t["sport"]
    dst = (address_ids(version, t["dst"]) << 16) | t["dport"]
    _, lo = np.unique(np.minimum(src, dst), return_inverse=True)
    _, hi = np.unique(np.maximum(src, dst), return_inverse=True)
    lo, hi = lo.reshape(-1), hi.reshape(-1)
    _, first, key = np.unique(lo * (int(hi.max()) + 1) + hi, return_index=True,
                              return_inverse=True)
    key = key.reshape(-1)
    flags = t["tcp_flags"]
    decisive = (flags & (SYN | FIN | RST)) != 0
    decisive[first] = True
    starts, synack, new_syn = _connection_starts(np.flatnonzero(decisive), key, flags,
                                                 t["tcp_seq"], src)
    conn_of_row = _latest_start(starts, key)
    order = np.argsort(conn_of_row, kind="stable")
    bounds = np.searchsorted(conn_of_row[order], np.arange(len(starts) + 1))
    here_addr = address_texts(version[starts], t["src"][starts])
    there_addr = address_texts(version[starts], t["dst"][starts])
    result = []
    for c, row in enumerate(starts.tolist()):
        here = (here_addr[c], int(t["sport"][row]))
        there = (there_addr[c], int(t["dport"][row]))
        client, server = (there, here) if synack[c] else (here, there)
        rows = order[bounds[c]:bounds[c + 1]]
        mine = _take(records, rows if index is None else index[rows])
        result.append(TcpConnection(client, server, saw_syn=new_syn[c], records=mine,
                                    from_client=src[rows] == src[row] if not synack[c]
                                    else src[rows] == dst[row]))
    return result


def _connection_starts(rows: np.ndarray, key: np.ndarray, flags: np.ndarray, seq: np.ndarray,
                       src: np.ndarray) -> tuple[np.ndarray, list[bool], list[bool]]:
    """tcp_connections's state machine over the decisive rows: where connections start."""
    states: dict[int, _Open] = {}
    starts: list[int] = []
    synacks: list[bool] = []
    new_syns: list[bool] = []
    for row, k, f, s, endpoint in zip(rows.tolist(), key[rows].tolist(), flags[rows].tolist(),
                                      seq[rows].tolist(), src[rows].tolist()):
        current = states.get(k)
        new_syn = bool(f & SYN) and not f & ACK
        if current is None or (new_syn and (current.closed or current.isn != s)):
            starts.append(row)
            synacks.append(bool(f & SYN and f & ACK))
            new_syns.append(new_syn)
            current = states[k] = _Open(None, s if new_syn else None)  # type: ignore[arg-type]
        if f & RST:
            current.closed = True
        elif f & FIN:
            current.fins.add(endpoint)  # type: ignore[arg-type]
            current.closed = len(current.fins) == 2
    return np.array(starts, np.int64), synacks, new_syns


def _latest_start(starts: np.ndarray, key: np.ndarray) -> np.ndarray:
    """For each row, the index (in `starts`) of the latest connection start of its
    4-tuple at or before it."""
    stride = len(key) + 1
    start_keys = key[starts] * stride + starts
    order = np.argsort(start_keys, kind="stable")
    rows_keys = key * stride + np.arange(len(key))
    return order[np.searchsorted(start_keys[order], rows_keys, "right") - 1]


def _take(records: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """records[rows], as a view (no copy of the 160-byte records) when the rows are
    consecutive, as a long transfer's are."""
    if len(rows) and int(rows[-1]) - int(rows[0]) + 1 == len(rows):
        return records[int(rows[0]):int(rows[-1]) + 1]
    return records[rows]
