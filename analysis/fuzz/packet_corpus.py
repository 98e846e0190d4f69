"""The seed corpus of the fuzz_packet_parse target (analysis/fuzz/corpus/fuzz_packet_parse/):
one frame per file, its first byte the index of its link type in the target's table. The frames
are built with scapy, which also checks the C parser against them (tests/test_fuzz_corpus.py).

    .venv/bin/python -m analysis.fuzz.packet_corpus     # (re)writes the corpus
"""
from __future__ import annotations

from pathlib import Path

from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.inet6 import IPv6, IPv6ExtHdrFragment
from scapy.layers.l2 import CookedLinux, CookedLinuxV2, Ether, Loopback
from scapy.packet import Packet, Raw

CORPUS = Path(__file__).resolve().parent / "corpus" / "fuzz_packet_parse"
# fuzz_packet_parse.c's table: index -> pcap link type
LINKTYPES = (0, 1, 12, 14, 101, 113, 228, 229, 276)
NULL, EN10MB, RAW, RAW_BSD, RAW_LINKTYPE, SLL, IPV4, IPV6, SLL2 = range(len(LINKTYPES))

A, B = "198.18.1.1", "198.19.1.2"
A6, B6 = "2001:db8::1", "2001:db8::2"


def _syn() -> Packet:
    return IP(src=A, dst=B, id=1) / TCP(sport=40000, dport=5001, flags="S", seq=1000, options=[
        ("MSS", 536), ("SAckOK", b""), ("Timestamp", (7, 0)), ("NOP", None), ("WScale", 7)])


def _sack_ack() -> Packet:
    return IP(src=B, dst=A, id=2, tos=0x02) / TCP(sport=5001, dport=40000, flags="A", seq=5001, ack=1501,
                                                   options=[("NOP", None), ("NOP", None), ("Timestamp", (9, 8)),
                                                            ("SAck", (2001, 2501, 3001, 3501, 4001, 4501))])


def _data(payload: int = 100) -> Packet:
    return IP(src=A, dst=B, id=3, tos=0xb8) / TCP(sport=40000, dport=5001, flags="PA", seq=1001, ack=5001) \
        / Raw(b"x" * payload)


def _udp() -> Packet:
    return IP(src=A, dst=B, id=4) / UDP(sport=6000, dport=6003) / Raw(b"SQUD" + bytes(28))


SEEDS: dict[str, tuple[int, Packet | bytes]] = {
    "raw-tcp-syn-options": (RAW, _syn()),
    "raw-tcp-ack-sack-ts": (RAW, _sack_ack()),
    "raw-tcp-data-dscp": (RAW_LINKTYPE, _data()),
    "raw-udp-squd": (RAW_BSD, _udp()),
    "ipv4-icmp": (IPV4, IP(src=B, dst=A, id=5) / ICMP(type=3, code=4) / Raw(bytes(28))),
    "ipv4-ip-options": (IPV4, IP(src=A, dst=B, id=6, options=b"\x01\x01\x01\x00") / UDP(sport=1, dport=2)),
    "ipv4-fragment": (RAW, IP(src=A, dst=B, id=7, flags="MF", frag=0) / UDP(sport=1, dport=2) / Raw(b"f" * 64)),
    "ipv4-fragment-later": (RAW, IP(src=A, dst=B, id=7, proto=17, frag=9) / Raw(b"g" * 40)),
    "ipv6-tcp": (IPV6, IPv6(src=A6, dst=B6) / TCP(sport=40000, dport=80, flags="S", seq=1)),
    "ipv6-fragment-udp": (RAW, IPv6(src=A6, dst=B6) / IPv6ExtHdrFragment(id=9) / UDP(sport=5, dport=6)),
    "ether-tcp": (EN10MB, Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / _data(512)),
    "sll-udp": (SLL, CookedLinux(pkttype=0, lladdrtype=1, lladdrlen=6, src=b"\x02\x00\x00\x00\x00\x01\x00\x00")
                / _udp()),
    "sll2-tcp": (SLL2, CookedLinuxV2(pkttype=4, lladdrtype=1, lladdrlen=6, src=b"\x02\x00\x00\x00\x00\x01\x00\x00")
                 / _sack_ack()),
    "null-tcp": (NULL, Loopback(type=2) / _syn()),
    "raw-tcp-truncated": (RAW, bytes(_data())[:30]),
}


def seed_bytes(index: int, frame: Packet | bytes) -> bytes:
    return bytes([index]) + bytes(frame)


def main() -> None:
    CORPUS.mkdir(parents=True, exist_ok=True)
    for name, (index, frame) in SEEDS.items():
        (CORPUS / name).write_bytes(seed_bytes(index, frame))
    print(f"{len(SEEDS)} seeds in {CORPUS}")


if __name__ == "__main__":
    main()
