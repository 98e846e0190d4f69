"""Known-answer tests: TCP connection metrics joined with the emulator log."""

from __future__ import annotations

from pathlib import Path

from analysis.connections import tcp_connections
from analysis.emulog import read_emulator_log
from analysis.join import join_capture
from analysis.pcap import read_packets
from analysis.tcp_metrics import AFTER_RTO, FAST, RTO, TcpMetrics, tcp_metrics
from test_analysis_support import FIXED, MOBILE, ScriptedLink, tcp

MS = 1000
C_ISN, S_ISN = 1000, 5000
CPORT, SPORT = 40000, 5001


def up(link: ScriptedLink, t: int, seq: int, ack: int, flags: str, **kw: object) -> None:
    link.send(t, tcp(MOBILE, FIXED, SPORT, CPORT, seq, ack, flags,
                     sack=kw.pop("sack", None)), **kw)  # type: ignore[arg-type]


def down(link: ScriptedLink, t: int, seq: int, ack: int, flags: str, payload: int = 0,
         **kw: object) -> None:
    link.send(t, tcp(FIXED, MOBILE, CPORT, SPORT, seq, ack, flags, payload), **kw)  # type: ignore[arg-type]


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
