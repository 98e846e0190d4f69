"""Per-connection TCP metrics at the sender (IIP report section 6; analysis/README.md)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from analysis.connections import Endpoint, TcpConnection
from analysis.intervals import IntervalSet
from analysis.join import CONGESTION_FATES, UNSEEN, PacketFate
from analysis.pcap import ACK, FIN, RST, SYN, sack_blocks

SEQ_MOD = 1 << 32
RTO_FLOOR_US = 200_000  # Linux TCP_RTO_MIN: no timeout fires sooner
DUPTHRESH = 3

# Retransmission classes (README: "Retransmission classes").
RTO = "rto"              # the first retransmission after a retransmission timeout
AFTER_RTO = "after_rto"  # further retransmissions of the recovery that follows a timeout
FAST = "fast"            # ACK-triggered loss recovery: >= 3 dupacks or SACK above the hole
PROBE = "probe"          # after a silence, but not of the oldest outstanding data (TLP)
OTHER = "other"
CLASSES = (RTO, AFTER_RTO, FAST, PROBE, OTHER)


@dataclass(frozen=True, slots=True)
class Retransmission:
    frame_no: int
    ts_us: int
    rel_seq: int            # relative to the sender's ISN (the SYN is 0)
    length: int             # sequence space: payload + SYN + FIN
    kind: str               # one of CLASSES
    unnecessary: bool | None  # None without an emulator log


@dataclass(slots=True)
class TcpMetrics:
    client: Endpoint
    server: Endpoint
    sender: Endpoint
    complete: bool                  # handshake seen and the sender's FIN acknowledged
    first_syn_us: int | None
    first_data_us: int | None
    data_acked_us: int | None       # ACK of the last data byte
    fin_acked_us: int | None
    elapsed_us: int | None          # first SYN -> ACK of the sender's FIN
    response_us: int | None         # first data segment -> ACK of the sender's FIN
    data_transmit_us: int | None    # first data segment -> ACK of the last data byte
    bytes: int                      # distinct payload bytes sent
    throughput_bytes_per_s: float | None   # bytes / elapsed
    response_throughput_bytes_per_s: float | None  # bytes / response
    packets_sent: int
    retransmissions: int
    retransmissions_by_kind: dict[str, int]
    rto_events: int
    fast_retransmits: int           # fast-recovery episodes
    unnecessary_retransmissions: int | None
    spurious_rtos: int | None
    fates: dict[str, int] | None    # link fate -> count over the sender's packets; None w/o log
    # the same over the receiver's packets (ACKs), from the receiver's capture; filled by
    # analysis.replication when both captures are there
    reverse_fates: dict[str, int] | None = None
    ecn_marks: int | None = None    # sender's packets CE-marked by the emulator's router stage
    frame_errors: int | None = None  # `hit` events of the sender's packets (link ARQ work)
    dscp: int | None = None         # DSCP of the sender's first data segment (DiffServ class)
    retransmission_list: list[Retransmission] = field(default_factory=list)

    @property
    def congestion_drops(self) -> int | None:
        """Send buffer + router stage + packets that never reached the link (tc router)."""
        if self.fates is None:
            return None
        return sum(self.fates.get(f, 0) for f in (*CONGESTION_FATES, UNSEEN))

    @property
    def error_drops(self) -> int | None:
        return None if self.fates is None else self.fates.get("drop_err", 0)


def default_sender(conn: TcpConnection) -> Endpoint:
    """The endpoint that sent more payload (the server for HTTP, the TTCP sender)."""
    c, s = conn.payload_bytes(conn.client), conn.payload_bytes(conn.server)
    return conn.client if c > s else conn.server


# One segment as the analyzer reads it: (sent by the sender, frame_no, ts_us, tcp_flags,
# tcp_seq, tcp_ack, payload_len, tos, sack)
Segment = tuple[bool, int, int, int, int, int, int, int, tuple[tuple[int, int], ...]]


def _segments(conn: TcpConnection, sender: Endpoint) -> list[Segment]:
    """The connection's segments in capture order; from its records when its Packet
    objects have not been made (they are not needed here)."""
    records = conn.unmade_records()
    if records is not None:
        return list(zip(conn.sent_mask(sender).tolist(), *(records[name].tolist() for name in (
            "frame_no", "ts_us", "tcp_flags", "tcp_seq", "tcp_ack", "payload_len", "tos")),
            sack_blocks(records)))
    return [((p.src, p.sport) == sender, p.frame_no, p.ts_us, p.tcp_flags, p.tcp_seq,
             p.tcp_ack, p.payload_len, p.tos, p.sack) for p in conn.packets]


def _sender_isn(segments: list[Segment]) -> int:
    first_sent = None
    for mine, _, _, flags, seq, *_ in segments:
        if mine:
            if flags & SYN:
                return seq
            if first_sent is None:
                first_sent = seq
    return (first_sent - 1) % SEQ_MOD if first_sent is not None else 0


@dataclass(slots=True)
class _State:
    """The sender's view, rebuilt from its capture."""
    isn: int
    snd_una: int = 0
    snd_max: int = 0
    dupacks: int = 0
    max_sack_right: int = 0
    last_rx_us: int | None = None
    timer_ref_us: int = 0           # when the retransmission timer was last (re)started
    head_retransmitted: bool = False  # the oldest segment was resent since the last advance
    rto_recover: int | None = None  # recovery point of an open RTO recovery
    fast_recover: int | None = None
    fin_end: int | None = None
    acks: list[tuple[int, int]] = field(default_factory=list)  # (time, snd_una) advances

    def rel(self, seq: int) -> int:
        return (seq - self.isn) % SEQ_MOD


