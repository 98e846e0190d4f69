"""Packet identity (LOG_FORMAT.md) and a captured packet's fate in the link."""

from __future__ import annotations

from dataclasses import dataclass

from analysis.emulog import LogEvent
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
