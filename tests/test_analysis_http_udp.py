"""Known-answer tests: HTTP page response time and UDP stream metrics."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.metrics.connections import tcp_connections, udp_flows
from analysis.read.emulog import read_emulator_log
from analysis.metrics.http import group_pages, page_response_time
from analysis.join.by_identity import join_capture
from analysis.read.pcap import read_packets
from analysis.metrics.tcp import tcp_metrics
from analysis.metrics.udp import against_sender, udp_metrics
from test_analysis_support import (FIXED, MOBILE, START_REALTIME_US, ScriptedLink, tcp,
                                   udp_datagram)

MS = 1000
SERVER_PORT = 80


def http10_connection(link: ScriptedLink, t0: int, cport: int, size: int) -> int:
    """One HTTP/1.0 object: the mobile client connects, sends a 350-byte request, the
    fixed server answers with `size` bytes and closes. 100 ms each way. Returns the time
    the server's FIN reaches the client."""
    c, s = 10_000 * cport, 20_000 * cport

    def client(t: int, seq: int, ack: int, flags: str, payload: int = 0) -> None:
        link.send(t, tcp(MOBILE, FIXED, cport, SERVER_PORT, seq, ack, flags, payload))

    def server(t: int, seq: int, ack: int, flags: str, payload: int = 0) -> None:
        link.send(t, tcp(FIXED, MOBILE, SERVER_PORT, cport, seq, ack, flags, payload))

    client(t0, c, 0, "S")
    server(t0 + 100 * MS, s, c + 1, "SA")
    client(t0 + 200 * MS, c + 1, s + 1, "A")
    client(t0 + 200 * MS, c + 1, s + 1, "PA", 350)
    server(t0 + 300 * MS, s + 1, c + 351, "PA", size)
    server(t0 + 301 * MS, s + 1 + size, c + 351, "FA")
    client(t0 + 400 * MS, c + 351, s + 1 + size, "A")
    client(t0 + 401 * MS, c + 351, s + 2 + size, "FA")
    server(t0 + 501 * MS, s + 2 + size, c + 352, "A")
    return t0 + 401 * MS


def test_http10_page_of_four_connections(tmp_path: Path) -> None:
    link = ScriptedLink()
    main_done = http10_connection(link, 0, 41000, 1000)
    fins = [http10_connection(link, main_done + k * MS, 41001 + k, 500) for k in (1, 2, 3)]
    fixed, mobile, _ = link.write(tmp_path)

    conns = tcp_connections(read_packets(mobile))
    pages = group_pages(conns, (FIXED, SERVER_PORT), [START_REALTIME_US])
    assert [len(p) for p in pages] == [4]
    page = page_response_time(pages[0])
    assert page is not None
    assert page.first_syn_us == START_REALTIME_US
    assert page.response_time_us == max(fins) == 805 * MS

    # The main object's elapsed time at the server: first SYN -> ACK of its FIN.
    server_conns = tcp_connections(read_packets(fixed))
    main = tcp_metrics(server_conns[0], sender=(FIXED, SERVER_PORT))
    assert main.bytes == 1000
    assert main.elapsed_us == 400 * MS + 1 * MS   # SYN seen at 100 ms, FIN acked at 501 ms
    assert main.response_us == 201 * MS


def test_a_fin_that_overtakes_a_lost_segment_ends_the_page_only_when_the_hole_is_filled(tmp_path: Path) -> None:
    """A tail loss: the last data segment and the FIN arrive before a lost one is resent. The
    page is complete when the client has everything, which its ACK of the FIN says, not when
    the FIN came in."""
    link = ScriptedLink()
    c, s = 10_000, 20_000

    def client(t: int, seq: int, ack: int, flags: str, payload: int = 0) -> None:
        link.send(t, tcp(MOBILE, FIXED, 41000, SERVER_PORT, seq, ack, flags, payload))

    def server(t: int, seq: int, ack: int, flags: str, payload: int = 0, fate: str = "out") -> None:
        link.send(t, tcp(FIXED, MOBILE, SERVER_PORT, 41000, seq, ack, flags, payload), fate=fate)

    client(0, c, 0, "S")
    server(100 * MS, s, c + 1, "SA")
    client(200 * MS, c + 1, s + 1, "PA", 350)
    server(300 * MS, s + 1, c + 351, "A", 500, fate="drop_err")        # lost on the link
    server(301 * MS, s + 501, c + 351, "FPA", 500)                        # arrives at 401 ms
    client(401 * MS, c + 351, s + 1, "A")                                 # duplicate ACK
    server(1300 * MS, s + 1, c + 351, "A", 500)                           # resent, arrives at 1400 ms
    client(1400 * MS, c + 351, s + 1002, "A")                             # everything, FIN included
    _, mobile, _ = link.write(tmp_path)
    page = page_response_time(tcp_connections(read_packets(mobile)))
    assert page is not None and page.response_time_us == 1400 * MS


def test_page_missing_server_fin_has_no_response_time(tmp_path: Path) -> None:
    link = ScriptedLink()
    link.send(0, tcp(MOBILE, FIXED, 41000, SERVER_PORT, 1, 0, "S"))
    _, mobile, _ = link.write(tmp_path)
    assert page_response_time(tcp_connections(read_packets(mobile))) is None


