"""HTTP page response time at the client (IIP report section 6): the first SYN the
client sent -> the last server FIN it received (in sequence: its ACK of the FIN), over the
page's connections.

A FIN counts as received when everything before it has arrived too: the report's page "ends
when the last in-line object has been transferred". A FIN that overtakes a lost segment (a
tail loss, recovered by a retransmission or a timeout) arrives early but ends nothing, so the
end is the client's first acknowledgement of the FIN, which its TCP sends once the sequence
up to the FIN is complete (within microseconds of that packet's arrival, same capture)."""

from __future__ import annotations

from dataclasses import dataclass

from analysis.metrics.connections import Endpoint, TcpConnection
from analysis.read.pcap import ACK, FIN, SYN


@dataclass(frozen=True, slots=True)
class PageTime:
    client: str
    connections: int
    first_syn_us: int
    last_server_fin_us: int
    response_time_us: int


def _first_syn_sent(conn: TcpConnection) -> int | None:
    return next((p.ts_us for p in conn.packets if (p.src, p.sport) == conn.client
                 and p.tcp_flags & SYN and not p.tcp_flags & ACK), None)


def _server_fin_received(conn: TcpConnection) -> int | None:
    """When the client had the server's FIN in sequence: its first ACK of the FIN (module
    docstring); None when it never acknowledged one (the page did not complete)."""
    fin = next((p for p in conn.packets if (p.src, p.sport) == conn.server and p.tcp_flags & FIN), None)
    # squall-http closes only after reading to the end, so it ACKs the FIN; a client that
    # answered with a bare RST would leave the page without a time
    if fin is None:
        return None
    after_fin = (fin.tcp_seq + fin.payload_len + 1) & 0xFFFFFFFF
    return next((p.ts_us for p in conn.packets if (p.src, p.sport) == conn.client and p.tcp_flags & ACK
                 and p.ts_us >= fin.ts_us and _seq_at_or_after(p.tcp_ack, after_fin)), None)


def _seq_at_or_after(a: int, b: int) -> bool:
    """a >= b in 32-bit sequence space."""
    return (a - b) & 0xFFFFFFFF < 0x80000000


def page_response_time(conns: list[TcpConnection]) -> PageTime | None:
    """Response time of one page from the client's capture; None when a connection's
    SYN or server FIN is missing (the page did not complete inside the capture)."""
    if not conns:
        return None
    starts = [_first_syn_sent(c) for c in conns]
    ends = [_server_fin_received(c) for c in conns]
    if any(s is None for s in starts) or any(e is None for e in ends):
        return None
    first = min(s for s in starts if s is not None)
    last = max(e for e in ends if e is not None)
    return PageTime(client=conns[0].client[0], connections=len(conns), first_syn_us=first,
                    last_server_fin_us=last, response_time_us=last - first)


def group_pages(conns: list[TcpConnection], server: Endpoint,
                page_starts_us: list[int]) -> list[list[TcpConnection]]:
    """Assigns the client's connections to `server` to pages: each connection belongs to
    the last page that started at or before its first SYN. `page_starts_us` come from the
    HTTP client's log (same host, same clock as the client capture)."""
    starts = sorted(page_starts_us)
    pages: list[list[TcpConnection]] = [[] for _ in starts]
    for conn in conns:
        if conn.server != server:
            continue
        syn = _first_syn_sent(conn)
        if syn is None:
            continue
        index = max((i for i, s in enumerate(starts) if s <= syn), default=None)
        if index is not None:
            pages[index].append(conn)
    return pages
