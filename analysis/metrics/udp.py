"""Per-flow UDP metrics (IIP report section 6): throughput, jitter, loss by cause.

The CBR generator's header (workloads/README.md, squall-udp) is parsed only here: one packet
by `generator_header`, a capture's records at once by `generator_sequence_numbers`."""

from __future__ import annotations

import struct
from collections import Counter
from dataclasses import dataclass

import numpy as np

from analysis.metrics.connections import Endpoint, UdpFlow
from analysis.join.by_identity import PacketFate
from analysis.read.pcap import Packet

GENERATOR_MAGIC = 0x53515544  # "SQUD"
_GENERATOR_HEADER = struct.Struct(">IQQ")  # magic, sequence number, send time (µs)


@dataclass(frozen=True, slots=True)
class GeneratorHeader:
    seq: int
    send_us: int  # the sender's CLOCK_REALTIME µs


def generator_header(p: Packet) -> GeneratorHeader | None:
    """The squall-udp header at the start of the payload, or None (not a generator
    datagram, or the capture's snap length cut it)."""
    if len(p.head) < _GENERATOR_HEADER.size or p.payload_len < _GENERATOR_HEADER.size:
        return None
    magic, seq, send_us = _GENERATOR_HEADER.unpack_from(p.head)
    return GeneratorHeader(seq, send_us) if magic == GENERATOR_MAGIC else None


def generator_sequence_numbers(records: np.ndarray) -> np.ndarray:
    """Each capture record's squall-udp sequence number, -1 where it carries no generator
    header (analysis.read.pcap records: the header is in `head`, the payload's first bytes)."""
    if len(records) == 0:
        return np.zeros(0, np.int64)
    head = np.frombuffer(records["head"].tobytes(), dtype=np.uint8).reshape(len(records), -1)
    size = _GENERATOR_HEADER.size
    magic = head[:, 0:4].copy().view(">u4").ravel()
    seq = head[:, 4:12].copy().view(">u8").ravel().astype(np.int64)
    ok = (magic == GENERATOR_MAGIC) & (records["head_len"] >= size) & (records["payload_len"] >= size)
    return np.where(ok, seq, -1)


@dataclass(slots=True)
class UdpMetrics:
    src: Endpoint
    dst: Endpoint
    received: int                  # generator datagrams in the receiver's capture
    duplicates: int
    reordered: int                 # arrived after a higher sequence number
    bytes: int                     # received payload bytes (duplicates excluded)
    first_recv_us: int | None
    last_recv_us: int | None
    throughput_bytes_per_s: float | None  # bytes / (last - first receive)
    jitter_min_us: int | None      # over consecutive-sequence pairs, |Δrecv - Δsend|
    jitter_max_us: int | None
    jitter_mean_us: float | None
    jitter_samples: int
    # mean receive spacing over the same pairs: what the IIP report's tables call jitter (their
    # e0 values are the send spacing itself; validation/explanations/jitter/)
    spacing_mean_us: float | None
    sent: int | None               # datagrams in the sender's capture (None without it)
    expected: int                  # what the sender sent: generator_sent, else sent, else
                                   # highest sequence received + 1
    lost: int                      # expected - distinct received
    fates: dict[str, int] | None   # link fate -> count over the sent datagrams
    dscp: int | None = None        # DSCP of the first received datagram (DiffServ class)
    generator_sent: int | None = None  # what the sender's own summary says it sent


def against_sender(m: UdpMetrics, generator_sent: int | None) -> UdpMetrics:
    """The loss counted against what the generator says it sent (squall-udp send's summary,
    `packets`): datagrams lost at the end of the stream count too, whatever the captures
    hold. Unchanged without that number."""
    if generator_sent is None:
        return m
    m.generator_sent = generator_sent
    m.expected = max(generator_sent, m.received)
    m.lost = m.expected - m.received
    return m


