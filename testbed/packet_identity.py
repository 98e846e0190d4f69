"""The identity of a packet across the emulator log and host captures.

(proto, src, sport, dst, dport, ip_id, tcp_seq, tcp_ack, payload_len), as in
emulator/LOG_FORMAT.md; never the time.
"""
from __future__ import annotations

from typing import NamedTuple

PROTO_NAMES = {6: "tcp", 17: "udp", 1: "icmp", 58: "icmp6"}


class PacketId(NamedTuple):
    proto: str
    src: str
    sport: str
    dst: str
    dport: str
    ip_id: str
    tcp_seq: str
    tcp_ack: str
    payload_len: str


def from_log_fields(f: dict[str, str]) -> PacketId:
    return PacketId(*(f[k] for k in PacketId._fields))


def from_scapy(ip) -> PacketId:
    """From a scapy IP layer (a capture may be cut at the snap length: lengths come from headers)."""
    proto = PROTO_NAMES.get(ip.proto, str(ip.proto))
    ihl = ip.ihl * 4
    sport = dport = seq = ack = "-"
    if ip.proto == 6:
        tcp = ip.payload
        sport, dport, seq, ack = str(tcp.sport), str(tcp.dport), str(tcp.seq), str(tcp.ack)
        payload_len = ip.len - ihl - tcp.dataofs * 4
    elif ip.proto == 17:
        udp = ip.payload
        sport, dport = str(udp.sport), str(udp.dport)
        payload_len = ip.len - ihl - 8
    else:
        payload_len = ip.len - ihl
    return PacketId(proto, ip.src, sport, ip.dst, dport, str(ip.id), seq, ack, str(payload_len))
