"""Per-flow UDP metrics (IIP report section 6): throughput, jitter, loss by cause, for the
datagrams of any program: counted from the captures and the emulator log joined by packet
identity, never from the payload.

The CBR generator's header (workloads/README.md, squall-udp) is parsed only here: one packet
by `generator_header`, a capture's records at once by `generator_sequence_numbers`; its
sequence numbers are an extra check of the counts (`sequence_disagreements`)."""

from __future__ import annotations

import struct
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from analysis.metrics.connections import Endpoint, UdpFlow
from analysis.join.identity import (CONGESTION_FATES, UNSEEN, PacketFate, PacketIdentity,
                               packet_identity)
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
    """One direction of a UDP flow, counted from what squall observed (README "UDP datagrams
    of any program"): the sender's capture, the link's fate of each datagram (the emulator
    log) and the receiver's capture, joined by packet identity (analysis/identity.py). A
    value that cannot be known is None, with the reason in `reasons`."""
    src: Endpoint
    dst: Endpoint
    received: int                  # distinct datagrams in the receiver's capture
    duplicates: int                # copies of a datagram captured again (the link delivered it
                                   # once: a copy no `out` event joins, with its identity)
    reordered: int | None          # captured after a datagram sent later
    bytes: int                     # received payload bytes (duplicates excluded)
    first_recv_us: int | None
    last_recv_us: int | None
    throughput_bytes_per_s: float | None  # bytes / (last - first receive)
    # over pairs of datagrams sent one after the other and both received: |Δrecv - Δsend|,
    # receive and send times from the two captures
    jitter_min_us: int | None
    jitter_max_us: int | None
    jitter_mean_us: float | None
    jitter_samples: int
    # mean receive spacing over the same pairs: what the IIP report's tables call jitter (their
    # e0 values are the send spacing itself; validation/explanations/jitter/)
    spacing_mean_us: float | None
    sent: int | None               # datagrams in the sender's capture
    expected: int | None           # = sent
    lost: int | None               # sent - delivered to the receiver's capture
    fates: dict[str, int] | None   # link fate -> count over the sent datagrams
    dscp: int | None = None        # DSCP of the first received datagram (DiffServ class)
    generator_sent: int | None = None  # what squall-udp's own summary says it sent
    # the lost datagrams by cause (None without the sender's capture): the link's send
    # buffer or router stage; bit errors; never seen by the link (dropped before it)
    lost_congestion: int | None = None
    lost_error: int | None = None
    lost_unseen: int | None = None
    # one-way delays of the delivered datagrams: the link's (emulator in -> out) and the whole
    # way from the sender's capture to the receiver's
    link_delay_median_us: float | None = None
    link_delay_variation_us: float | None = None  # mean |Δ link delay| of the pairs above
    owd_median_us: float | None = None
    # squall-udp's payload (sequence numbers), where every datagram carries its header: the
    # distinct numbers received and the copies (an extra check of `received`/`duplicates`)
    sequence_received: int | None = None
    sequence_duplicates: int | None = None
    reasons: list[str] = field(default_factory=list)  # why values are None


@dataclass(frozen=True, slots=True)
class _Arrival:
    ts_us: int
    payload_len: int
    pkt_id: int | None   # the link's packet, None: not through the link
    order: int | None    # its place in the send order


def _send_order(sent: UdpFlow | None, sent_fates: Mapping[int, PacketFate] | None,
                ) -> dict[int, tuple[int, int]]:
    """pkt_id -> (place in the sender's capture, capture time) of every datagram the link
    took in."""
    if sent is None or sent_fates is None:
        return {}
    order: dict[int, tuple[int, int]] = {}
    for i, p in enumerate(sent.packets):
        fate = sent_fates.get(p.frame_no)
        if fate is not None and fate.pkt_id is not None:
            order[fate.pkt_id] = (i, p.ts_us)
    return order


def _arrivals(received: UdpFlow, received_fates: Mapping[int, PacketFate] | None,
              sends: dict[int, tuple[int, int]]) -> list[_Arrival]:
    out = []
    for p in received.packets:
        fate = received_fates.get(p.frame_no) if received_fates is not None else None
        pkt_id = fate.pkt_id if fate is not None else None
        # the place in the sender's capture, else (without it) the link's entry order
        order = sends[pkt_id][0] if pkt_id in sends else None if sends else pkt_id
        out.append(_Arrival(p.ts_us, p.payload_len, pkt_id, order))
    return out


def _link_delays(received: UdpFlow, received_fates: Mapping[int, PacketFate] | None) -> dict[int, int]:
    """pkt_id -> the link's delay (out - in) of every delivered datagram."""
    delays: dict[int, int] = {}
    for p in received.packets:
        fate = received_fates.get(p.frame_no) if received_fates is not None else None
        if fate is not None and fate.pkt_id is not None and fate.in_us is not None \
                and fate.end_us is not None:
            delays.setdefault(fate.pkt_id, fate.end_us - fate.in_us)
    return delays


