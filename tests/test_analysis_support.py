"""Builds known-answer inputs for the analysis tests: a scripted link that writes the
fixed host's Ethernet capture, the mobile host's raw-IP (TUN) capture and the matching
emulator log (emulator/LOG_FORMAT.md, format 1). Every packet's fate and every time is
chosen by the test, so metrics have exact expected values."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

from scapy.all import IP, TCP, UDP, Ether, IPv6, Raw  # type: ignore[attr-defined]
from scapy.packet import Packet as ScapyPacket

START_REALTIME_US = 1_795_312_345_000_000
FIXED = "198.18.60.1"
MOBILE = "198.18.61.2"
FIXED6 = "2001:db8:60::1"   # the same hosts over IPv6 (no IP id)
MOBILE6 = "2001:db8:61::2"
COLUMNS = ("time_us event dir pkt_id ip_len state attempt sbuf rbuf proto src sport dst "
           "dport ip_id tcp_seq tcp_ack tcp_flags payload_len note")
FLAG_LETTERS = "FSRPAUEC"


def tcp_flag_letters(flags: int) -> str:
    letters = "".join(c for i, c in enumerate(FLAG_LETTERS) if flags & (1 << i))
    return letters or "."


@dataclass
class ScriptedLink:
    """Packets sent at chosen times with chosen fates. Times are µs since the log's t = 0;
    both hosts' captures carry START_REALTIME_US + t."""
    fixed_frames: list[tuple[int, bytes]] = field(default_factory=list)
    mobile_frames: list[tuple[int, bytes]] = field(default_factory=list)
    log_lines: list[tuple[int, int, str]] = field(default_factory=list)
    next_pkt_id: int = 1
    ip_id: int = 100

    def send(self, t_us: int, pkt: ScapyPacket, fate: str = "out", delay_us: int = 100_000,
             hits: int = 0, in_log: bool = True, ecn_mark: bool = False,
             ip_id: int | None = None) -> ScapyPacket:
        """The host owning pkt's source sends it at t_us. fate `out`: delivered delay_us
        later; `drop_sbuf`/`drop_router`/`drop_mtu`: dropped on entry; `drop_err`: dropped
        after `hits` hit attempts; `pending`: still in the link when the log ends. ecn_mark:
        the router stage marks it. in_log=False: it never reaches the emulator (a tc router
        drop before the link). An IPv4 packet gets `ip_id`, else the link's next IP id."""
        if IP in pkt:
            if ip_id is None:
                self.ip_id += 1
                ip_id = self.ip_id
            pkt[IP].id = ip_id
            pkt = IP(bytes(pkt))  # fill lengths and checksums
        else:
            pkt = IPv6(bytes(pkt))
        down = _ip(pkt).src in (FIXED, FIXED6)
        sender = self.fixed_frames if down else self.mobile_frames
        receiver = self.mobile_frames if down else self.fixed_frames
        sender.append((t_us, self._frame(pkt, ethernet=down)))
        if not in_log:
            return pkt
        pkt_id = self.next_pkt_id
        self.next_pkt_id += 1
        d = "down" if down else "up"
        self._event(t_us, "in", d, pkt_id, pkt)
        if fate in ("drop_sbuf", "drop_router", "drop_mtu"):
            self._event(t_us, fate, d, pkt_id, pkt)
            return pkt
        if ecn_mark:
            self._event(t_us, "ecn_mark", d, pkt_id, pkt)
        self._event(t_us, "enqueue", d, pkt_id, pkt)
        self._event(t_us, "tx", d, pkt_id, pkt, attempt=0)
        for attempt in range(hits):
            self._event(t_us + 1 + attempt, "hit", d, pkt_id, pkt, attempt=attempt)
        if fate == "drop_err":
            self._event(t_us + 1 + hits, "drop_err", d, pkt_id, pkt, attempt=max(0, hits - 1))
            return pkt
        if fate == "pending":
            return pkt
        assert fate == "out", fate
        self._event(t_us + delay_us, "recv", d, pkt_id, pkt, attempt=hits)
        self._event(t_us + delay_us, "out", d, pkt_id, pkt, attempt=hits)
        receiver.append((t_us + delay_us, self._frame(pkt, ethernet=not down)))
        return pkt

    @staticmethod
    def _frame(pkt: ScapyPacket, ethernet: bool) -> bytes:
        if ethernet:
            return bytes(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / pkt)
        return bytes(pkt)

    def _event(self, t: int, event: str, d: str, pkt_id: int, pkt: ScapyPacket,
               attempt: int | None = None) -> None:
        ip = _ip(pkt)
        v4 = IP in pkt
        if TCP in pkt:
            l4 = pkt[TCP]
            proto, sport, dport = "tcp", str(l4.sport), str(l4.dport)
            seq, ack, flags = str(l4.seq), str(l4.ack), tcp_flag_letters(int(l4.flags))
            payload = len(bytes(l4.payload))
        elif UDP in pkt:
            l4 = pkt[UDP]
            proto, sport, dport, seq, ack, flags = "udp", str(l4.sport), str(l4.dport), "-", "-", "-"
            payload = len(bytes(l4.payload))
        else:  # the emulator logs no ports, TCP fields or payload length for other protocols
            number = ip.proto if v4 else ip.nh
            proto = {1: "icmp", 58: "icmp6"}.get(number, str(number))
            sport = dport = seq = ack = flags = "-"
            payload = None
        cols = [str(t), event, d, str(pkt_id), str(ip.len if v4 else 40 + ip.plen), "good",
                "-" if attempt is None else str(attempt), "0", "0", proto, ip.src, sport,
                ip.dst, dport, str(ip.id) if v4 else "-", seq, ack, flags,
                "-" if payload is None else str(payload), "-"]
        self.log_lines.append((t, len(self.log_lines), "\t".join(cols)))

    def write(self, directory: Path, trailer: bool = True) -> tuple[Path, Path, Path]:
        fixed, mobile, log = (directory / "fixed.pcap", directory / "mobile.pcap",
                              directory / "emulator.log")
        write_pcap(fixed, self.fixed_frames, linktype=1)
        write_pcap(mobile, self.mobile_frames, linktype=101)
        lines = ["# squall-emulator event log", "# format 1", "# seed 42", "# replication 3",
                 "# started yes", f"# start_realtime_us {START_REALTIME_US}",
                 "# config down.rate_bps = 64000", f"# columns {COLUMNS}",
                 "0\tstart\t-\t-\t-\tgood\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t"
                 f"{START_REALTIME_US}"]
        lines += [text for _, _, text in sorted(self.log_lines)]
        if trailer:
            end = max((t for t, _, _ in self.log_lines), default=0)
            # As squall-emulator writes it (emulator/src/event_log.c).
            lines += [f"# end time_us {end} reason stop", "# counters down in 1 out 1",
                      "# counters up in 1 out 1", "# state_changes 0", "# pending 0",
                      "# undeliverable down 0 up 0 send_errors 0",
                      "# rejected truncated 0 bad_magic 0",
                      "# lateness_us n 1 p50 1 p99 1 max 1 early 0"]
        log.write_text("\n".join(lines) + "\n")
        return fixed, mobile, log


