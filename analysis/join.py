"""Joining a host capture with the emulator log by packet identity, never by time.

Identity (LOG_FORMAT.md): (proto, src, sport, dst, dport, ip_id, tcp_seq, tcp_ack,
payload_len). Identical identities (IPv6 has no IP id; a host may resend a packet
bit-for-bit) are matched in order: the k-th such packet in the capture is the k-th
`in` event with that identity in the log.
"""

from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass
from typing import Iterable

from analysis.emulog import FINAL_EVENTS, EmulatorLog, LogEvent
from analysis.pcap import FRAGMENT, PROTO_TCP, PROTO_UDP, Packet

PROTO_NAMES = {1: "icmp", 6: "tcp", 17: "udp", 58: "icmp6"}

PacketIdentity = tuple[str, str, int | None, str, int | None, int | None, int | None,
                       int | None, int | None]

# Fates of a packet sent towards the link.
UNSEEN = "unseen"    # never reached the emulator (before the link: tc router drop)
PENDING = "pending"  # entered the link, still inside when the log ended
CONGESTION_FATES = frozenset({"drop_sbuf", "drop_router"})


@dataclass(frozen=True, slots=True)
class PacketFate:
    """What the link did to one captured packet."""
    frame_no: int
    fate: str            # out | drop_sbuf | drop_router | drop_err | drop_mtu | pending | unseen
    pkt_id: int | None   # the emulator's packet id
    dir: str | None      # down | up
    in_us: int | None    # log time of `in`
    end_us: int | None   # log time of the final event
    hits: int            # link frames of it hit by errors (`hit` events; each is an ARQ
                         # retransmission unless it was the last try)
    ecn_marked: bool = False  # the emulator's router stage set CE on it


def packet_identity(p: Packet) -> PacketIdentity:
    """As the emulator logs it: ports, TCP fields and payload length only for TCP/UDP
    packets that carry their transport header; IP id only for IPv4."""
    ports = p.proto in (PROTO_TCP, PROTO_UDP) and not p.status & FRAGMENT
    tcp = ports and p.proto == PROTO_TCP
    return (PROTO_NAMES.get(p.proto, str(p.proto)), p.src, p.sport if ports else None, p.dst,
            p.dport if ports else None, p.ip_id if p.ip_version == 4 else None,
            p.tcp_seq if tcp else None, p.tcp_ack if tcp else None,
            p.payload_len if ports else None)


def event_identity(e: LogEvent) -> PacketIdentity:
    return (e.proto or "", e.src or "", e.sport, e.dst or "", e.dport, e.ip_id, e.tcp_seq,
            e.tcp_ack, e.payload_len)


@dataclass(slots=True)
class _Life:
    dir: str | None
    in_us: int
    fate: str = PENDING
    end_us: int | None = None
    hits: int = 0
    marked: bool = False


def _packet_lives(log: EmulatorLog) -> tuple[dict[PacketIdentity, deque[int]],
                                             dict[int, _Life]]:
    by_identity: dict[PacketIdentity, deque[int]] = defaultdict(deque)
    lives: dict[int, _Life] = {}
    for e in log.events:
        if e.pkt_id is None:
            continue
        if e.event == "in":
            by_identity[event_identity(e)].append(e.pkt_id)
            lives[e.pkt_id] = _Life(dir=e.dir, in_us=e.time_us)
            continue
        life = lives.get(e.pkt_id)
        if life is None:
            continue
        if e.event == "hit":
            life.hits += 1
        elif e.event == "ecn_mark":
            life.marked = True
        elif e.event in FINAL_EVENTS:
            life.fate, life.end_us = e.event, e.time_us
    return by_identity, lives


def join_capture(packets: Iterable[Packet], log: EmulatorLog) -> dict[int, PacketFate]:
    """The fate of every captured packet, by frame number. A packet the log never saw
    gets UNSEEN; whether that is a drop depends on where the capture was taken (a sender's
    capture: it was dropped before the link; a receiver's: it never went through it)."""
    by_identity, lives = _packet_lives(log)
    fates: dict[int, PacketFate] = {}
    for p in packets:
        ids = by_identity.get(packet_identity(p))
        if not ids:
            fates[p.frame_no] = PacketFate(p.frame_no, UNSEEN, None, None, None, None, 0)
            continue
        pkt_id = ids.popleft()
        life = lives[pkt_id]
        fates[p.frame_no] = PacketFate(p.frame_no, life.fate, pkt_id, life.dir, life.in_us,
                                       life.end_us, life.hits, life.marked)
    return fates
