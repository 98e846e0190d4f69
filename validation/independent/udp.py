"""A UDP stream at its receiver (analysis/README.md "UDP metrics", DESIGN.md §3.5), from
tshark's datagrams and the generator's header (workloads/README.md, squall-udp: the magic
"SQUD", a 64-bit sequence number and the 64-bit send time in µs, big-endian, at the payload's
start), written anew from those definitions:
- throughput: the distinct received payload bytes / (last receive - first receive);
- jitter: over datagrams received one after the other with consecutive sequence numbers,
  |(recv2 - recv1) - (send2 - send1)|; pairs across a loss or a reordering are left out."""
from __future__ import annotations

import struct
from dataclasses import dataclass

from validation.independent.capture import Datagram

HEADER = struct.Struct(">4sQQ")
MAGIC = b"SQUD"


@dataclass(frozen=True)
class Received:
    t_ns: int
    seq: int
    send_us: int
    length: int


@dataclass(frozen=True)
class Stream:
    throughput_Bps: float | None
    jitter_mean_ms: float | None
    jitter_samples: int


def _generator_datagrams(datagrams: list[Datagram]) -> list[Received]:
    out = []
    for d in datagrams:
        if len(d.head) < HEADER.size or d.length < HEADER.size:
            continue
        magic, seq, send_us = HEADER.unpack_from(d.head)
        if magic == MAGIC:
            out.append(Received(d.t_ns, seq, send_us, d.length))
    return out


def stream(datagrams: list[Datagram]) -> Stream | None:
    """The stream's values from its datagrams in the receiver's capture (capture order); None
    when none carries the generator's header."""
    got = _generator_datagrams(datagrams)
    if not got:
        return None
    first_copies: dict[int, int] = {}
    for r in got:
        first_copies.setdefault(r.seq, r.length)
    span_s = (got[-1].t_ns - got[0].t_ns) / 1e9
    jitter_ns = [abs((b.t_ns - a.t_ns) - (b.send_us - a.send_us) * 1000)
                 for a, b in zip(got, got[1:]) if b.seq == a.seq + 1]
    return Stream(sum(first_copies.values()) / span_s if span_s > 0 else None,
                  sum(jitter_ns) / len(jitter_ns) / 1e6 if jitter_ns else None, len(jitter_ns))
