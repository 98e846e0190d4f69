"""Capture and emulator-log readers: formats, link types, and errors that name the place."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
from scapy.all import (IP, TCP, UDP, CookedLinux, Ether, IPv6, PcapNgWriter,  # type: ignore[attr-defined]
                       Raw)

from analysis.read.emulog import TRAILER_KEYS, read_emulator_log
from analysis.errors import CaptureError, LogFormatError
from analysis.join.by_identity import join_capture
from analysis.read.pcap import read_capture, read_packets
from test_analysis_support import (FIXED, MOBILE, START_REALTIME_US, ScriptedLink, tcp,
                                   udp_datagram, write_pcap)

MS = 1000


def sample_link() -> ScriptedLink:
    link = ScriptedLink()
    link.send(0, tcp(FIXED, MOBILE, 40000, 5001, 1000, 0, "S"))
    link.send(100 * MS, tcp(MOBILE, FIXED, 5001, 40000, 5000, 1001, "SA",
                            sack=[(7, 9), (11, 13)]))
    link.send(200 * MS, tcp(FIXED, MOBILE, 40000, 5001, 1001, 5001, "PA", 300))
    link.send(201 * MS, udp_datagram(0, START_REALTIME_US + 201 * MS))
    return link


def frames_with_times(link: ScriptedLink) -> list[tuple[int, bytes]]:
    return sorted(link.fixed_frames, key=lambda x: x[0])


def write_pcapng(path: Path, frames: list[tuple[int, bytes]]) -> None:
    writer = PcapNgWriter(str(path))
    for t, frame in frames:
        pkt = Ether(frame)
        pkt.time = (START_REALTIME_US + t) / 1e6
        writer.write(pkt)
    writer.close()


def test_pcapng_and_pcap_give_identical_records(tmp_path: Path) -> None:
    frames = frames_with_times(sample_link())
    write_pcap(tmp_path / "a.pcap", frames, linktype=1)
    write_pcapng(tmp_path / "a.pcapng", frames)
    a = read_capture(tmp_path / "a.pcap").records
    b = read_capture(tmp_path / "a.pcapng").records
    assert len(a) == len(frames) == 4
    assert np.array_equal(a, b)


@pytest.mark.parametrize("byte_order,ns", [("<", False), (">", False), ("<", True),
                                           (">", True)])
def test_pcap_byte_orders_and_nanosecond_magic(tmp_path: Path, byte_order: str,
                                               ns: bool) -> None:
    frames = frames_with_times(sample_link())
    write_pcap(tmp_path / "ref.pcap", frames, linktype=1)
    write_pcap(tmp_path / "x.pcap", frames, linktype=1, byte_order=byte_order, nanoseconds=ns)
    assert np.array_equal(read_capture(tmp_path / "ref.pcap").records,
                          read_capture(tmp_path / "x.pcap").records)


def test_fields_of_ethernet_and_tun_captures_agree(tmp_path: Path) -> None:
    fixed, mobile, _ = sample_link().write(tmp_path)
    at_fixed = read_packets(fixed)
    at_mobile = read_packets(mobile)
    assert read_capture(mobile).linktype == 12  # LINKTYPE_RAW as libpcap reports it
    data = [p for p in at_fixed if p.payload_len == 300][0]
    assert (data.src, data.sport, data.dst, data.dport) == (FIXED, 40000, MOBILE, 5001)
    assert (data.tcp_seq, data.tcp_ack, data.ip_len) == (1001, 5001, 340)
    assert data.ts_us == START_REALTIME_US + 200 * MS
    same = [p for p in at_mobile if p.payload_len == 300][0]
    assert (same.ip_id, same.tcp_seq, same.src) == (data.ip_id, data.tcp_seq, data.src)
    synack = [p for p in at_mobile if p.sport == 5001][0]
    assert synack.sack == ((7, 9), (11, 13))
    udp = [p for p in at_fixed if p.proto == 17][0]
    assert udp.payload_len == 132 and udp.head[:4] == b"SQUD"


def test_cooked_linux_sll_sll2_ipv6(tmp_path: Path) -> None:
    v6 = IPv6(src="2001:db8::1", dst="2001:db8::2") / TCP(sport=1, dport=2, seq=9,
                                                            flags="S") / Raw(b"ab")
    v4 = IP(src=FIXED, dst=MOBILE, id=77) / UDP(sport=3, dport=4) / Raw(b"xyz")
    sll = [(0, bytes(CookedLinux(proto=0x86dd) / v6)), (1, bytes(CookedLinux(proto=0x0800) / v4))]
    write_pcap(tmp_path / "sll.pcap", sll, linktype=113)
    # SLL2: protocol first, then reserved, ifindex, hatype, pkttype, addr len, 8-byte addr.
    sll2_header = lambda proto: struct.pack(">HHIHBB8s", proto, 0, 2, 1, 0, 6, b"\x02" * 6)
    sll2 = [(0, sll2_header(0x86dd) + bytes(v6)), (1, sll2_header(0x0800) + bytes(v4))]
    write_pcap(tmp_path / "sll2.pcap", sll2, linktype=276)
    for name in ("sll.pcap", "sll2.pcap"):
        a, b = read_packets(tmp_path / name)
        assert (a.ip_version, a.src, a.tcp_seq, a.payload_len, a.ip_id) == (
            6, "2001:db8::1", 9, 2, None)
        assert (b.ip_version, b.proto, b.dport, b.payload_len, b.ip_id) == (4, 17, 4, 3, 77)


def test_non_ip_frames_are_skipped_not_errors(tmp_path: Path) -> None:
    arp = bytes(Ether(type=0x0806) / Raw(b"\x00" * 28))
    ip = bytes(Ether() / IP(src=FIXED, dst=MOBILE) / UDP(sport=1, dport=2))
    write_pcap(tmp_path / "m.pcap", [(0, arp), (1, ip)], linktype=1)
    assert len(read_capture(tmp_path / "m.pcap").records) == 2
    assert [p.frame_no for p in read_packets(tmp_path / "m.pcap")] == [2]


def test_truncated_capture_names_file_frame_and_offset(tmp_path: Path) -> None:
    frames = frames_with_times(sample_link())
    path = tmp_path / "cut.pcap"
    write_pcap(path, frames, linktype=1)
    data = path.read_bytes()
    path.write_bytes(data[:-10])
    last_offset = 24 + sum(16 + len(f) for _, f in frames[:-1])
    with pytest.raises(CaptureError) as e:
        read_capture(path)
    msg = str(e.value)
    assert str(path) in msg and f"frame {len(frames)}" in msg
    assert f"byte offset {last_offset}" in msg and "truncated" in msg


def test_corrupt_capture_header_and_record(tmp_path: Path) -> None:
    bad_magic = tmp_path / "bad.pcap"
    bad_magic.write_bytes(b"\x00" * 64)
    with pytest.raises(CaptureError, match=f"{bad_magic}.*byte offset 0"):
        read_capture(bad_magic)

    frames = frames_with_times(sample_link())
    path = tmp_path / "caplen.pcap"
    write_pcap(path, frames, linktype=1)
    data = bytearray(path.read_bytes())
    second = 24 + 16 + len(frames[0][1])
    data[second + 8:second + 12] = struct.pack("<I", 0x7fffffff)  # captured length
    path.write_bytes(bytes(data))
    with pytest.raises(CaptureError, match=f"{path}: frame 2 at byte offset {second}"):
        read_capture(path)

    with pytest.raises(CaptureError, match="no such capture"):
        read_capture(tmp_path / "missing.pcap")


def test_emulator_log_header_events_trailer(tmp_path: Path) -> None:
    _, _, log_path = sample_link().write(tmp_path)
    log = read_emulator_log(log_path)
    assert (log.format, log.seed, log.replication, log.started) == (1, 42, 3, True)
    assert log.start_realtime_us == START_REALTIME_US
    assert log.config == {"down.rate_bps": "64000"}
    assert not log.cut_short and log.end_us == 201 * MS + 100 * MS
    assert log.trailer["counters down"] == {"in": "1", "out": "1"}
    assert log.trailer["end"]["reason"] == "stop" and log.trailer["pending"]["count"] == "0"
    first_in = [e for e in log.events if e.event == "in"][0]
    assert (first_in.dir, first_in.pkt_id, first_in.proto, first_in.tcp_flags) == (
        "down", 1, "tcp", "S")
    assert first_in.attempt is None and first_in.note is None


def test_emulator_log_without_trailer_is_cut_short_and_keeps_events(tmp_path: Path) -> None:
    link = sample_link()
    _, _, complete = link.write(tmp_path)
    n = len(read_emulator_log(complete).events)
    (tmp_path / "cut").mkdir()
    _, _, cut = link.write(tmp_path / "cut", trailer=False)
    log = read_emulator_log(cut)
    assert log.cut_short and len(log.events) == n


def test_emulator_log_errors_name_file_and_line(tmp_path: Path) -> None:
    _, _, log_path = sample_link().write(tmp_path)
    lines = log_path.read_text().splitlines()

    def broken(edit: int, text: str) -> Path:
        copy = lines.copy()
        copy[edit] = text
        path = tmp_path / f"broken{edit}.log"
        path.write_text("\n".join(copy) + "\n")
        return path

    with pytest.raises(LogFormatError, match=r"broken1\.log:2: log format '2' is not supported"):
        read_emulator_log(broken(1, "# format 2"))
    with pytest.raises(LogFormatError, match=r"broken10\.log:11: 3 tab-separated columns"):
        read_emulator_log(broken(10, "1\tin\tdown"))
    event = lines[11].split("\t")
    event[11] = "eighty"
    with pytest.raises(LogFormatError, match=r"broken11\.log:12: sport 'eighty' is not an"):
        read_emulator_log(broken(11, "\t".join(event)))
    event = lines[11].split("\t")
    event[1] = "teleport"
    with pytest.raises(LogFormatError, match=r"broken11\.log:12: unknown event 'teleport'"):
        read_emulator_log(broken(11, "\t".join(event)))
    with pytest.raises(LogFormatError, match=r"broken1\.log:9: event line before the `# format`"):
        read_emulator_log(broken(1, "# formats are fun"))
    header_only = tmp_path / "header.log"
    header_only.write_text("# squall-emulator event log\n# seed 1\n")
    with pytest.raises(LogFormatError, match=r"header\.log:2: no `# format` line"):
        read_emulator_log(header_only)


def test_a_cells_log_names_the_host_of_every_event(tmp_path: Path) -> None:
    # LOG_FORMAT.md: a cell of several hosts adds `host` to `# columns` and a 21st column,
    # `-` where no host applies; the reader gives it per event and in the table
    _, _, log_path = sample_link().write(tmp_path)
    lines = log_path.read_text().splitlines()
    cell, hosts = [], []
    for line in lines:
        if line.startswith("# columns "):
            line += " host"
        elif line.startswith("# counters up "):
            line += "\n# host_counters 2 down in 1 out 1"
        elif not line.startswith("#"):
            host = "-" if line.split("\t")[1] in ("peer", "start") else str(1 + len(hosts) % 2)
            hosts.append(None if host == "-" else int(host))
            line += "\t" + host
        cell.append(line)
    path = tmp_path / "cell.log"
    path.write_text("\n".join(cell) + "\n")
    log = read_emulator_log(path)
    assert log.host_column and [e.host for e in log.events] == hosts
    assert log.counts("host_counters 2 down") == {"in": 1, "out": 1}
    assert 2 in hosts
    one_host = read_emulator_log(log_path)
    assert not one_host.host_column and all(e.host is None for e in one_host.events)
    assert [e.pkt_id for e in log.events] == [e.pkt_id for e in one_host.events]
    first_event = next(i for i, line in enumerate(cell) if not line.startswith("#"))
    cell[first_event] = lines[first_event]  # 20 columns in a cell's log
    path.write_text("\n".join(cell) + "\n")
    with pytest.raises(LogFormatError, match=rf"cell\.log:{first_event + 1}: 20 tab-separated columns; "
                                             "expected 21"):
        read_emulator_log(path)


def test_join_matches_identical_identities_in_order(tmp_path: Path) -> None:
    """A bit-identical resend (same IP id) is matched to the second `in`, not the first."""
    link = ScriptedLink()
    pkt = tcp(FIXED, MOBILE, 40000, 5001, 1, 1, "PA", 10)
    link.send(0, pkt, fate="drop_err", hits=1)
    link.ip_id -= 1  # the next send reuses the same IP id: identical identity
    link.send(10 * MS, pkt)
    fixed, _, log_path = link.write(tmp_path)
    packets = read_packets(fixed)
    fates = join_capture(packets, read_emulator_log(log_path))
    assert [fates[p.frame_no].fate for p in packets[:2]] == ["drop_err", "out"]
    assert [fates[p.frame_no].pkt_id for p in packets[:2]] == [1, 2]


def test_join_icmp_and_packets_still_in_the_link(tmp_path: Path) -> None:
    from scapy.all import ICMP  # type: ignore[attr-defined]

    link = ScriptedLink()
    link.send(0, IP(src=FIXED, dst=MOBILE) / ICMP() / Raw(b"ping" * 8), delay_us=50 * MS)
    link.send(10 * MS, tcp(FIXED, MOBILE, 40000, 5001, 1, 1, "PA", 10), delay_us=500 * MS)
    fixed, _, log_path = link.write(tmp_path)
    # The emulator was killed before the TCP segment left the link: no recv/out, no trailer.
    def before_the_kill(line: str) -> bool:
        cols = line.split("\t")
        if line.startswith("#"):
            return line.split()[1] not in TRAILER_KEYS
        return not (cols[1] in ("recv", "out") and cols[9] == "tcp")

    lines = log_path.read_text().splitlines()
    log_path.write_text("\n".join(filter(before_the_kill, lines)) + "\n")
    log = read_emulator_log(log_path)
    assert log.cut_short
    packets = read_packets(fixed)
    fates = join_capture(packets, log)
    assert [fates[p.frame_no].fate for p in packets] == ["out", "pending"]
    icmp = fates[packets[0].frame_no]
    assert (icmp.dir, icmp.in_us, icmp.end_us) == ("down", 0, 50 * MS)
