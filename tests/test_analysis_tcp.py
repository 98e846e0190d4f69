"""Known-answer tests: TCP connection metrics joined with the emulator log."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.metrics.connections import tcp_connections
from analysis.read.emulog import read_emulator_log
from analysis.join.by_identity import join_capture
from analysis.read.pcap import read_packets
from analysis.metrics.tcp import AFTER_RTO, FAST, RTO, SYN_REPLY, TcpMetrics, tcp_metrics
from test_analysis_support import FIXED, MOBILE, ScriptedLink, tcp

MS = 1000
C_ISN, S_ISN = 1000, 5000
CPORT, SPORT = 40000, 5001


def up(link: ScriptedLink, t: int, seq: int, ack: int, flags: str, **kw: object) -> None:
    link.send(t, tcp(MOBILE, FIXED, SPORT, CPORT, seq, ack, flags, sack=kw.pop("sack", None),
                     ts=kw.pop("ts", None)), **kw)  # type: ignore[arg-type]


def down(link: ScriptedLink, t: int, seq: int, ack: int, flags: str, payload: int = 0,
         **kw: object) -> None:
    link.send(t, tcp(FIXED, MOBILE, CPORT, SPORT, seq, ack, flags, payload,
                     ts=kw.pop("ts", None)), **kw)  # type: ignore[arg-type]


def handshake(link: ScriptedLink) -> None:
    """Fixed host connects to the mobile host; 100 ms each way. Ends at 200 ms."""
    down(link, 0, C_ISN, 0, "S")
    up(link, 100 * MS, S_ISN, C_ISN + 1, "SA")
    down(link, 200 * MS, C_ISN + 1, S_ISN + 1, "A")


def close(link: ScriptedLink, t: int, seq: int) -> None:
    """Fixed host's FIN at t; the mobile host's FIN+ACK arrives at t + 200 ms."""
    down(link, t, seq, S_ISN + 1, "FA")
    up(link, t + 100 * MS, S_ISN + 1, seq + 1, "FA")
    down(link, t + 200 * MS, seq + 1, S_ISN + 2, "A")


def analyse_sender(tmp_path: Path, link: ScriptedLink) -> TcpMetrics:
    fixed, _, log_path = link.write(tmp_path)
    packets = read_packets(fixed)
    conns = tcp_connections(packets)
    assert len(conns) == 1
    fates = join_capture(packets, read_emulator_log(log_path))
    return tcp_metrics(conns[0], sender=(FIXED, CPORT), fates=fates)


def test_rto_with_delivered_original_is_one_spurious_rto(tmp_path: Path) -> None:
    link = ScriptedLink()
    handshake(link)
    # Two segments held 1.5 s by link-layer ARQ; the sender times out and resends the first.
    down(link, 200 * MS, C_ISN + 1, S_ISN + 1, "PA", 500, delay_us=1500 * MS, hits=2)
    down(link, 200 * MS, C_ISN + 501, S_ISN + 1, "PA", 500, delay_us=1500 * MS + 1)
    down(link, 1200 * MS, C_ISN + 1, S_ISN + 1, "PA", 500, delay_us=510 * MS)
    up(link, 1700 * MS, S_ISN + 1, C_ISN + 501, "A")
    up(link, 1700 * MS + 1, S_ISN + 1, C_ISN + 1001, "A")
    up(link, 1710 * MS, S_ISN + 1, C_ISN + 1001, "A")  # the duplicate's ACK
    close(link, 1900 * MS, C_ISN + 1001)

    m = analyse_sender(tmp_path, link)
    assert m.complete
    assert m.bytes == 1000
    assert m.elapsed_us == 2100 * MS
    assert m.response_us == 1900 * MS
    assert m.data_transmit_us == 1600 * MS + 1
    assert m.throughput_bytes_per_s == 1000 / 2.1
    assert m.retransmissions == 1
    assert m.retransmission_list[0].kind == RTO
    assert m.rto_events == 1
    assert m.unnecessary_retransmissions == 1
    assert m.spurious_rtos == 1
    assert m.congestion_drops == 0 and m.error_drops == 0
    assert m.frame_errors == 2 and m.ecn_marks == 0 and m.dscp == 0


def test_fast_retransmit_after_error_drop(tmp_path: Path) -> None:
    link = ScriptedLink()
    handshake(link)
    for k in range(5):
        fate = "drop_err" if k == 1 else "out"
        down(link, (200 + k) * MS, C_ISN + 1 + 500 * k, S_ISN + 1, "PA", 500, fate=fate,
             hits=3 if k == 1 else 0)
    up(link, 300 * MS, S_ISN + 1, C_ISN + 501, "A")
    for k in (2, 3, 4):  # three duplicate ACKs with SACK blocks above the hole
        up(link, (300 + k) * MS, S_ISN + 1, C_ISN + 501, "A",
           sack=[(C_ISN + 1001, C_ISN + 1 + 500 * (k + 1))])
    down(link, 405 * MS, C_ISN + 501, S_ISN + 1, "PA", 500)
    up(link, 505 * MS, S_ISN + 1, C_ISN + 2501, "A")
    close(link, 700 * MS, C_ISN + 2501)

    m = analyse_sender(tmp_path, link)
    assert m.complete and m.bytes == 2500
    assert m.elapsed_us == 900 * MS
    assert m.error_drops == 1
    assert m.congestion_drops == 0
    assert m.retransmissions == 1
    assert m.retransmission_list[0].kind == FAST
    assert m.fast_retransmits == 1 and m.rto_events == 0
    assert m.unnecessary_retransmissions == 0
    assert m.spurious_rtos == 0


def test_congestion_drops_at_send_buffer_and_before_the_link(tmp_path: Path) -> None:
    link = ScriptedLink()
    handshake(link)
    down(link, 200 * MS, C_ISN + 1, S_ISN + 1, "PA", 500, ecn_mark=True)
    down(link, 201 * MS, C_ISN + 501, S_ISN + 1, "PA", 500, fate="drop_sbuf")
    # Never reached the emulator: dropped by the router in front of the link.
    down(link, 202 * MS, C_ISN + 1001, S_ISN + 1, "PA", 500, in_log=False)
    up(link, 300 * MS, S_ISN + 1, C_ISN + 501, "A")
    down(link, 1400 * MS, C_ISN + 501, S_ISN + 1, "PA", 500)  # timeout
    up(link, 1500 * MS, S_ISN + 1, C_ISN + 1001, "A")
    down(link, 1600 * MS, C_ISN + 1001, S_ISN + 1, "PA", 500)  # ACK-clocked after the RTO
    up(link, 1700 * MS, S_ISN + 1, C_ISN + 1501, "A")
    close(link, 1800 * MS, C_ISN + 1501)

    m = analyse_sender(tmp_path, link)
    assert m.fates is not None
    assert m.fates["drop_sbuf"] == 1 and m.fates["unseen"] == 1
    assert m.congestion_drops == 2 and m.error_drops == 0
    assert [r.kind for r in m.retransmission_list] == [RTO, AFTER_RTO]
    assert m.unnecessary_retransmissions == 0 and m.spurious_rtos == 0
    assert m.elapsed_us == 2000 * MS and m.bytes == 1500
    assert m.ecn_marks == 1


def test_metrics_without_log_leave_log_based_fields_unknown(tmp_path: Path) -> None:
    link = ScriptedLink()
    handshake(link)
    down(link, 200 * MS, C_ISN + 1, S_ISN + 1, "PA", 100)
    up(link, 300 * MS, S_ISN + 1, C_ISN + 101, "A")
    close(link, 400 * MS, C_ISN + 101)
    fixed, _, _ = link.write(tmp_path)
    m = tcp_metrics(tcp_connections(read_packets(fixed))[0])
    assert m.sender == (FIXED, CPORT)
    assert m.retransmissions == 0 and m.bytes == 100
    assert m.unnecessary_retransmissions is None and m.congestion_drops is None


def test_port_reuse_starts_a_new_connection(tmp_path: Path) -> None:
    link = ScriptedLink()
    handshake(link)
    close(link, 300 * MS, C_ISN + 1)
    down(link, 1000 * MS, 90000, 0, "S")
    up(link, 1100 * MS, 7000, 90001, "SA")
    fixed, _, _ = link.write(tmp_path)
    conns = tcp_connections(read_packets(fixed))
    assert [len(c.packets) for c in conns] == [6, 2]


def test_capture_starting_at_syn_ack_keeps_client_and_server(tmp_path: Path) -> None:
    link = ScriptedLink()
    down(link, 0, C_ISN, 0, "S", in_log=False)  # lost before the link: no copy at the mobile
    down(link, 1000 * MS, C_ISN, 0, "S")
    up(link, 1100 * MS, S_ISN, C_ISN + 1, "SA")
    _, mobile, _ = link.write(tmp_path)
    [conn] = tcp_connections(read_packets(mobile))
    assert (conn.client, conn.server) == ((FIXED, CPORT), (MOBILE, SPORT))

    link = ScriptedLink()
    up(link, 0, S_ISN, C_ISN + 1, "SA")
    fixed, _, _ = link.write(tmp_path)
    [conn] = tcp_connections(read_packets(fixed))
    assert (conn.client, conn.server, conn.saw_syn) == ((FIXED, CPORT), (MOBILE, SPORT), False)


def test_spurious_rto_followed_by_go_back_n(tmp_path: Path) -> None:
    link = ScriptedLink()
    handshake(link)
    for k in range(3):  # held by ARQ; delivered in order at 1.7 s
        down(link, (200 + k) * MS, C_ISN + 1 + 500 * k, S_ISN + 1, "PA", 500,
             delay_us=(1500 - k) * MS, hits=1)
    down(link, 1200 * MS, C_ISN + 1, S_ISN + 1, "PA", 500, delay_us=600 * MS)  # the RTO
    up(link, 1700 * MS, S_ISN + 1, C_ISN + 501, "A")
    # The late ACK looks like the RTO's answer: the sender goes on resending in slow start.
    down(link, 1800 * MS, C_ISN + 501, S_ISN + 1, "PA", 500, delay_us=100 * MS)
    down(link, 1800 * MS, C_ISN + 1001, S_ISN + 1, "PA", 500, delay_us=100 * MS)
    up(link, 1701 * MS, S_ISN + 1, C_ISN + 1501, "A")
    close(link, 2000 * MS, C_ISN + 1501)

    m = analyse_sender(tmp_path, link)
    assert [r.kind for r in m.retransmission_list] == [RTO, AFTER_RTO, AFTER_RTO]
    assert m.unnecessary_retransmissions == 3 and m.spurious_rtos == 1
    assert m.rto_events == 1 and m.frame_errors == 3


def test_lost_syns_are_timeouts_with_backoff(tmp_path: Path) -> None:
    link = ScriptedLink()
    down(link, 0, C_ISN, 0, "S", fate="drop_err", hits=1)
    down(link, 1000 * MS, C_ISN, 0, "S", fate="drop_sbuf")
    down(link, 3000 * MS, C_ISN, 0, "S")
    up(link, 3100 * MS, S_ISN, C_ISN + 1, "SA")
    down(link, 3200 * MS, C_ISN + 1, S_ISN + 1, "PA", 100)
    up(link, 3300 * MS, S_ISN + 1, C_ISN + 101, "A")
    close(link, 3400 * MS, C_ISN + 101)

    m = analyse_sender(tmp_path, link)
    assert [r.kind for r in m.retransmission_list] == [RTO, RTO]
    assert [r.rel_seq for r in m.retransmission_list] == [0, 0]
    assert m.unnecessary_retransmissions == 0
    assert (m.error_drops, m.congestion_drops) == (1, 1)
    assert m.elapsed_us == 3600 * MS and m.bytes == 100 and m.complete


# --- what Linux's sender did, not only what it sent (README "Retransmission classes") ------


def slow_handshake() -> tuple[ScriptedLink, int]:
    """A handshake at 400 ms each way (min_rtt, the handshake's, 800 ms; its quarter, RACK's
    reordering window, 200 ms); ends at 800 ms. Returns the link and the one-way delay."""
    link, d = ScriptedLink(), 400 * MS
    down(link, 0, C_ISN, 0, "S", delay_us=d)
    up(link, 400 * MS, S_ISN, C_ISN + 1, "SA", delay_us=d)
    down(link, 800 * MS, C_ISN + 1, S_ISN + 1, "A", delay_us=d)
    return link, d


@pytest.mark.parametrize("lost", [(1,), (1, 2)])
def test_reordering_timer_after_a_silence_is_fast_recovery_not_a_timeout(
        tmp_path: Path, lost: tuple[int, ...]) -> None:
    """RACK (the only loss detection since Linux 6.17) marks a segment lost once a later one
    was SACKed and RACK.rtt + min_rtt/4 has passed, on a timer that may fire after 200 ms of
    silence: Linux counts that in TCPFastRetrans, not TCPTimeouts. With two segments lost,
    both are resent in one go when the timer expires: the second is no more a tail loss probe
    than the first is a timeout."""
    link, d = slow_handshake()
    n = 3 + len(lost)  # two segments after the lost ones, SACKed
    for k in range(n):
        down(link, (800 + k) * MS, C_ISN + 1 + 500 * k, S_ISN + 1, "PA", 500, delay_us=d,
             fate="drop_err" if k in lost else "out", hits=3 if k in lost else 0)
    up(link, 1200 * MS, S_ISN + 1, C_ISN + 501, "A", delay_us=d)
    first_sacked = C_ISN + 1 + 500 * (1 + len(lost))
    for k in (1, 2):  # seen at the sender at 1600 + n - 2 + k ms
        up(link, (1200 + n - 3 + k) * MS, S_ISN + 1, C_ISN + 501, "A", delay_us=d,
           sack=[(first_sacked, first_sacked + 500 * k)])
    # The timer expires when the last lost segment (sent at 800 + len(lost) ms) is due:
    # + RACK.rtt (800 ms, of the last SACKed segment) + 200 ms = 1801 or 1802 ms, more than
    # 200 ms after the last ACK.
    for j, k in enumerate(lost):
        down(link, 1810 * MS + 50 * j, C_ISN + 1 + 500 * k, S_ISN + 1, "PA", 500, delay_us=d)
    up(link, 2211 * MS, S_ISN + 1, C_ISN + 1 + 500 * n, "A", delay_us=d)
    close(link, 2700 * MS, C_ISN + 1 + 500 * n)

    m = analyse_sender(tmp_path, link)
    assert [r.kind for r in m.retransmission_list] == [FAST] * len(lost)
    assert (m.rto_events, m.fast_retransmits, m.error_drops) == (0, 1, len(lost))


def test_silence_without_a_pending_reordering_timer_is_a_timeout(tmp_path: Path) -> None:
    """The same loss with nothing SACKed after it: only the retransmission timer is left."""
    link, d = slow_handshake()
    down(link, 800 * MS, C_ISN + 1, S_ISN + 1, "PA", 500, delay_us=d)
    down(link, 801 * MS, C_ISN + 501, S_ISN + 1, "PA", 500, fate="drop_err", hits=3)
    up(link, 1200 * MS, S_ISN + 1, C_ISN + 501, "A", delay_us=d)
    down(link, 2700 * MS, C_ISN + 501, S_ISN + 1, "PA", 500, delay_us=d)
    up(link, 3100 * MS, S_ISN + 1, C_ISN + 1001, "A", delay_us=d)
    close(link, 3600 * MS, C_ISN + 1001)

    m = analyse_sender(tmp_path, link)
    assert [r.kind for r in m.retransmission_list] == [RTO]
    assert (m.rto_events, m.fast_retransmits, m.loss_undos) == (1, 0, 0)


def test_timestamps_undo_a_spurious_timeout_and_end_its_recovery(tmp_path: Path) -> None:
    """The first ACK after a timeout echoes the original's TSval: Linux knows the timeout
    was spurious (TCPLossUndo) and is Open again, so a later loss is a new fast recovery,
    not part of the timeout's (TCPFastRetrans, not TCPSlowStartRetrans)."""
    link = ScriptedLink()
    down(link, 0, C_ISN, 0, "S", ts=(1, 0))
    up(link, 100 * MS, S_ISN, C_ISN + 1, "SA", ts=(7, 1))
    down(link, 200 * MS, C_ISN + 1, S_ISN + 1, "A", ts=(200, 7))
    held = {0: 1500 * MS, 1: 1500 * MS, 3: 1500 * MS}  # ARQ holds them; 2 is lost
    for k in range(4):
        down(link, (200 + k) * MS, C_ISN + 1 + 500 * k, S_ISN + 1, "PA", 500,
             ts=(200 + k, 7), delay_us=held.get(k, 100 * MS),
             fate="out" if k in held else "drop_err", hits=2)
    down(link, 1200 * MS, C_ISN + 1, S_ISN + 1, "PA", 500, ts=(1200, 7), delay_us=600 * MS)
    up(link, 1700 * MS, S_ISN + 1, C_ISN + 501, "A", ts=(9, 200))    # echoes the original
    up(link, 1701 * MS, S_ISN + 1, C_ISN + 1001, "A", ts=(9, 201))
    up(link, 1703 * MS, S_ISN + 1, C_ISN + 1001, "A", ts=(9, 201),
       sack=[(C_ISN + 1501, C_ISN + 2001)])
    # RACK: the segment sent at 202 ms is lost at 202 + 1600 + 50 ms (min_rtt 200 ms)
    down(link, 1855 * MS, C_ISN + 1001, S_ISN + 1, "PA", 500, ts=(1855, 9))
    up(link, 1955 * MS, S_ISN + 1, C_ISN + 2001, "A", ts=(10, 1855))
    down(link, 2100 * MS, C_ISN + 2001, S_ISN + 1, "FA", ts=(2100, 10))
    up(link, 2200 * MS, S_ISN + 1, C_ISN + 2002, "FA", ts=(11, 2100))
    down(link, 2300 * MS, C_ISN + 2002, S_ISN + 2, "A", ts=(2300, 11))

    m = analyse_sender(tmp_path, link)
    assert [r.kind for r in m.retransmission_list] == [RTO, FAST]
    assert (m.rto_events, m.loss_undos, m.fast_retransmits) == (1, 1, 1)
    assert m.spurious_rtos == 1 and m.complete


