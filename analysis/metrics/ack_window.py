"""The lines of a Stevens-style time-sequence diagram (tcptrace, Wireshark's tcptrace graph)
beside the sender's segments: the receiver's cumulative ACK and the right edge of its receive
window (ACK + window), each at the time the sender's capture saw the receiver's packet, in
bytes relative to the sender's ISN (as tshark's relative `tcp.ack`).

The advertised window is scaled by the receiver's window scale (RFC 7323) only when both SYNs
carried the option, and never in a SYN itself, as the kernel and tshark read it."""

from __future__ import annotations

from dataclasses import dataclass

from analysis.metrics.connections import Endpoint, TcpConnection
from analysis.read.pcap import ACK, SYN

SEQ_SPACE = 2**32


@dataclass(frozen=True)
class AckPoint:
    ts_us: int       # the sender's capture time of the receiver's packet
    ack: int         # cumulative ACK - the sender's ISN (bytes)
    window_edge: int  # ack + the scaled receive window (bytes)


def sender_isn(conn: TcpConnection, sender: Endpoint) -> int:
    """The sender's ISN: its SYN's sequence number, else its first segment's."""
    sent = conn.sent_by(sender)
    return next((p.tcp_seq for p in sent if p.tcp_flags & SYN),
                sent[0].tcp_seq if sent else 0)


def window_shift(conn: TcpConnection, sender: Endpoint) -> int:
    """The receiver's window scale: its SYN's option, if the sender's SYN carried one too."""
    def scale(endpoint: Endpoint) -> int | None:
        return next((p.wscale for p in conn.sent_by(endpoint) if p.tcp_flags & SYN), None)

    receiver = conn.server if sender == conn.client else conn.client
    theirs, mine = scale(receiver), scale(sender)
    return theirs if theirs is not None and mine is not None else 0


def ack_line(conn: TcpConnection, sender: Endpoint) -> list[AckPoint]:
    """Every packet of the receiver with the ACK flag, in capture order."""
    isn, shift = sender_isn(conn, sender), window_shift(conn, sender)
    receiver = conn.server if sender == conn.client else conn.client
    points = []
    for p in conn.sent_by(receiver):
        if not p.tcp_flags & ACK:
            continue
        ack = (p.tcp_ack - isn) % SEQ_SPACE
        window = p.window if p.tcp_flags & SYN else p.window << shift
        points.append(AckPoint(p.ts_us, ack, ack + window))
    return points
