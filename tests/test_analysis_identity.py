"""Packets whose identity fields are all equal — retransmitted SYN-ACKs with IP id 0,
duplicate pure ACKs over IPv6 — each join their own life in the link, in the capture of
the host that sent them (k-th copy <-> k-th `in`) and of the host that received them
(k-th copy <-> k-th `out`), and the analysis attributes drops and retransmissions to
the right copies (emulator/LOG_FORMAT.md, "Packet identity")."""

from __future__ import annotations

from pathlib import Path

from analysis.read.emulog import read_emulator_log
from analysis.join.identity import packet_identity
from analysis.join.by_identity import join_records
from analysis.read.pcap import Packet, ip_records, packets_of, read_capture
from analysis.metrics.per_connection import analyse_replication
from analysis.metrics.tcp import FAST, RTO
from test_analysis_support import FIXED, FIXED6, MOBILE, MOBILE6, ScriptedLink, tcp

MS = 1000


def lives(path: Path, log_path: Path, side: str, src: str, flags: int,
          ack: int) -> list[tuple[str, int, int]]:
    """(fate, pkt_id, hits) of the capture's packets from src with these TCP flags and
    ACK number, in capture order; their identity fields are checked to be equal (else
    the test proves nothing)."""
    records = ip_records(read_capture(path))
    fates = join_records(records, read_emulator_log(log_path), side)
    copies: list[Packet] = [p for p in packets_of(records)
                            if (p.src, p.tcp_flags, p.tcp_ack) == (src, flags, ack)]
    assert len({packet_identity(p) for p in copies}) == 1
    return [(fates[p.frame_no].fate, fates[p.frame_no].pkt_id, fates[p.frame_no].hits)
            for p in copies]


def test_retransmitted_syn_acks_with_ip_id_0_join_their_own_lives(tmp_path: Path) -> None:
    """The server's SYN-ACK (IP id 0, as Linux sends it) is lost after 3 ARQ tries; the
    first retransmission is held 2.5 s by ARQ; the second arrives first."""
    link = ScriptedLink()

    def server(t: int, flags: str, seq: int, ack: int, payload: int = 0, **kw: object) -> int:
        pkt_id = link.next_pkt_id
        link.send(t, tcp(FIXED, MOBILE, 5001, 42000, seq, ack, flags, payload), **kw)  # type: ignore[arg-type]
        return pkt_id

    def client(t: int, flags: str, seq: int, ack: int) -> None:
        link.send(t, tcp(MOBILE, FIXED, 42000, 5001, seq, ack, flags))

    client(0, "S", 10, 0)
    sent = [server(100 * MS, "SA", 20, 11, ip_id=0, fate="drop_err", hits=3),
            server(1100 * MS, "SA", 20, 11, ip_id=0, delay_us=2500 * MS, hits=3),
            server(3100 * MS, "SA", 20, 11, ip_id=0)]
    client(3200 * MS, "A", 11, 21)
    server(3300 * MS, "PA", 21, 11, 1000)
    client(3400 * MS, "A", 11, 1021)
    client(3600 * MS, "A", 11, 1021)  # the late SYN-ACK's duplicate ACK
    server(3700 * MS, "FA", 1021, 11)
    client(3800 * MS, "FA", 11, 1022)
    server(3900 * MS, "A", 1022, 12)
    fixed, mobile, log_path = link.write(tmp_path)

    assert lives(fixed, log_path, "fixed", FIXED, 0x12, 11) == [
        ("drop_err", sent[0], 3), ("out", sent[1], 3), ("out", sent[2], 0)]
    # the third copy arrives at 3.2 s, the second at 3.6 s
    assert lives(mobile, log_path, "mobile", FIXED, 0x12, 11) == [
        ("out", sent[2], 0), ("out", sent[1], 3)]

    [(side, m)] = analyse_replication(tmp_path).tcp
    assert (side, m.sender) == ("fixed", (FIXED, 5001))
    assert [(r.kind, r.unnecessary) for r in m.retransmission_list] == [(RTO, False), (RTO, True)]
    assert (m.retransmissions, m.rto_events, m.spurious_rtos) == (2, 2, 1)
    assert (m.error_drops, m.congestion_drops, m.frame_errors) == (1, 0, 6)
    assert m.reverse_fates == {"out": 5}


def test_duplicate_pure_acks_over_ipv6_join_their_own_lives(tmp_path: Path) -> None:
    """A bulk sender's first segment is lost; the receiver's four duplicate ACKs (IPv6:
    no IP id, so all four are the same) lose the first to errors; three still arrive and
    trigger a fast retransmit."""
    link = ScriptedLink()

    def sender(t: int, flags: str, seq: int, payload: int = 0, ack: int = 901,
               **kw: object) -> None:
        link.send(t, tcp(FIXED6, MOBILE6, 40000, 5001, seq, ack, flags, payload), **kw)  # type: ignore[arg-type]

    def receiver(t: int, flags: str, ack: int, seq: int = 901, **kw: object) -> int:
        pkt_id = link.next_pkt_id
        link.send(t, tcp(MOBILE6, FIXED6, 5001, 40000, seq, ack, flags), **kw)  # type: ignore[arg-type]
        return pkt_id

    sender(0, "S", 100, ack=0)
    receiver(100 * MS, "SA", 101, seq=900)
    sender(200 * MS, "A", 101)
    sender(200 * MS, "PA", 101, 500, fate="drop_err", hits=3)
    for i in range(1, 5):
        sender(200 * MS + i, "PA", 101 + 500 * i, 500, delay_us=50 * MS)
    dupacks = [receiver(250 * MS + i, "A", 101, delay_us=50 * MS,
                        **({"fate": "drop_err", "hits": 3} if i == 0 else {}))
               for i in range(4)]
    sender(303 * MS, "PA", 101, 500, delay_us=50 * MS)  # the fast retransmit
    receiver(353 * MS, "A", 2601)
    sender(500 * MS, "FA", 2601)
    receiver(600 * MS, "FA", 2602)
    sender(700 * MS, "A", 2602, ack=902)
    fixed, mobile, log_path = link.write(tmp_path)

    assert lives(mobile, log_path, "mobile", MOBILE6, 0x10, 101) == [
        ("drop_err", dupacks[0], 3), ("out", dupacks[1], 0), ("out", dupacks[2], 0),
        ("out", dupacks[3], 0)]
    assert lives(fixed, log_path, "fixed", MOBILE6, 0x10, 101) == [
        ("out", dupacks[1], 0), ("out", dupacks[2], 0), ("out", dupacks[3], 0)]

    [(side, m)] = analyse_replication(tmp_path).tcp
    assert (side, m.sender) == ("fixed", (FIXED6, 40000))
    assert [(r.kind, r.unnecessary) for r in m.retransmission_list] == [(FAST, False)]
    assert (m.fast_retransmits, m.error_drops, m.congestion_drops) == (1, 1, 0)
    assert m.reverse_fates == {"drop_err": 1, "out": 6}