FateBrief = tuple[str, int, bool]  # fate, hits, ecn_marked


def _fate_lookup(fates: Mapping[int, PacketFate] | None) -> Callable[[int], FateBrief | None]:
    """frame_no -> (fate, hits, ecn_marked); join's FateMap answers without making
    PacketFate objects."""
    if fates is None:
        return lambda frame_no: None
    brief = getattr(fates, "brief", None)
    if brief is not None:
        return brief  # type: ignore[no-any-return]

    def lookup(frame_no: int) -> FateBrief | None:
        f = fates.get(frame_no)
        return None if f is None else (f.fate, f.hits, f.ecn_marked)
    return lookup


class _Analyzer:
    def __init__(self, conn: TcpConnection, sender: Endpoint,
                 fates: Mapping[int, PacketFate] | None, rto_floor_us: int) -> None:
        self.conn, self.sender, self.fates, self.floor = conn, sender, fates, rto_floor_us
        self.segments = _segments(conn, sender)
        self.st = _State(isn=_sender_isn(self.segments))
        self.delivered = IntervalSet()
        self.retx: list[Retransmission] = []
        self.first_syn_us: int | None = None
        self.first_data_us: int | None = None
        self.packets_sent = 0
        self.fast_episodes = 0
        self.fates_seen: Counter[str] = Counter()
        self.fate_of = _fate_lookup(fates)
        self.ecn_marks = 0
        self.frame_errors = 0
        self.dscp: int | None = None

    def run(self) -> None:
        for mine, frame_no, ts_us, flags, seq, ack, payload_len, tos, sack in self.segments:
            if flags & SYN and self.first_syn_us is None:
                self.first_syn_us = ts_us
            if mine:
                self.on_sent(frame_no, ts_us, flags, seq, payload_len, tos)
            else:
                self.on_received(ts_us, flags, ack, payload_len, sack)

    def on_sent(self, frame_no: int, ts_us: int, flags: int, seq: int, payload_len: int,
                tos: int) -> None:
        st = self.st
        self.packets_sent += 1
        fate = self.fate_of(frame_no)
        if fate is not None:
            self.fates_seen[fate[0]] += 1
            self.frame_errors += fate[1]
            self.ecn_marks += fate[2]
        length = payload_len + bool(flags & SYN) + bool(flags & FIN)  # sequence space
        if length == 0:
            return
        start = 0 if flags & SYN else st.rel(seq)
        end = start + length
        if payload_len and self.first_data_us is None:
            self.first_data_us = ts_us
            self.dscp = tos >> 2
        if start < st.snd_max:
            self.on_retransmission(frame_no, ts_us, start, end)
        elif st.snd_una == st.snd_max:
            st.timer_ref_us = ts_us  # nothing was outstanding: the timer starts now
        st.snd_max = max(st.snd_max, end)
        if flags & FIN:
            st.fin_end = end
        if fate is not None and fate[0] == "out":
            self.delivered.add(start, end)

    def on_retransmission(self, frame_no: int, ts_us: int, start: int, end: int) -> None:
        kind = self.classify(ts_us, start, end)
        unnecessary = None if self.fates is None else self.delivered.covers(start, end)
        self.retx.append(Retransmission(frame_no, ts_us, start, end - start, kind,
                                        unnecessary))
        if start <= self.st.snd_una < end:
            self.st.head_retransmitted = True
            self.st.timer_ref_us = ts_us

    def classify(self, t: int, start: int, end: int) -> str:
        st = self.st
        head = start <= st.snd_una < end
        silent = st.last_rx_us is None or t - st.last_rx_us >= self.floor
        fast_hint = st.dupacks >= DUPTHRESH or st.max_sack_right > end
        timer_expired = t - st.timer_ref_us >= self.floor
        if head and (silent or (timer_expired and (not fast_hint or st.head_retransmitted))):
            st.rto_recover, st.fast_recover = st.snd_max, None
            return RTO
        if silent:
            return PROBE
        if st.rto_recover is not None:
            return AFTER_RTO
        if fast_hint:
            if st.fast_recover is None:
                self.fast_episodes += 1
                st.fast_recover = st.snd_max
            return FAST
        return FAST if st.fast_recover is not None else OTHER

    def on_received(self, ts_us: int, flags: int, tcp_ack: int, payload_len: int,
                    sack: tuple[tuple[int, int], ...]) -> None:
        st = self.st
        st.last_rx_us = ts_us
        if not flags & ACK or flags & RST:
            return
        ack = st.rel(tcp_ack)
        if ack > st.snd_max + 1 or ack >= SEQ_MOD // 2:
            return  # not an acknowledgement of this sender's data (or before its ISN)
        if ack > st.snd_una:
            st.snd_una, st.dupacks, st.timer_ref_us = ack, 0, ts_us
            st.head_retransmitted = False
            st.acks.append((ts_us, ack))
            if st.rto_recover is not None and ack >= st.rto_recover:
                st.rto_recover = None
            if st.fast_recover is not None and ack >= st.fast_recover:
                st.fast_recover = None
        elif (ack == st.snd_una and payload_len == 0 and not flags & (SYN | FIN)
              and st.snd_max > st.snd_una):
            st.dupacks += 1
        for _, right in sack:
            r = st.rel(right)
            if r <= st.snd_max:
                st.max_sack_right = max(st.max_sack_right, r)

    def first_ack_at_least(self, point: int | None) -> int | None:
        if point is None:
            return None
        return next((t for t, ack in self.st.acks if ack >= point), None)