def write_pcap(path: Path, frames: list[tuple[int, bytes]], linktype: int,
               byte_order: str = "<", nanoseconds: bool = False) -> None:
    """A classic pcap (either byte order, µs or ns magic), frames sorted by time (stable)."""
    magic = 0xa1b23c4d if nanoseconds else 0xa1b2c3d4
    out = [struct.pack(byte_order + "IHHiIII", magic, 2, 4, 0, 0, 65535, linktype)]
    for t, frame in sorted(frames, key=lambda x: x[0]):
        ts = START_REALTIME_US + t
        frac = ts % 1_000_000 * (1000 if nanoseconds else 1)
        out.append(struct.pack(byte_order + "IIII", ts // 1_000_000, frac, len(frame),
                               len(frame)))
        out.append(frame)
    path.write_bytes(b"".join(out))


def _ip(pkt: ScapyPacket) -> ScapyPacket:
    return pkt[IP] if IP in pkt else pkt[IPv6]


def tcp(src: str, dst: str, sport: int, dport: int, seq: int, ack: int, flags: str,
        payload: int = 0, sack: list[tuple[int, int]] | None = None,
        ts: tuple[int, int] | None = None) -> ScapyPacket:
    """A TCP segment over IPv4, or IPv6 between IPv6 addresses; ts: the timestamp option
    (TSval, TSecr)."""
    options = [("SAck", tuple(x for block in sack for x in block))] if sack else []
    if ts is not None:
        options.append(("Timestamp", ts))
    ip = IPv6(src=src, dst=dst) if ":" in src else IP(src=src, dst=dst)
    pkt = ip / TCP(sport=sport, dport=dport, seq=seq, ack=ack, flags=flags,
                                     window=65535, options=options)
    return pkt / Raw(b"d" * payload) if payload else pkt


def udp_datagram(seq: int, send_us: int, size: int = 132, sport: int = 40000,
                 dport: int = 6001, tos: int = 0) -> ScapyPacket:
    header = struct.pack(">IQQ", 0x53515544, seq, send_us)
    return IP(src=FIXED, dst=MOBILE, tos=tos) / UDP(sport=sport, dport=dport) / Raw(
        header + bytes(size - len(header)))