# Link delays per datagram (ms); None = error drop. Spacing 20 ms at the sender.
UDP_DELAYS = [100, 100, 105, 95, 100, None, 100, 115, 100, 100]


def test_udp_stream_with_gap_and_known_jitter(tmp_path: Path) -> None:
    link = ScriptedLink()
    for seq, delay in enumerate(UDP_DELAYS):
        t = seq * 20 * MS
        pkt = udp_datagram(seq, START_REALTIME_US + t)
        if delay is None:
            link.send(t, pkt, fate="drop_err", hits=3)
        else:
            link.send(t, pkt, delay_us=delay * MS)
    fixed, mobile, log_path = link.write(tmp_path)

    sent_packets = read_packets(fixed)
    fates = join_capture(sent_packets, read_emulator_log(log_path))
    [received] = udp_flows(read_packets(mobile))
    [sent] = udp_flows(sent_packets)
    m = udp_metrics(received, sent, fates)

    assert m.received == 9 and m.sent == 10 and m.lost == 1 and m.duplicates == 0
    assert m.bytes == 9 * 132
    assert m.last_recv_us - m.first_recv_us == 180 * MS
    assert m.throughput_bytes_per_s == pytest.approx(9 * 132 / 0.18)
    # Consecutive pairs: 0,5,10,5 ms; 4->6 spans the loss (ignored); 6->7, 7->8: 15 ms; 8->9: 0.
    assert m.jitter_samples == 7
    assert m.jitter_min_us == 0 and m.jitter_max_us == 15 * MS
    assert m.jitter_mean_us == pytest.approx(50 * MS / 7)
    # receive spacing over the same 7 pairs: 20+25+10+25 and 35+5+20 ms (not the 40 ms across the loss)
    assert m.spacing_mean_us == pytest.approx(140 * MS / 7)
    assert m.fates == {"out": 9, "drop_err": 1}


def test_udp_without_sender_capture_uses_sequence_numbers(tmp_path: Path) -> None:
    link = ScriptedLink()
    for seq in (0, 1, 3):  # 2 is lost before the capture ever saw it
        link.send(seq * 20 * MS, udp_datagram(seq, START_REALTIME_US + seq * 20 * MS))
    link.send(61 * MS, udp_datagram(1, START_REALTIME_US + 20 * MS))  # duplicate
    _, mobile, _ = link.write(tmp_path)
    [flow] = udp_flows(read_packets(mobile))
    m = udp_metrics(flow)
    assert (m.received, m.duplicates, m.expected, m.lost) == (3, 1, 4, 1)
    assert m.sent is None and m.fates is None


def test_udp_loss_at_the_end_of_a_stream_counts_against_the_senders_count(tmp_path: Path) -> None:
    """The receiver's sequence numbers cannot show the last datagrams lost: the sender's own
    summary (squall-udp send's `packets`) can."""
    link = ScriptedLink()
    for seq in range(10):  # the last 3 are error-dropped
        link.send(seq * 20 * MS, udp_datagram(seq, START_REALTIME_US + seq * 20 * MS),
                  fate="drop_err" if seq >= 7 else "out", hits=1)
    _, mobile, _ = link.write(tmp_path)
    [flow] = udp_flows(read_packets(mobile))
    m = udp_metrics(flow)
    assert (m.received, m.expected, m.lost) == (7, 7, 0)
    m = against_sender(m, 10)
    assert (m.received, m.generator_sent, m.expected, m.lost) == (7, 10, 10, 3)
    assert against_sender(udp_metrics(flow), None).lost == 0


def test_http10_classes_rank_inline_objects_by_throughput(tmp_path: Path) -> None:
    from analysis.metrics.classes import MAIN, http10_classes

    link = ScriptedLink()
    done = http10_connection(link, 0, 41000, 1000)
    # Same timing, different sizes: the larger object has the higher throughput.
    for k, size in enumerate((200, 900, 500), start=1):
        http10_connection(link, done + k * MS, 41000 + k, size)
    fixed, _, _ = link.write(tmp_path)
    server = (FIXED, SERVER_PORT)
    metrics = [tcp_metrics(c, sender=server) for c in tcp_connections(read_packets(fixed))]
    classes = http10_classes(list(reversed(metrics)))
    assert [(label, m.bytes) for label, m in classes] == [
        (MAIN, 1000), ("inline1", 900), ("inline2", 500), ("inline3", 200)]


def test_a_capture_page_time_that_disagrees_with_the_client_s_own_is_a_warning() -> None:
    from analysis.aggregate.replication_values import _page_time_disagreements

    values = {"web.response_time_s": 12.71, "web.client_response_time_s": 14.22,
              "ok.response_time_s": 4.4325, "ok.client_response_time_s": 4.4327}
    warnings = _page_time_disagreements(values, ["web", "ok", "absent"])
    assert warnings == ["web: the page time from the client's capture, 12.710 s, and squall-http's own, "
                        "14.220 s, differ by more than 50 ms"]
