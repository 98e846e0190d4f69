"""Per-connection TCP metrics at the sender (IIP report section 6; analysis/README.md)."""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from analysis.metrics.connections import Endpoint, TcpConnection
from analysis.metrics.intervals import IntervalSet
from analysis.join.by_identity import CONGESTION_FATES, UNSEEN, PacketFate
from analysis.read.pcap import ACK, FIN, HAS_TCP_TS, RST, SYN, sack_blocks

SEQ_MOD = 1 << 32
RTO_FLOOR_US = 200_000  # Linux TCP_RTO_MIN: no timeout fires sooner
DUPTHRESH = 3
# A SYN-ACK sent this soon after a duplicate SYN arrived answers it (Linux replies at once,
# tcp_check_req); its own timer fires no sooner than 1 s after the previous SYN-ACK.
SYN_REPLY_US = 50_000
# Linux's RACK reordering timer fires when the kernel computed (tcp_recovery.c), plus 2
# jiffies and the timer wheel's rounding (up to 1/8 of the timeout; a jiffy is 10 ms at
# HZ = 100): what a retransmission may lag behind the computed expiry and still be its.
REO_SLACK_US = 40_000
# A retransmission this soon after a packet arrived was sent on that ACK, not by a timer.
ACK_CLOCKED_US = 5_000

# Retransmission classes (README: "Retransmission classes").
RTO = "rto"              # the first retransmission after a retransmission timeout
AFTER_RTO = "after_rto"  # further retransmissions of the recovery that follows a timeout
FAST = "fast"            # loss recovery on ACKs (dupacks, SACK) or RACK's reordering timer
PROBE = "probe"          # after a silence, but not of the oldest outstanding data (TLP)
SYN_REPLY = "syn_reply"  # a SYN-ACK answering a duplicate SYN: a reply, not a timeout
OTHER = "other"
CLASSES = (RTO, AFTER_RTO, FAST, PROBE, SYN_REPLY, OTHER)


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
    rto_events: int                 # retransmission timeouts, SYN timeouts included
    fast_retransmits: int           # fast-recovery episodes
    unnecessary_retransmissions: int | None
    spurious_rtos: int | None
    fates: dict[str, int] | None    # link fate -> count over the sender's packets; None w/o log
    syn_retransmissions: int = 0    # SYNs and SYN-ACKs sent again (timeouts and replies)
    loss_undos: int = 0             # timeouts the sender itself found spurious (timestamps)
    # the same over the receiver's packets (ACKs), from the receiver's capture; filled by
    # analysis.metrics.per_connection when both captures are there
    reverse_fates: dict[str, int] | None = None
    # the metrics of the other endpoint's packets (the receiver's SYN, requests, ACKs),
    # measured in its own capture; filled by analysis.metrics.per_connection when it is there
    peer: TcpMetrics | None = None
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
# tcp_seq, tcp_ack, payload_len, tos, sack, TSval, TSecr (None without the option))
Segment = tuple[bool, int, int, int, int, int, int, int, tuple[tuple[int, int], ...],
                int | None, int | None]


def _segments(conn: TcpConnection, sender: Endpoint) -> list[Segment]:
    """The connection's segments in capture order; from its records when its Packet
    objects have not been made (they are not needed here)."""
    records = conn.unmade_records()
    if records is not None:
        has_ts = ((records["status"] & HAS_TCP_TS) != 0).tolist()
        ts_val = [v if h else None for v, h in zip(records["ts_val"].tolist(), has_ts)]
        ts_ecr = [v if h else None for v, h in zip(records["ts_ecr"].tolist(), has_ts)]
        return list(zip(conn.sent_mask(sender).tolist(), *(records[name].tolist() for name in (
            "frame_no", "ts_us", "tcp_flags", "tcp_seq", "tcp_ack", "payload_len", "tos")),
            sack_blocks(records), ts_val, ts_ecr))
    return [((p.src, p.sport) == sender, p.frame_no, p.ts_us, p.tcp_flags, p.tcp_seq,
             p.tcp_ack, p.payload_len, p.tos, p.sack, p.ts_val, p.ts_ecr) for p in conn.packets]


def _sender_isn(segments: list[Segment]) -> int:
    first_sent = None
    for mine, _, _, flags, seq, *_ in segments:
        if mine:
            if flags & SYN:
                return seq
            if first_sent is None:
                first_sent = seq
    return (first_sent - 1) % SEQ_MOD if first_sent is not None else 0


