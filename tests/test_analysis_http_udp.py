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
from analysis.metrics.connections import UdpFlow
from analysis.metrics.rows import udp_row
from analysis.metrics.udp import (UdpMetrics, sequence_disagreements, udp_metrics,
                                  with_generator_count)
from scapy.all import IP, UDP, Raw  # type: ignore[attr-defined]
from scapy.packet import Packet as ScapyPacket
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


def plain_datagram(k: int, size: int = 132) -> ScapyPacket:
    """A datagram of any program: no squall-udp header, every payload alike."""
    return IP(src=FIXED, dst=MOBILE) / UDP(sport=40000, dport=6001) / Raw(bytes(size))


def measured(link: ScriptedLink, tmp_path: Path) -> UdpMetrics:
    """The stream's metrics as analyse_replication joins it: both captures with the log."""
    fixed, mobile, log_path = link.write(tmp_path)
    log = read_emulator_log(log_path)
    sent_packets, received_packets = read_packets(fixed), read_packets(mobile)
    [sent] = udp_flows(sent_packets)
    [received] = udp_flows(received_packets) or [UdpFlow(sent.src, sent.dst)]
    return udp_metrics(received, sent, join_capture(sent_packets, log, "fixed"),
                       join_capture(received_packets, log, "mobile"))


@pytest.mark.parametrize("datagram,sequence", [
    (lambda k, t: udp_datagram(k, START_REALTIME_US + t), (9, 0)),
    (lambda k, t: plain_datagram(k), (None, None))], ids=["squall-udp", "any-program"])
def test_udp_stream_with_gap_and_known_jitter(tmp_path: Path, datagram, sequence) -> None:
    """The same numbers whatever the payload: counted from the captures and the log."""
    link = ScriptedLink()
    for seq, delay in enumerate(UDP_DELAYS):
        t = seq * 20 * MS
        if delay is None:
            link.send(t, datagram(seq, t), fate="drop_err", hits=3)
        else:
            link.send(t, datagram(seq, t), delay_us=delay * MS)
    m = measured(link, tmp_path)

    assert m.received == 9 and m.sent == 10 and m.lost == 1 and m.duplicates == 0
    assert (m.lost_congestion, m.lost_error, m.lost_unseen) == (0, 1, 0)
    assert m.reordered == 0
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
    # the link's delays (in -> out) and the captures' (the same here: no stack time)
    assert m.link_delay_median_us == m.owd_median_us == 100 * MS
    assert m.link_delay_variation_us == pytest.approx(50 * MS / 7)
    assert m.reasons == []
    # squall-udp's sequence numbers agree with the captures; a plain payload has none
    assert (m.sequence_received, m.sequence_duplicates) == sequence
    assert sequence_disagreements(m) == []


def test_udp_reordering_is_capture_order_against_send_order(tmp_path: Path) -> None:
    """Datagram 2 is held 50 ms longer: captured after 3 and 4, it is the one reordered."""
    link = ScriptedLink()
    for k in range(6):
        link.send(k * 20 * MS, plain_datagram(k), delay_us=(150 if k == 2 else 100) * MS)
    m = measured(link, tmp_path)
    assert (m.sent, m.received, m.lost, m.reordered, m.duplicates) == (6, 6, 0, 1, 0)


def test_udp_losses_by_cause_and_a_duplicate_copy(tmp_path: Path) -> None:
    """Congestion (send buffer, router stage), error, never seen by the link; a copy of a
    delivered datagram captured again is a duplicate, not a datagram received."""
    link = ScriptedLink()
    fates = ["out", "drop_sbuf", "drop_router", "drop_err", "out", "out"]
    for k, fate in enumerate(fates):
        link.send(k * 20 * MS, plain_datagram(k), fate=fate, hits=1)
    link.send(200 * MS, plain_datagram(9), in_log=False)       # dropped before the link
    link.mobile_frames.append(link.mobile_frames[-1])         # captured twice
    m = measured(link, tmp_path)
    assert (m.sent, m.received, m.duplicates, m.lost) == (7, 3, 1, 4)
    assert (m.lost_congestion, m.lost_error, m.lost_unseen) == (2, 1, 1)


def test_udp_without_sender_capture_is_unknown_not_zero(tmp_path: Path) -> None:
    """What only the sender's capture can tell (sent, lost, jitter) is None, with the reason."""
    link = ScriptedLink()
    for k in range(4):
        link.send(k * 20 * MS, plain_datagram(k))
    _, mobile, log_path = link.write(tmp_path)
    packets = read_packets(mobile)
    [flow] = udp_flows(packets)
    m = udp_metrics(flow, None, None, join_capture(packets, read_emulator_log(log_path), "mobile"))
    assert (m.received, m.duplicates, m.reordered, m.bytes) == (4, 0, 0, 4 * 132)
    assert (m.sent, m.lost, m.lost_error, m.fates, m.jitter_mean_us) == (None,) * 5
    assert m.link_delay_median_us == 100 * MS
    assert any("sender's capture" in r for r in m.reasons)
    assert udp_row("mobile", m)["lost"] is None and "sender's capture" in udp_row("mobile", m)["na_reason"]


def test_squall_udp_sequence_numbers_are_checked_against_the_captures(tmp_path: Path) -> None:
    """A datagram squall-udp sends again (the same sequence number, a new packet for the
    link) is two datagrams to the captures, a copy to the sequence numbers: they disagree,
    and so does a summary that claims more than its host's capture shows."""
    link = ScriptedLink()
    for seq in range(10):  # the last 3 are error-dropped: the sender's capture counts them
        link.send(seq * 20 * MS, udp_datagram(seq, START_REALTIME_US + seq * 20 * MS),
                  fate="drop_err" if seq >= 7 else "out", hits=1)
    m = with_generator_count(measured(link, tmp_path), 10)
    assert (m.received, m.sent, m.lost, m.lost_error) == (7, 10, 3, 3)
    assert sequence_disagreements(m) == []
    assert "says it sent 11" in " ".join(sequence_disagreements(with_generator_count(m, 11)))

    again = ScriptedLink()
    for seq in (0, 1, 1, 2):
        again.send(seq * 20 * MS, udp_datagram(seq, START_REALTIME_US))
    m = measured(again, tmp_path)
    assert (m.received, m.duplicates, m.sequence_received, m.sequence_duplicates) == (4, 0, 3, 1)
    assert "sequence numbers say 3 received" in sequence_disagreements(m)[0]


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