def combined(streams: list[UdpMetrics]) -> UdpMetrics:
    """Several UDP streams of one flow (iperf3 -u -P N under a command flow) as one: counts and
    fates summed, throughput from the first datagram any of them received to the last, jitter
    over all their samples.
    A count that one stream lacks (None) is None for all."""
    if len(streams) == 1:
        return streams[0]

    def total(values: list[int | None]) -> int | None:
        return None if any(v is None for v in values) else sum(v for v in values if v is not None)

    firsts = [s.first_recv_us for s in streams if s.first_recv_us is not None]
    lasts = [s.last_recv_us for s in streams if s.last_recv_us is not None]
    received_bytes = sum(s.bytes for s in streams)
    span_us = max(lasts) - min(firsts) if firsts and lasts else 0
    samples = sum(s.jitter_samples for s in streams)
    weighted = [(s.jitter_mean_us, s.jitter_samples) for s in streams if s.jitter_mean_us is not None]
    spacings = [(s.spacing_mean_us, s.jitter_samples) for s in streams if s.spacing_mean_us is not None]
    fates: dict[str, int] | None = None
    if all(s.fates is not None for s in streams):
        fates = {}
        for s in streams:
            for fate, n in (s.fates or {}).items():
                fates[fate] = fates.get(fate, 0) + n
    mins = [s.jitter_min_us for s in streams if s.jitter_min_us is not None]
    maxs = [s.jitter_max_us for s in streams if s.jitter_max_us is not None]
    return UdpMetrics(
        src=streams[0].src, dst=streams[0].dst, received=sum(s.received for s in streams),
        duplicates=sum(s.duplicates for s in streams), reordered=sum(s.reordered for s in streams),
        bytes=received_bytes, first_recv_us=min(firsts) if firsts else None,
        last_recv_us=max(lasts) if lasts else None,
        throughput_bytes_per_s=received_bytes / (span_us / 1e6) if span_us > 0 else None,
        jitter_min_us=min(mins) if mins else None, jitter_max_us=max(maxs) if maxs else None,
        jitter_mean_us=sum(m * n for m, n in weighted) / samples if weighted and samples else None,
        jitter_samples=samples,
        spacing_mean_us=sum(m * n for m, n in spacings) / samples if spacings and samples else None,
        sent=total([s.sent for s in streams]),
        expected=sum(s.expected for s in streams), lost=sum(s.lost for s in streams), fates=fates,
        dscp=streams[0].dscp, generator_sent=total([s.generator_sent for s in streams]))


def _consecutive(arrivals: list[tuple[int, GeneratorHeader]]) -> list[tuple[int, int]]:
    """(Δreceive, Δsend) of each pair of datagrams received one after the other with
    consecutive sequence numbers: a pair with a loss between them is left out."""
    return [(r2 - r1, h2.send_us - h1.send_us) for (r1, h1), (r2, h2) in zip(arrivals, arrivals[1:])
            if h2.seq == h1.seq + 1]


def udp_metrics(received: UdpFlow, sent: UdpFlow | None = None,
                fates: dict[int, PacketFate] | None = None) -> UdpMetrics:
    """`received`: the flow in the receiver's capture. `sent` (the same flow in the sender's
    capture) and `fates` (join of the sender's capture with the emulator log) add the
    number sent and the loss by cause."""
    arrivals = [(p.ts_us, h, p.payload_len) for p in received.packets
                if (h := generator_header(p)) is not None]
    seen: set[int] = set()
    duplicates = reordered = n_bytes = 0
    highest = -1
    unique: list[tuple[int, GeneratorHeader]] = []
    for ts, h, size in arrivals:
        if h.seq in seen:
            duplicates += 1
            continue
        seen.add(h.seq)
        reordered += h.seq < highest
        highest = max(highest, h.seq)
        n_bytes += size
        unique.append((ts, h))
    pairs = _consecutive(unique)
    jitter = [abs(received - sent) for received, sent in pairs]
    first = arrivals[0][0] if arrivals else None
    last = arrivals[-1][0] if arrivals else None
    span = last - first if first is not None and last is not None else 0
    sent_count = None
    fate_counts = None
    if sent is not None:
        sent_seqs = {h.seq for p in sent.packets if (h := generator_header(p)) is not None}
        sent_count = len(sent_seqs)
        if fates is not None:
            fate_counts = dict(Counter(fates[p.frame_no].fate for p in sent.packets
                                       if p.frame_no in fates))
    expected = sent_count if sent_count is not None else highest + 1
    return UdpMetrics(
        src=received.src, dst=received.dst, received=len(unique), duplicates=duplicates,
        reordered=reordered, bytes=n_bytes, first_recv_us=first, last_recv_us=last,
        throughput_bytes_per_s=n_bytes / (span / 1e6) if span > 0 else None,
        jitter_min_us=min(jitter) if jitter else None,
        jitter_max_us=max(jitter) if jitter else None,
        jitter_mean_us=sum(jitter) / len(jitter) if jitter else None,
        jitter_samples=len(jitter),
        spacing_mean_us=sum(received for received, _ in pairs) / len(pairs) if pairs else None,
        sent=sent_count, expected=expected,
        lost=max(0, expected - len(unique)), fates=fate_counts,
        dscp=received.packets[0].tos >> 2 if received.packets else None)
