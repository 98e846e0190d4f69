"""Counting TCP segments in a capture (headers-only captures too: lengths come from the IP header)."""
from __future__ import annotations

from scapy.layers.inet import IP, TCP

SYN_FIN_RST = 0x07


def payload_len(p: IP) -> int:
    return p.len - p.ihl * 4 - p[TCP].dataofs * 4


def pure_acks(packets: list[IP], src: str) -> int:
    """Segments src sent that only acknowledge: no payload, no SYN, FIN or RST."""
    return sum(1 for p in packets if p.src == src and payload_len(p) == 0 and not p[TCP].flags & SYN_FIN_RST)


def data_segments(packets: list[IP], src: str) -> int:
    """Segments src sent with payload (retransmissions included)."""
    return sum(1 for p in packets if p.src == src and payload_len(p) > 0)
