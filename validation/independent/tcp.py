"""TCP as the cross-check measures it from tshark's segments (DESIGN.md §3.5, analysis/README.md
"TCP metrics" and "HTTP"), written anew from those definitions.

At a connection's sender, sequence numbers relative to the sender's ISN (its SYN is 0, data
from 1):
- elapsed: the first SYN in the capture, either way -> the first ACK covering the sender's FIN;
- response: the first data segment -> the same ACK (an HTTP object's transfer);
- bytes: the FIN's relative sequence - 1 (without a FIN: the highest data byte);
- retransmissions: segments occupying sequence space (data, SYN, FIN) that start below the
  highest sequence the sender had sent before them.
At an HTTP client: the page time, the first SYN the client sent -> its first ACK of the last
server FIN over the page's connections (the client has the FIN in sequence only then)."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from validation.independent.capture import Segment

FIN, SYN, RST, ACK = 0x01, 0x02, 0x04, 0x10
SEQ_MOD = 1 << 32
HALF = 1 << 31

Endpoint = tuple[str, int]


@dataclass
class Connection:
    client: Endpoint                # the sender of the first SYN (else of the first segment)
    server: Endpoint
    segments: list[Segment]         # both directions, in capture order
    client_isns: set[int]           # more than one: the 4-tuple was used again, not told apart

    @property
    def reused(self) -> bool:
        return len(self.client_isns) > 1

    def sent_by(self, end: Endpoint) -> list[Segment]:
        return [s for s in self.segments if (s.src, s.sport) == end]

    def payload_of(self, end: Endpoint) -> int:
        return sum(s.length for s in self.sent_by(end))

    @property
    def sender(self) -> Endpoint:
        """The endpoint that sent more payload (the server of a page, a bulk transfer's client)."""
        return self.client if self.payload_of(self.client) > self.payload_of(self.server) else self.server

    @property
    def receiver(self) -> Endpoint:
        return self.server if self.sender == self.client else self.client


def connections(segments: Iterable[Segment]) -> dict[frozenset[Endpoint], Connection]:
    """One connection per 4-tuple. A 4-tuple opened again with a new ISN is marked `reused`: its
    values are then not computed rather than guessed."""
    found: dict[frozenset[Endpoint], Connection] = {}
    for s in segments:
        a, b = (s.src, s.sport), (s.dst, s.dport)
        key = frozenset((a, b))
        opening = s.flags & SYN and not s.flags & ACK
        conn = found.get(key)
        if conn is None:
            conn = found[key] = Connection(a, b, [], set())
        if opening:
            if not conn.client_isns and conn.client != a:
                conn.client, conn.server = a, b
            conn.client_isns.add(s.seq)
        conn.segments.append(s)
    return found


def _after(a: int, b: int) -> bool:
    """a >= b in 32-bit sequence space."""
    return (a - b) % SEQ_MOD < HALF


@dataclass(frozen=True)
class Transfer:
    """A connection at its sender; times in ns of the sender's capture."""
    first_syn_ns: int
    first_data_ns: int | None
    fin_acked_ns: int | None
    bytes: int
    retransmissions: int

    @property
    def elapsed_s(self) -> float | None:
        return None if self.fin_acked_ns is None else (self.fin_acked_ns - self.first_syn_ns) / 1e9

    @property
    def response_s(self) -> float | None:
        if self.fin_acked_ns is None or self.first_data_ns is None:
            return None
        return (self.fin_acked_ns - self.first_data_ns) / 1e9

    @property
    def throughput_Bps(self) -> float | None:
        return None if not self.elapsed_s else self.bytes / self.elapsed_s

    @property
    def response_throughput_Bps(self) -> float | None:
        return None if not self.response_s else self.bytes / self.response_s


def transfer(conn: Connection, sender: Endpoint) -> Transfer | None:
    """The transfer of `sender`'s data, from its own capture; None when the capture lacks its SYN
    (no ISN to count from) or the 4-tuple was reused."""
    mine = conn.sent_by(sender)
    isn = next((s.seq for s in mine if s.flags & SYN), None)
    syns = [s.t_ns for s in conn.segments if s.flags & SYN]
    if isn is None or conn.reused or not syns:
        return None
    high, retransmissions, fin_at, data_end = None, 0, None, 1
    for s in mine:
        start = (s.seq - isn) % SEQ_MOD
        occupied = s.length + bool(s.flags & SYN) + bool(s.flags & FIN)
        if occupied:
            retransmissions += high is not None and start < high
            high = start + occupied if high is None else max(high, start + occupied)
        if s.flags & FIN and fin_at is None:
            fin_at = start + s.length
        data_end = max(data_end, start + s.length)
    first_data = next((s.t_ns for s in mine if s.length > 0), None)
    return Transfer(min(syns), first_data, _fin_acked(conn, sender, isn, fin_at),
                    (fin_at if fin_at is not None else data_end) - 1, retransmissions)


def _fin_acked(conn: Connection, sender: Endpoint, isn: int, fin_at: int | None) -> int | None:
    """When the receiver's first ACK covering the sender's FIN shows in the capture."""
    if fin_at is None:
        return None
    wanted = (isn + fin_at + 1) % SEQ_MOD
    receiver = conn.server if sender == conn.client else conn.client
    return next((s.t_ns for s in conn.sent_by(receiver)
                 if s.flags & ACK and _after(s.ack, wanted)), None)


def page_time_s(page: list[Connection]) -> float | None:
    """The page time in the client's capture; None when a connection's SYN or the client's ACK
    of its server's FIN is not there."""
    starts, ends = [], []
    for conn in page:
        starts.append(next((s.t_ns for s in conn.sent_by(conn.client)
                            if s.flags & SYN and not s.flags & ACK), None))
        ends.append(_server_fin_received(conn))
    if not page or None in starts or None in ends:
        return None
    return (max(e for e in ends if e is not None) - min(s for s in starts if s is not None)) / 1e9


def _server_fin_received(conn: Connection) -> int | None:
    fin = next((s for s in conn.sent_by(conn.server) if s.flags & FIN), None)
    if fin is None:
        return None
    wanted = (fin.seq + fin.length + 1) % SEQ_MOD
    return next((s.t_ns for s in conn.sent_by(conn.client)
                 if s.flags & ACK and s.t_ns >= fin.t_ns and _after(s.ack, wanted)), None)
