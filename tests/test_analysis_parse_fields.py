"""The C header extraction agrees with scapy's dissection on varied packets: IPv4/IPv6,
VLAN tags, TCP options, UDP, ICMP, fragments, IPv6 extension headers, snap-length cuts."""

from __future__ import annotations

import random
from pathlib import Path

from scapy.all import (ICMP, IP, TCP, UDP, Dot1Q, Ether, ICMPv6EchoRequest,  # type: ignore[attr-defined]
                       IPv6, IPv6ExtHdrDestOpt, IPv6ExtHdrFragment, IPv6ExtHdrHopByHop, Raw)

from analysis.read.pcap import FRAGMENT, L4_TRUNCATED, read_capture, read_packets
from test_analysis_support import write_pcap


def random_packet(rng: random.Random) -> Ether:
    payload = Raw(bytes(rng.randrange(256) for _ in range(rng.choice([0, 1, 20, 300]))))
    v6 = rng.random() < 0.4
    if v6:
        ip = IPv6(src=f"2001:db8::{rng.randrange(1, 999)}", dst="2001:db8::ff",
                  tc=rng.randrange(256))
        if rng.random() < 0.3:
            ip = ip / IPv6ExtHdrHopByHop() / IPv6ExtHdrDestOpt()
    else:
        ip = IP(src=f"198.18.{rng.randrange(256)}.{rng.randrange(1, 255)}", dst="198.18.0.1",
                id=rng.randrange(65536), tos=rng.randrange(256), ttl=rng.randrange(1, 256))
    kind = rng.choice(["tcp", "tcp", "udp", "icmp"])
    if kind == "tcp":
        options: list[tuple[str, object]] = []
        if rng.random() < 0.5:
            options.append(("Timestamp", (rng.randrange(2**32), rng.randrange(2**32))))
        if rng.random() < 0.5:  # options stay within 40 bytes
            n = rng.randrange(1, 4 if options else 5)
            options.append(("SAck", tuple(rng.randrange(2**32) for _ in range(2 * n))))
        elif rng.random() < 0.5:
            options += [("MSS", rng.randrange(536, 1461)), ("WScale", rng.randrange(15))]
        l4 = TCP(sport=rng.randrange(1, 65536), dport=rng.randrange(1, 65536),
                 seq=rng.randrange(2**32), ack=rng.randrange(2**32), flags=rng.randrange(256),
                 window=rng.randrange(65536), options=options)
    elif kind == "udp":
        l4 = UDP(sport=rng.randrange(1, 65536), dport=rng.randrange(1, 65536))
    else:
        l4 = ICMPv6EchoRequest() if v6 else ICMP(type=rng.randrange(20), code=rng.randrange(5))
    eth = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    if rng.random() < 0.2:
        eth = eth / Dot1Q(vlan=rng.randrange(1, 4095))
    return Ether(bytes(eth / ip / l4 / payload))


def test_fields_match_scapy(tmp_path: Path) -> None:
    rng = random.Random(20261122)
    packets = [random_packet(rng) for _ in range(300)]
    write_pcap(tmp_path / "r.pcap", [(i, bytes(p)) for i, p in enumerate(packets)], linktype=1)
    parsed = read_packets(tmp_path / "r.pcap")
    assert len(parsed) == len(packets)
    for p, rec in zip(packets, parsed):
        ip = p[IP] if IP in p else p[IPv6]
        assert rec.src == ip.src and rec.dst == ip.dst
        if IP in p:
            assert (rec.ip_id, rec.ip_len, rec.tos) == (ip.id, ip.len, ip.tos)
        else:
            assert (rec.ip_id, rec.ip_len, rec.tos) == (None, 40 + ip.plen, ip.tc)
        if TCP in p:
            t = p[TCP]
            assert (rec.proto, rec.sport, rec.dport, rec.tcp_seq, rec.tcp_ack) == (
                6, t.sport, t.dport, t.seq, t.ack)
            assert (rec.tcp_flags, rec.window) == (int(t.flags), t.window)
            assert rec.payload_len == len(bytes(t.payload))
            opts = dict(t.options)
            ts = opts.get("Timestamp")
            assert (rec.ts_val, rec.ts_ecr) == (ts if ts else (None, None))
            sack = opts.get("SAck", ())
            assert rec.sack == tuple(zip(sack[0::2], sack[1::2]))
            assert (rec.mss, rec.wscale) == (opts.get("MSS"), opts.get("WScale"))
        elif UDP in p:
            u = p[UDP]
            assert (rec.proto, rec.sport, rec.dport) == (17, u.sport, u.dport)
            assert rec.payload_len == len(bytes(u.payload))
            assert rec.head == bytes(u.payload)[:24]
        elif ICMP in p:
            assert (rec.proto, rec.icmp_type, rec.icmp_code) == (1, p[ICMP].type, p[ICMP].code)
        else:
            assert (rec.proto, rec.icmp_type) == (58, 128)


def test_fragments_and_snap_length(tmp_path: Path) -> None:
    later_v4 = Ether() / IP(src="198.18.0.1", dst="198.18.0.2", frag=100, proto=6) / Raw(b"x" * 40)
    later_v6 = (Ether() / IPv6(src="2001:db8::1", dst="2001:db8::2")
                / IPv6ExtHdrFragment(offset=10, id=0xdeadbeef, nh=17) / Raw(b"y" * 40))
    full = Ether() / IP(src="198.18.0.1", dst="198.18.0.2") / TCP(
        options=[("Timestamp", (1, 2))]) / Raw(b"z" * 1000)
    cut = bytes(full)[:14 + 20 + 10]  # snap length inside the TCP header
    frames = [(0, bytes(later_v4)), (1, bytes(later_v6)), (2, bytes(full)), (3, cut)]
    write_pcap(tmp_path / "f.pcap", frames, linktype=1)
    records = read_capture(tmp_path / "f.pcap").records
    v4, v6, whole, snapped = read_packets(tmp_path / "f.pcap")
    assert v4.status & FRAGMENT and v4.proto == 6 and v4.sport == 0
    assert v6.status & FRAGMENT and v6.proto == 17 and v6.ip_id == 0xdeadbeef
    assert whole.payload_len == 1000 and whole.ts_val == 1
    assert snapped.status & L4_TRUNCATED and snapped.ip_len == whole.ip_len
    assert int(records[3]["cap_len"]) == len(cut) and int(records[3]["wire_len"]) == len(cut)
