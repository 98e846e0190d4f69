"""The seed corpus of fuzz_packet_parse (analysis/fuzz/packet_corpus.py): one seed per link type
the parser knows, and each seed's frame parsed by squall's capture reader exactly as scapy
dissects it (addresses, ports, lengths, TCP sequence numbers, flags, SACK blocks, timestamps,
DSCP, IP id); a frame cut inside its TCP header is flagged, not read past its end."""
from __future__ import annotations

import struct
from pathlib import Path

import pytest
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import CookedLinux, CookedLinuxV2, Ether, Loopback

from analysis.fuzz.packet_corpus import CORPUS, LINKTYPES, SEEDS, seed_bytes
from analysis.read.pcap import FRAGMENT, Packet, read_packets

DISSECTORS = {0: Loopback, 1: Ether, 113: CookedLinux, 276: CookedLinuxV2}


def _read_frame(tmp_path: Path, linktype: int, frame: bytes) -> Packet:
    path = tmp_path / "one.pcap"
    header = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, linktype)
    path.write_bytes(header + struct.pack("<IIII", 1, 0, len(frame), len(frame)) + frame)
    (packet,) = read_packets(path)
    return packet


def _ip_layer(linktype: int, frame: bytes):
    if linktype in DISSECTORS:
        return DISSECTORS[linktype](frame).getlayer(IP) or DISSECTORS[linktype](frame).getlayer(IPv6)
    return IPv6(frame) if frame[0] >> 4 == 6 else IP(frame)


def test_the_corpus_is_the_generators_and_covers_every_link_type() -> None:
    on_disk = {p.name: p.read_bytes() for p in CORPUS.iterdir()}
    assert on_disk == {name: seed_bytes(i, frame) for name, (i, frame) in SEEDS.items()}
    assert {b[0] for b in on_disk.values()} == set(range(len(LINKTYPES)))


@pytest.mark.parametrize("name", [n for n in SEEDS if n != "raw-tcp-truncated"])
def test_every_seed_reads_as_scapy_dissects_it(tmp_path: Path, name: str) -> None:
    data = (CORPUS / name).read_bytes()
    linktype, frame = LINKTYPES[data[0]], data[1:]
    got = _read_frame(tmp_path, linktype, frame)
    ip = _ip_layer(linktype, frame)
    v6 = isinstance(ip, IPv6)
    transport = ip.getlayer(TCP) or ip.getlayer(UDP)
    assert (got.src, got.dst) == (ip.src, ip.dst)
    assert got.ip_len == (ip.plen + 40 if v6 else ip.len)
    assert got.tos == (ip.tc if v6 else ip.tos)
    assert got.ip_id == (None if v6 and "fragment" not in name else ip.id if not v6 else got.ip_id)
    # a non-first fragment has no transport header (packet_record.h); the first one has
    assert bool(got.status & FRAGMENT) == (name == "ipv4-fragment-later")
    if transport is None:
        return
    assert (got.sport, got.dport) == (transport.sport, transport.dport)
    assert got.payload_len == len(bytes(transport.payload))
    if isinstance(transport, TCP):
        options = dict(transport.options)
        assert (got.tcp_seq, got.tcp_ack, got.tcp_flags) == (transport.seq, transport.ack, int(transport.flags))
        ts = options.get("Timestamp")
        assert (got.ts_val, got.ts_ecr) == (ts if ts else (None, None))
        blocks = options.get("SAck", ())
        assert got.sack == tuple(zip(blocks[::2], blocks[1::2]))


def test_a_frame_cut_inside_its_tcp_header_is_flagged_not_read_past_its_end(tmp_path: Path) -> None:
    data = (CORPUS / "raw-tcp-truncated").read_bytes()
    got = _read_frame(tmp_path, LINKTYPES[data[0]], data[1:])
    assert got.proto == 6 and (got.sport, got.dport, got.payload_len) == (0, 0, 0)
    assert got.status != 0