def with_generator_count(m: UdpMetrics, generator_sent: int | None) -> UdpMetrics:
    """m with what squall-udp send's summary says it sent (`packets`): a check of the
    sender's capture (sequence_disagreements), not a count of its own."""
    m.generator_sent = generator_sent
    return m


def combined(streams: list[UdpMetrics]) -> UdpMetrics:
    """Several UDP streams of one flow (iperf3 -u -P N under a command flow) as one: counts and
    fates summed, throughput from the first datagram any of them received to the last, jitter
    and delays weighted by each stream's samples. A count that one stream lacks (None) is
    None for all."""
    if len(streams) == 1:
        return streams[0]

    def total(values: list[int | None]) -> int | None:
        return None if any(v is None for v in values) else sum(v for v in values if v is not None)

    def weighted(attr: str, weight: str = "jitter_samples") -> float | None:
        pairs = [(getattr(s, attr), getattr(s, weight)) for s in streams
                 if getattr(s, attr) is not None]
        n = sum(w for _, w in pairs)
        return sum(v * w for v, w in pairs) / n if pairs and n else None

    firsts = [s.first_recv_us for s in streams if s.first_recv_us is not None]
    lasts = [s.last_recv_us for s in streams if s.last_recv_us is not None]
    received_bytes = sum(s.bytes for s in streams)
    span_us = max(lasts) - min(firsts) if firsts and lasts else 0
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
        duplicates=sum(s.duplicates for s in streams),
        reordered=total([s.reordered for s in streams]),
        bytes=received_bytes, first_recv_us=min(firsts) if firsts else None,
        last_recv_us=max(lasts) if lasts else None,
        throughput_bytes_per_s=received_bytes / (span_us / 1e6) if span_us > 0 else None,
        jitter_min_us=min(mins) if mins else None, jitter_max_us=max(maxs) if maxs else None,
        jitter_mean_us=weighted("jitter_mean_us"),
        jitter_samples=sum(s.jitter_samples for s in streams),
        spacing_mean_us=weighted("spacing_mean_us"),
        sent=total([s.sent for s in streams]), expected=total([s.expected for s in streams]),
        lost=total([s.lost for s in streams]), fates=fates, dscp=streams[0].dscp,
        generator_sent=total([s.generator_sent for s in streams]),
        lost_congestion=total([s.lost_congestion for s in streams]),
        lost_error=total([s.lost_error for s in streams]),
        lost_unseen=total([s.lost_unseen for s in streams]),
        # a median of medians weighted by their datagrams: close, not exact
        link_delay_median_us=weighted("link_delay_median_us", "received"),
        link_delay_variation_us=weighted("link_delay_variation_us"),
        owd_median_us=weighted("owd_median_us", "received"),
        reasons=list(dict.fromkeys(r for s in streams for r in s.reasons)))


def udp_metrics(received: UdpFlow, sent: UdpFlow | None = None,
                sent_fates: Mapping[int, PacketFate] | None = None,
                received_fates: Mapping[int, PacketFate] | None = None) -> UdpMetrics:
    """`received`: the flow in the receiver's capture, `received_fates` that capture's join
    with the log; `sent`: the same flow in the sender's capture, `sent_fates` its join. A
    datagram is the link's packet (pkt_id): received once however often captured, its send
    order its place in the sender's capture (the link's entry order without it)."""
    reasons: list[str] = []
    sends = _send_order(sent, sent_fates)
    arrivals = _arrivals(received, received_fates, sends)
    if received_fates is None and arrivals:
        reasons.append("the receiver's capture is not joined with the emulator log: "
                       "duplicates and reordering unknown")
    unique, seen = _distinct(received, arrivals, joined=received_fates is not None)
    duplicates = len(arrivals) - len(unique)
    reordered = _reordered(unique) if received_fates is not None else None
    n_bytes = sum(a.payload_len for a in unique)
    first = arrivals[0].ts_us if arrivals else None
    last = arrivals[-1].ts_us if arrivals else None
    span = last - first if first is not None and last is not None else 0
    delays = _link_delays(received, received_fates)
    pairs = _pairs(unique, sends, delays)
    jitter = [abs(d_recv - d_send) for d_recv, d_send, _ in pairs]
    owd = [a.ts_us - sends[a.pkt_id][1] for a in unique if a.pkt_id in sends]
    m = UdpMetrics(
        src=received.src, dst=received.dst, received=len(unique), duplicates=duplicates,
        reordered=reordered, bytes=n_bytes, first_recv_us=first, last_recv_us=last,
        throughput_bytes_per_s=n_bytes / (span / 1e6) if span > 0 else None,
        jitter_min_us=min(jitter) if jitter else None,
        jitter_max_us=max(jitter) if jitter else None,
        jitter_mean_us=sum(jitter) / len(jitter) if jitter else None,
        jitter_samples=len(jitter),
        spacing_mean_us=sum(d for d, _, _ in pairs) / len(pairs) if pairs else None,
        sent=None, expected=None, lost=None, fates=None,
        dscp=received.packets[0].tos >> 2 if received.packets else None,
        link_delay_median_us=float(np.median(list(delays.values()))) if delays else None,
        link_delay_variation_us=(sum(abs(dd) for _, _, dd in pairs) / len(pairs)
                                 if pairs else None),
        owd_median_us=float(np.median(owd)) if owd else None, reasons=reasons)
    _count_losses(m, sent, sent_fates if received_fates is not None else None, seen)
    _sequence_check(m, received)
    if not pairs and (sent is not None and len(unique) > 1):
        reasons.append("no two datagrams sent one after the other were both received: "
                       "no jitter")
    return m