def test_syn_ack_answering_a_duplicate_syn_is_a_reply_not_a_timeout(tmp_path: Path) -> None:
    """The client's SYN is held 1.2 s by ARQ, so its own timer resends it at 1 s; the server
    answers the duplicate at once (TCPSynRetrans, not TCPTimeouts). Both SYN-ACKs are lost
    and the server's timer resends it 1 s later: that one is a timeout."""
    link = ScriptedLink()
    mob, srv = (MOBILE, 45000), (FIXED, 80)

    def client(t: int, seq: int, ack: int, flags: str, payload: int = 0, **kw: object) -> None:
        link.send(t, tcp(MOBILE, FIXED, 45000, 80, seq, ack, flags, payload), **kw)  # type: ignore[arg-type]

    def server(t: int, seq: int, ack: int, flags: str, payload: int = 0, **kw: object) -> None:
        link.send(t, tcp(FIXED, MOBILE, 80, 45000, seq, ack, flags, payload), **kw)  # type: ignore[arg-type]

    client(0, C_ISN, 0, "S", delay_us=1200 * MS, hits=2)
    client(1000 * MS, C_ISN, 0, "S", delay_us=250 * MS)
    server(1200 * MS, S_ISN, C_ISN + 1, "SA", fate="drop_err", hits=1)
    server(1250 * MS + 40, S_ISN, C_ISN + 1, "SA", fate="drop_err", hits=1)
    server(2250 * MS, S_ISN, C_ISN + 1, "SA")
    client(2350 * MS, C_ISN + 1, S_ISN + 1, "PA", 350)
    server(2450 * MS, S_ISN + 1, C_ISN + 351, "PA", 1000)
    server(2451 * MS, S_ISN + 1001, C_ISN + 351, "FA")
    client(2551 * MS, C_ISN + 351, S_ISN + 1002, "FA")
    server(2651 * MS, S_ISN + 1002, C_ISN + 352, "A")
    fixed, mobile, log_path = link.write(tmp_path)
    log = read_emulator_log(log_path)

    packets = read_packets(fixed)
    [conn] = tcp_connections(packets)
    m = tcp_metrics(conn, sender=srv, fates=join_capture(packets, log))
    assert [r.kind for r in m.retransmission_list] == [SYN_REPLY, RTO]
    assert (m.syn_retransmissions, m.rto_events, m.spurious_rtos) == (2, 1, 0)

    packets = read_packets(mobile)
    [conn] = tcp_connections(packets)
    c = tcp_metrics(conn, sender=mob, fates=join_capture(packets, log))
    # the client's own SYN timeout was spurious: ARQ delivered the first SYN
    assert [r.kind for r in c.retransmission_list] == [RTO]
    assert (c.syn_retransmissions, c.rto_events, c.spurious_rtos) == (1, 1, 1)