def _ts_before(a: int, b: int) -> bool:
    """TCP timestamp a is before b (modulo 2**32, as the kernel's `before`)."""
    return (a - b) % SEQ_MOD >= SEQ_MOD // 2


class _Flight:
    """The sender's segments in sequence order (relative sequence numbers) with the time of
    their latest transmission, whether they were ever sent again, and whether the peer has
    acknowledged or selectively acknowledged them: what Linux keeps per skb for RACK."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.sent_us: list[int] = []
        self.ts_val: list[int | None] = []  # TSval of the latest transmission
        self.resent: list[bool] = []
        # resent and not marked lost since (Linux: TCPCB_SACKED_RETRANS, counted in retrans_out)
        self.retrans_out: list[bool] = []
        self.done: list[bool] = []
        self.first_open = 0     # index of the first segment not cumulatively acknowledged
        self.any_resent = False
        self.sacked = IntervalSet()

    def _append(self, start: int, end: int, t: int, ts_val: int | None) -> None:
        self.starts.append(start)
        self.ends.append(end)
        self.sent_us.append(t)
        self.ts_val.append(ts_val)
        self.resent.append(False)
        self.retrans_out.append(False)
        self.done.append(False)

    def send(self, start: int, end: int, t: int, ts_val: int | None) -> None:
        if not self.starts or start >= self.ends[-1]:
            self._append(start, end, t, ts_val)
            return
        i = max(bisect.bisect_right(self.starts, start) - 1, 0)
        while i < len(self.starts) and self.starts[i] < end:
            if self.ends[i] > start:
                self.sent_us[i], self.ts_val[i], self.resent[i] = t, ts_val, True
                self.retrans_out[i] = True
                self.any_resent = True
            i += 1
        if end > self.ends[-1]:     # a retransmission that also carries new data
            self._append(self.ends[-1], end, t, ts_val)

    def last_sent_us(self, start: int) -> int | None:
        i = bisect.bisect_right(self.starts, start) - 1
        return self.sent_us[i] if i >= 0 else None

    def acked(self, una: int) -> list[int]:
        """Indices of the segments newly covered by a cumulative ACK of `una`."""
        out = []
        i = self.first_open
        while i < len(self.starts) and self.ends[i] <= una:
            if not self.done[i]:
                self.done[i] = True
                out.append(i)
            i += 1
        self.first_open = i
        return out

    def outstanding_before(self, end: int, sent_us: int) -> list[int]:
        """Transmission times of the segments neither acknowledged nor SACKed that end at
        or below `end` and were sent before `sent_us`."""
        out = []
        i = self.first_open
        while i < len(self.starts) and self.ends[i] <= end:
            if not self.done[i] and self.sent_us[i] < sent_us:
                out.append(self.sent_us[i])
            i += 1
        return out

    def mark_lost_at_timeout(self, t: int, rack_rtt_us: int) -> None:
        """A retransmission timeout marks the oldest segment lost and every other one whose
        RACK time has passed; one sent again within RACK.rtt stays a retransmission in flight
        (tcp_timeout_mark_lost)."""
        head = True
        for i in range(self.first_open, len(self.starts)):
            if self.done[i]:
                continue
            if head or rack_rtt_us - (t - self.sent_us[i]) <= 0:
                self.retrans_out[i] = False
            head = False

    def mark_lost_retransmissions(self, t: int, rack_sent_us: int, rack_end: int,
                                  rack_rtt_us: int) -> bool:
        """RACK in the Loss state (reordering window 0): marks lost every retransmission
        still in flight that was sent before the latest delivered transmission and whose
        RACK.rtt has passed; whether there was one (Linux: FLAG_LOST_RETRANS)."""
        lost = False
        for i in range(self.first_open, len(self.starts)):
            sent = self.sent_us[i]
            if self.done[i] or not self.retrans_out[i]:
                continue
            before = sent < rack_sent_us or (sent == rack_sent_us and self.ends[i] < rack_end)
            if before and rack_rtt_us - (t - sent) <= 0:
                self.retrans_out[i] = False
                lost = True
        return lost

    def sacked_now(self, left: int, right: int) -> list[int]:
        """Indices of the segments a SACK block [left, right) newly covers."""
        if right <= left or self.sacked.covers(left, right):
            return []
        self.sacked.add(left, right)
        out = []
        i = bisect.bisect_left(self.starts, left)
        while i < len(self.starts) and self.starts[i] < right:
            if self.ends[i] <= right and not self.done[i]:
                self.done[i] = True
                out.append(i)
            i += 1
        return out


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
    rto_recover: int | None = None  # recovery point of an open RTO recovery (Linux: Loss)
    fast_recover: int | None = None  # of an open fast recovery (Linux: Recovery)
    fin_end: int | None = None
    acks: list[tuple[int, int]] = field(default_factory=list)  # (time, snd_una) advances
    # Linux's retrans_stamp: TSval of the first retransmission still outstanding; an ACK
    # echoing an earlier TSval proves the original arrived (the timeout's undo)
    retrans_stamp: int | None = None
    retransmitted_end: int = 0      # end of the highest range sent again
    min_rtt_us: int | None = None   # Linux's min_rtt, from the same samples it takes
    rack_sent_us: int = -1          # RACK.mstamp: latest transmission (S)ACKed so far
    rack_end: int = 0               # RACK.end_seq: the end of that segment
    rack_rtt_us: int = 0            # RACK.rtt: of the last segment an ACK newly delivered
    reo_armed_us: int | None = None  # RACK's reordering timer: when armed, when it expires
    reo_expires_us: int | None = None
    syn_rx_us: int | None = None    # when the latest SYN from the peer arrived
    syn_sent_us: int | None = None  # when this side last sent its SYN (or SYN-ACK)
    last_retx_us: int | None = None  # when the previous retransmission was sent

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
    """Replays the sender's capture through a model of what Linux's sender did: its
    retransmission timer, its loss-recovery state (Open, Recovery, Loss), RACK's reordering
    timer and the timestamp undo of a spurious timeout (README: "Retransmission classes")."""

    def __init__(self, conn: TcpConnection, sender: Endpoint,
                 fates: Mapping[int, PacketFate] | None, rto_floor_us: int) -> None:
        self.conn, self.sender, self.fates, self.floor = conn, sender, fates, rto_floor_us
        self.segments = _segments(conn, sender)
        self.st = _State(isn=_sender_isn(self.segments))
        self.flight = _Flight()
        self.delivered = IntervalSet()
        self.retx: list[Retransmission] = []
        self.first_syn_us: int | None = None
        self.first_data_us: int | None = None
        self.packets_sent = 0
        self.fast_episodes = 0
        self.loss_undos = 0
        self.fates_seen: Counter[str] = Counter()
        self.fate_of = _fate_lookup(fates)
        self.ecn_marks = 0
        self.frame_errors = 0
        self.dscp: int | None = None

    def run(self) -> None:
        for mine, frame_no, ts_us, flags, seq, ack, payload_len, tos, sack, ts_val, ts_ecr \
                in self.segments:
            if flags & SYN and self.first_syn_us is None:
                self.first_syn_us = ts_us
            if mine:
                self.on_sent(frame_no, ts_us, flags, seq, payload_len, tos, ts_val)
            else:
                self.on_received(ts_us, flags, ack, payload_len, sack, ts_ecr)

    def on_sent(self, frame_no: int, ts_us: int, flags: int, seq: int, payload_len: int,
                tos: int, ts_val: int | None) -> None:
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
            self.on_retransmission(frame_no, ts_us, start, end, flags, ts_val)
        elif st.snd_una == st.snd_max:
            st.timer_ref_us = ts_us  # nothing was outstanding: the timer starts now
        if flags & SYN:
            st.syn_sent_us = ts_us
        self.flight.send(start, end, ts_us, ts_val)
        st.snd_max = max(st.snd_max, end)
        if flags & FIN:
            st.fin_end = end
        if fate is not None and fate[0] == "out":
            self.delivered.add(start, end)

    def on_retransmission(self, frame_no: int, ts_us: int, start: int, end: int, flags: int,
                          ts_val: int | None) -> None:
        st = self.st
        if start == 0:
            kind = self.classify_syn(ts_us, flags)
        else:
            kind = self.classify(ts_us, start, end)
            if st.retrans_stamp is None and ts_val is not None:
                st.retrans_stamp = ts_val
            st.retransmitted_end = max(st.retransmitted_end, end)
        st.last_retx_us = ts_us
        unnecessary = None if self.fates is None else self.delivered.covers(start, end)
        self.retx.append(Retransmission(frame_no, ts_us, start, end - start, kind,
                                        unnecessary))
        if start <= st.snd_una < end:
            st.head_retransmitted = True
            st.timer_ref_us = ts_us

    def classify_syn(self, t: int, flags: int) -> str:
        """A SYN-ACK sent right after a duplicate SYN arrived answers it (Linux counts it in
        TCPSynRetrans, not as a timeout); any other SYN or SYN-ACK sent again is a timeout."""
        st = self.st
        if (flags & ACK and st.syn_rx_us is not None and st.syn_sent_us is not None
                and st.syn_rx_us > st.syn_sent_us and t - st.syn_rx_us <= SYN_REPLY_US):
            return SYN_REPLY
        return RTO

    def classify(self, t: int, start: int, end: int) -> str:
        st = self.st
        head = start <= st.snd_una < end
        silent = st.last_rx_us is None or t - st.last_rx_us >= self.floor
        fast_hint = st.dupacks >= DUPTHRESH or st.max_sack_right > end
        timer_expired = t - st.timer_ref_us >= self.floor
        if self.reordering_timer(t):
            st.rto_recover = st.reo_armed_us = st.reo_expires_us = None
            return self.fast()
        if head and (silent or (timer_expired and (not fast_hint or st.head_retransmitted))):
            st.rto_recover, st.fast_recover = st.snd_max, None
            self.flight.mark_lost_at_timeout(t, st.rack_rtt_us)
            return RTO
        if st.fast_recover is not None and st.last_retx_us is not None \
                and t - st.last_retx_us <= ACK_CLOCKED_US:
            return FAST  # the rest of what one event (the reordering timer, say) sent again
        if silent:
            return PROBE
        if st.rto_recover is not None:
            return AFTER_RTO
        if fast_hint or st.fast_recover is not None:
            return self.fast()
        return OTHER

    def fast(self) -> str:
        st = self.st
        if st.fast_recover is None:
            self.fast_episodes += 1
            st.fast_recover = st.snd_max
        return FAST

    def reordering_timer(self, t: int) -> bool:
        """Whether RACK's reordering timer sent this retransmission: no packet arrived just
        before it, the timer was pending (an ACK armed it and none cancelled it since) and
        had expired. Since Linux 6.17 RACK is the only loss detection: tcp_recovery = 0 no
        longer turns it off. While it is pending the retransmission timer is not, so a
        retransmission after a silence is either one or the other."""
        st = self.st
        if st.reo_expires_us is None or st.reo_armed_us is None:
            return False
        if st.last_rx_us is not None and t - st.last_rx_us <= ACK_CLOCKED_US:
            return False
        late = (st.reo_expires_us - st.reo_armed_us) // 8 + REO_SLACK_US
        return st.reo_armed_us <= t <= st.reo_expires_us + late

    def on_received(self, ts_us: int, flags: int, tcp_ack: int, payload_len: int,
                    sack: tuple[tuple[int, int], ...], ts_ecr: int | None) -> None:
        st = self.st
        st.last_rx_us = ts_us
        if flags & SYN and not flags & ACK:
            st.syn_rx_us = ts_us
        if not flags & ACK or flags & RST:
            return
        ack = st.rel(tcp_ack)
        if ack > st.snd_max + 1 or ack >= SEQ_MOD // 2:
            return  # not an acknowledgement of this sender's data (or before its ISN)
        sacked = [i for left, right in sorted((st.rel(left), st.rel(right)) for left, right in sack)
                  for i in self.flight.sacked_now(left, right)] if sack else []
        newly = self.flight.acked(ack) if ack > st.snd_una else []
        if newly:
            st.reo_armed_us = st.reo_expires_us = None  # the ACK re-armed the RTO timer
        lost_retransmission = (newly or sacked) and self.rack(ts_us, newly, sacked, ts_ecr)
        if ack > st.snd_una:
            st.snd_una, st.dupacks, st.timer_ref_us = ack, 0, ts_us
            st.head_retransmitted = False
            st.acks.append((ts_us, ack))
            if st.rto_recover is not None and ts_ecr is not None and st.retrans_stamp \
                    is not None and ts_ecr and _ts_before(ts_ecr, st.retrans_stamp):
                # the ACK echoes a timestamp sent before the first retransmission: Linux
                # knows the timeout was spurious, undoes it and is Open again
                self.loss_undos += 1
                st.rto_recover = None
            if st.rto_recover is not None and ack >= st.rto_recover:
                st.rto_recover = None
            if st.fast_recover is not None and ack >= st.fast_recover:
                st.fast_recover = None
            if ack >= st.retransmitted_end:
                st.retrans_stamp = None
        elif (ack == st.snd_una and payload_len == 0 and not flags & (SYN | FIN)
              and st.snd_max > st.snd_una):
            st.dupacks += 1
        for _, right in sack:
            r = st.rel(right)
            if r <= st.snd_max:
                st.max_sack_right = max(st.max_sack_right, r)
        if lost_retransmission and st.rto_recover is not None:
            # a retransmission of the Loss state was lost again: Linux leaves Loss for
            # Recovery (tcp_fastretrans_alert) and what it sends next are fast retransmissions
            st.rto_recover = None
            self.fast()

    def rack(self, t: int, newly: list[int], sacked: list[int], ts_ecr: int | None) -> bool:
        """What one ACK does to RACK and to Linux's min_rtt, from the segments it newly
        SACKed and then newly acknowledged, in that order (tcp_sacktag_one,
        tcp_clean_rtx_queue, tcp_rack_advance, tcp_rack_detect_loss): RACK.rtt is that of
        the last of them, RACK.mstamp the latest transmission; then every segment still
        out that was sent before RACK.mstamp is lost once RACK.rtt + min_rtt/4 has passed
        since it was sent, and the reordering timer waits for the last of them. In the Loss
        state, whether it found a retransmission lost again."""
        st, flight = self.st, self.flight
        if not sacked and not flight.any_resent:
            # nothing was ever sent again and nothing SACKed: the last segment acknowledged
            # is the latest one delivered, and nothing older is still out
            last = newly[-1]
            sent = flight.sent_us[last]
            st.rack_rtt_us = t - sent
            if sent >= st.rack_sent_us:
                st.rack_sent_us, st.rack_end = sent, flight.ends[last]
            if st.min_rtt_us is None or st.rack_rtt_us < st.min_rtt_us:
                st.min_rtt_us = st.rack_rtt_us
            return False
        sample = None
        if newly and not any(flight.resent[i] for i in newly):
            sample = t - max(flight.sent_us[i] for i in newly)
        fresh = [flight.sent_us[i] for i in sacked if not flight.resent[i]]
        if fresh:
            sample = t - max(fresh)
        advanced = False
        for i, cumulative in (*((i, False) for i in sacked), *((i, True) for i in newly)):
            sent, ts_val = flight.sent_us[i], flight.ts_val[i]
            if flight.resent[i] and st.min_rtt_us is not None and t - sent < st.min_rtt_us:
                continue  # may be the original's delivery: says nothing about time
            if flight.resent[i] and cumulative and ts_ecr and ts_val is not None \
                    and _ts_before(ts_ecr, ts_val):
                continue  # the ACK echoes an earlier transmission: the original arrived
            advanced = True
            st.rack_rtt_us = t - sent
            if sent > st.rack_sent_us or (sent == st.rack_sent_us
                                          and flight.ends[i] > st.rack_end):
                st.rack_sent_us, st.rack_end = sent, flight.ends[i]
        if sample is not None and (st.min_rtt_us is None or sample < st.min_rtt_us):
            st.min_rtt_us = sample
        if not advanced or st.min_rtt_us is None:
            return False
        lost_retransmission = st.rto_recover is not None and flight.mark_lost_retransmissions(
            t, st.rack_sent_us, st.rack_end, st.rack_rtt_us)
        window = st.min_rtt_us // 4
        wait = max((st.rack_rtt_us + window - (t - sent)
                    for sent in flight.outstanding_before(st.rack_end, st.rack_sent_us)),
                   default=0)
        if wait > 0:
            st.reo_armed_us, st.reo_expires_us = t, t + wait
        return lost_retransmission

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
        fates=dict(a.fates_seen) if fates is not None else None,
        syn_retransmissions=sum(r.rel_seq == 0 for r in a.retx), loss_undos=a.loss_undos,
        retransmission_list=a.retx,
        ecn_marks=a.ecn_marks if fates is not None else None,
        frame_errors=a.frame_errors if fates is not None else None,
        dscp=a.dscp)