def _distinct(received: UdpFlow, arrivals: list[_Arrival], joined: bool,
              ) -> tuple[list[_Arrival], set[int]]:
    """The arrivals without the copies, and the link's packets among them. Each `out` joins
    one frame: a frame no `out` joins (joined: the capture was joined with the log) is a copy
    when a delivered datagram has its identity, or a datagram that did not come through the
    link."""
    seen: set[int] = set()
    unique: list[_Arrival] = []
    identities: set[PacketIdentity] | None = None
    for p, a in zip(received.packets, arrivals):
        if a.pkt_id is None and joined:
            identities = identities if identities is not None else {
                packet_identity(q) for q, b in zip(received.packets, arrivals) if b.pkt_id is not None}
            if packet_identity(p) in identities:
                continue
        if a.pkt_id is not None and a.pkt_id in seen:
            continue
        if a.pkt_id is not None:
            seen.add(a.pkt_id)
        unique.append(a)
    return unique, seen


def _reordered(unique: list[_Arrival]) -> int:
    """Datagrams captured after one sent later (capture order against send order)."""
    highest, n = -1, 0
    for a in unique:
        if a.order is None:
            continue
        n += a.order < highest
        highest = max(highest, a.order)
    return n


def _pairs(unique: list[_Arrival], sends: dict[int, tuple[int, int]],
           delays: dict[int, int]) -> list[tuple[int, int, int]]:
    """(Δreceive, Δsend, Δlink delay) of each pair of datagrams sent one after the other
    (neighbours in the sender's capture) and both received: a pair with a loss between
    them is left out. Empty without the sender's capture."""
    got = sorted((sends[a.pkt_id][0], a) for a in unique if a.pkt_id in sends)
    out = []
    for (i1, a1), (i2, a2) in zip(got, got[1:]):
        if i2 != i1 + 1:
            continue
        assert a1.pkt_id is not None and a2.pkt_id is not None
        d_link = (delays[a2.pkt_id] - delays[a1.pkt_id]
                  if a1.pkt_id in delays and a2.pkt_id in delays else 0)
        out.append((a2.ts_us - a1.ts_us, sends[a2.pkt_id][1] - sends[a1.pkt_id][1], d_link))
    return out


def _count_losses(m: UdpMetrics, sent: UdpFlow | None,
                  sent_fates: Mapping[int, PacketFate] | None, delivered: set[int]) -> None:
    """sent, lost and the losses by cause, from the sender's capture and its join."""
    if sent is None:
        m.reasons.append("the sender's capture has none of it (missing capture): sent, "
                         "lost and jitter unknown")
        return
    m.sent = m.expected = len(sent.packets)
    if sent_fates is None:
        m.reasons.append("the captures are not joined with the emulator log: loss by cause "
                         "unknown")
        m.lost = max(0, m.sent - m.received)
        return
    fates = [sent_fates.get(p.frame_no) for p in sent.packets]
    m.fates = dict(Counter(f.fate for f in fates if f is not None))
    lost = [f for f in fates if f is None or f.pkt_id not in delivered]
    m.lost = len(lost)
    m.lost_congestion = sum(f is not None and f.fate in CONGESTION_FATES for f in lost)
    m.lost_error = sum(f is not None and f.fate == "drop_err" for f in lost)
    m.lost_unseen = sum(f is None or f.fate == UNSEEN for f in lost)


def _sequence_check(m: UdpMetrics, received: UdpFlow) -> None:
    """squall-udp's sequence numbers, where every received datagram carries them."""
    heads = [generator_header(p) for p in received.packets]
    if not heads or any(h is None for h in heads):
        return
    seqs = [h.seq for h in heads if h is not None]
    m.sequence_received = len(set(seqs))
    m.sequence_duplicates = len(seqs) - len(set(seqs))


def sequence_disagreements(m: UdpMetrics) -> list[str]:
    """Where squall-udp's own numbers (its payload's sequence numbers, its summary's count
    sent) differ from what the captures and the log show: one of them is wrong."""
    out = []
    flow = f"UDP {m.src} -> {m.dst}"
    if m.sequence_received is not None and (m.sequence_received, m.sequence_duplicates) \
            != (m.received, m.duplicates):
        out.append(f"{flow}: squall-udp's sequence numbers say {m.sequence_received} received "
                   f"and {m.sequence_duplicates} copies, the captures {m.received} and "
                   f"{m.duplicates}")
    if m.generator_sent is not None and m.sent is not None and m.generator_sent != m.sent:
        out.append(f"{flow}: squall-udp says it sent {m.generator_sent} datagrams, its host's "
                   f"capture shows {m.sent}")
    return out