def test_a_retransmission_lost_again_turns_the_timeouts_recovery_into_a_fast_one(
        tmp_path: Path) -> None:
    """Seen on an r0 link against the kernel's counters and its tcp_cong_state_set trace: a
    timeout marks lost only the oldest segment and those whose RACK time has passed (RACK.rtt
    was 1.2 s here, of a segment resent long before its ACK); a segment resent 1 s before the
    timeout stays a retransmission in flight. When the timeout's own retransmission is
    acknowledged, RACK finds that one lost again and Linux leaves Loss for Recovery: what it
    sends next is a fast retransmission (TCPFastRetrans, TCPSackRecovery), not TCPSlowStartRetrans."""
    link = ScriptedLink()
    handshake(link)   # min_rtt 200 ms

    def seg(t: int, k: int, fate: str = "out") -> None:
        down(link, t * MS, C_ISN + 1 + 500 * k, S_ISN + 1, "PA", 500, fate=fate,
             hits=3 if fate == "drop_err" else 0)

    def ack(t: int, k: int) -> None:   # acknowledges segments 0..k-1; at the sender at t
        up(link, (t - 100) * MS, S_ISN + 1, C_ISN + 1 + 500 * k, "A")

    for k in range(6):
        seg(200, k, "out" if k == 0 else "drop_err")
    ack(400, 1)
    seg(1400, 1)                       # timeout 1
    ack(1600, 2)
    seg(1600, 2, "drop_err")           # its recovery; 3 arrives, its SACK is lost
    seg(1600, 3)
    seg(2600, 2)                       # timeout 2
    ack(2800, 4)                       # RACK.rtt = 1.2 s, of segment 3
    seg(2800, 4, "drop_err")
    seg(2800, 5, "drop_err")
    seg(3800, 4)                       # timeout 3: segment 5 (1 s old) is not marked lost
    ack(4000, 5)                       # RACK: segment 5 is lost again -> Recovery
    seg(4000, 5)
    ack(4200, 6)
    close(link, 4200 * MS, C_ISN + 3001)

    m = analyse_sender(tmp_path, link)
    assert [r.kind for r in m.retransmission_list] == [
        RTO, AFTER_RTO, AFTER_RTO, RTO, AFTER_RTO, AFTER_RTO, RTO, FAST]
    assert (m.rto_events, m.fast_retransmits, m.loss_undos) == (3, 1, 0)
    assert m.complete