def _span(a: int | None, b: int | None) -> int | None:
    return b - a if a is not None and b is not None else None


def _rate(n: int, us: int | None) -> float | None:
    return n / (us / 1e6) if us else None


def tcp_metrics(conn: TcpConnection, sender: Endpoint | None = None,
                fates: Mapping[int, PacketFate] | None = None,
                rto_floor_us: int = RTO_FLOOR_US) -> TcpMetrics:
    """Metrics of `conn` as captured at `sender` (default: the side that sent more payload).
    `fates` (join_capture of that capture with the emulator log) enables drops and
    unnecessary retransmissions."""
    sender = sender or default_sender(conn)
    a = _Analyzer(conn, sender, fates, rto_floor_us)
    a.run()
    st = a.st
    data_end = (st.fin_end - 1) if st.fin_end is not None else st.snd_max
    n_bytes = max(0, data_end - 1)  # data starts at relative sequence 1 (after the SYN)
    fin_acked = a.first_ack_at_least(st.fin_end)
    data_acked = a.first_ack_at_least(data_end) if n_bytes else None
    elapsed = _span(a.first_syn_us, fin_acked)
    response = _span(a.first_data_us, fin_acked)
    kinds = Counter(r.kind for r in a.retx)
    unnecessary = None if fates is None else sum(bool(r.unnecessary) for r in a.retx)
    spurious = None if fates is None else sum(bool(r.unnecessary) for r in a.retx
                                              if r.kind == RTO)
    return TcpMetrics(
        client=conn.client, server=conn.server, sender=sender,
        complete=conn.saw_syn and fin_acked is not None,
        first_syn_us=a.first_syn_us, first_data_us=a.first_data_us, data_acked_us=data_acked,
        fin_acked_us=fin_acked, elapsed_us=elapsed, response_us=response,
        data_transmit_us=_span(a.first_data_us, data_acked), bytes=n_bytes,
        throughput_bytes_per_s=_rate(n_bytes, elapsed),
        response_throughput_bytes_per_s=_rate(n_bytes, response),
        packets_sent=a.packets_sent, retransmissions=len(a.retx),
        retransmissions_by_kind={k: kinds.get(k, 0) for k in CLASSES},
        rto_events=kinds.get(RTO, 0), fast_retransmits=a.fast_episodes,
        unnecessary_retransmissions=unnecessary, spurious_rtos=spurious,
        fates=dict(a.fates_seen) if fates is not None else None, retransmission_list=a.retx,
        ecn_marks=a.ecn_marks if fates is not None else None,
        frame_errors=a.frame_errors if fates is not None else None,
        dscp=a.dscp)
