"""Capture reading: pcap/pcapng -> header records (numpy) -> Packet dataclasses.

The parsing is done by the C program squall-capture-records (analysis/src/), which
writes fixed-size records; RECORD_DTYPE below must match analysis/src/packet_record.h.
"""

from __future__ import annotations

import ipaddress
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from analysis.errors import CaptureError

RECORD_MAGIC = 0x52505153
RECORD_VERSION = 1
STREAM_HEADER = np.dtype([("magic", "<u4"), ("version", "<u4"), ("record_size", "<u4"),
                          ("linktype", "<u4")])
RECORD_DTYPE = np.dtype([
    ("ts_us", "<i8"), ("frame_no", "<u4"), ("wire_len", "<u4"), ("cap_len", "<u4"),
    ("ip_len", "<u4"), ("payload_len", "<u4"), ("ip_id", "<u4"), ("tcp_seq", "<u4"),
    ("tcp_ack", "<u4"), ("ts_val", "<u4"), ("ts_ecr", "<u4"), ("sport", "<u2"),
    ("dport", "<u2"), ("window", "<u2"), ("mss", "<u2"), ("ip_version", "u1"),
    ("proto", "u1"), ("tcp_flags", "u1"), ("tos", "u1"), ("ttl", "u1"), ("wscale", "u1"),
    ("n_sack", "u1"), ("status", "u1"), ("icmp_type", "u1"), ("icmp_code", "u1"),
    ("head_len", "<u2"), ("reserved", "<u4"), ("src", "V16"), ("dst", "V16"),
    ("sack", "<u4", (8,)), ("head", "V24"),
])
assert RECORD_DTYPE.itemsize == 160

# status bits (packet_record.h)
NOT_IP = 0x01
IP_MALFORMED = 0x02
L4_TRUNCATED = 0x04
FRAGMENT = 0x08
HAS_TCP_TS = 0x10
SACK_PERMITTED = 0x20

# TCP flag bits
FIN, SYN, RST, PSH, ACK, URG, ECE, CWR = 1, 2, 4, 8, 16, 32, 64, 128

PROTO_TCP = 6
PROTO_UDP = 17

READER_NAME = "squall-capture-records"


@dataclass(frozen=True, slots=True)
class Capture:
    """All frames of one capture file as header records (one numpy row per frame)."""
    path: Path
    linktype: int
    records: np.ndarray  # dtype RECORD_DTYPE


@dataclass(slots=True)  # not frozen: frozen __init__ is several times slower
class Packet:
    """One IP packet's headers as seen in a capture."""
    ts_us: int
    frame_no: int
    ip_version: int
    proto: int
    src: str
    dst: str
    sport: int
    dport: int
    ip_id: int | None  # None for IPv6 without a fragment header
    ip_len: int
    payload_len: int
    tos: int
    tcp_seq: int
    tcp_ack: int
    tcp_flags: int
    window: int
    ts_val: int | None
    ts_ecr: int | None
    sack: tuple[tuple[int, int], ...]
    head: bytes  # the first payload bytes (up to 24)
    status: int
    icmp_type: int  # ICMP/ICMPv6 type and code; 0 for other protocols
    icmp_code: int
    mss: int | None     # TCP MSS option
    wscale: int | None  # TCP window scale option

    @property
    def syn(self) -> bool:
        return bool(self.tcp_flags & SYN)

    @property
    def fin(self) -> bool:
        return bool(self.tcp_flags & FIN)

    @property
    def rst(self) -> bool:
        return bool(self.tcp_flags & RST)

    @property
    def has_ack(self) -> bool:
        return bool(self.tcp_flags & ACK)


def reader_path() -> Path:
    """The C reader: $SQUALL_BIN_DIR, else build/bin of the source tree."""
    env = os.environ.get("SQUALL_BIN_DIR")
    base = Path(env) if env else Path(__file__).resolve().parent.parent / "build" / "bin"
    return base / READER_NAME


def read_capture(path: str | os.PathLike[str]) -> Capture:
    """Reads every frame's headers; raises CaptureError naming the file and the frame
    and byte offset of a truncated or corrupt record."""
    path = Path(path)
    reader = reader_path()
    if not reader.exists():
        raise CaptureError(f"{path}: cannot read captures without {reader}; run `make build`")
    if not path.is_file():
        raise CaptureError(f"{path}: no such capture file")
    proc = subprocess.run([str(reader), str(path)], capture_output=True, check=False)
    if proc.returncode != 0:
        message = proc.stderr.decode(errors="replace").strip()
        raise CaptureError(message or f"{path}: {READER_NAME} failed with status "
                           f"{proc.returncode}")
    return _decode_stream(path, proc.stdout)


def _decode_stream(path: Path, data: bytes) -> Capture:
    if len(data) < STREAM_HEADER.itemsize:
        raise CaptureError(f"{path}: {READER_NAME} wrote no stream header")
    header = np.frombuffer(data, STREAM_HEADER, count=1)[0]
    if (int(header["magic"]) != RECORD_MAGIC or int(header["version"]) != RECORD_VERSION
            or int(header["record_size"]) != RECORD_DTYPE.itemsize):
        raise CaptureError(f"{path}: {READER_NAME} writes record version "
                           f"{int(header['version'])} of {int(header['record_size'])} bytes; "
                           f"expected version {RECORD_VERSION} of {RECORD_DTYPE.itemsize} "
                           "bytes (rebuild with `make build`)")
    body = memoryview(data)[STREAM_HEADER.itemsize:]
    if len(body) % RECORD_DTYPE.itemsize:
        raise CaptureError(f"{path}: {READER_NAME} output ends inside a record")
    records = np.frombuffer(body, RECORD_DTYPE)
    return Capture(path=path, linktype=int(header["linktype"]), records=records)


class _AddressCache:
    """Text form of the raw 16-byte address fields, converted once per distinct value."""

    def __init__(self) -> None:
        self._cache: dict[tuple[int, bytes], str] = {}

    def text(self, version: int, raw: bytes) -> str:
        key = (version, raw)
        text = self._cache.get(key)
        if text is None:
            text = str(ipaddress.IPv4Address(raw[:4]) if version == 4
                       else ipaddress.IPv6Address(raw))
            self._cache[key] = text
        return text


def ip_packets(capture: Capture) -> list[Packet]:
    """The capture's IP packets that are not malformed, in capture order."""
    r = capture.records
    r = r[(r["status"] & (NOT_IP | IP_MALFORMED)) == 0]
    addresses = _AddressCache()
    packets = []
    rows = zip(*(r[name].tolist() for name in (
        "ts_us", "frame_no", "ip_version", "proto", "sport", "dport", "ip_id", "ip_len",
        "payload_len", "tos", "tcp_seq", "tcp_ack", "tcp_flags", "window", "ts_val", "ts_ecr",
        "status", "n_sack", "head_len", "icmp_type", "icmp_code", "mss", "wscale")),
        r["src"].tolist(), r["dst"].tolist(), r["head"].tolist(), r["sack"].tolist())
    for (ts_us, frame_no, version, proto, sport, dport, ip_id, ip_len, payload_len, tos, seq,
         ack, flags, window, ts_val, ts_ecr, status, n_sack, head_len, icmp_type, icmp_code,
         mss, wscale, src, dst, head, sack) in rows:
        has_ts = status & HAS_TCP_TS
        packets.append(Packet(
            ts_us, frame_no, version, proto, addresses.text(version, src),
            addresses.text(version, dst), sport, dport,
            ip_id if version == 4 or status & FRAGMENT else None, ip_len, payload_len, tos,
            seq, ack, flags, window, ts_val if has_ts else None, ts_ecr if has_ts else None,
            tuple(zip(sack[0:2 * n_sack:2], sack[1:2 * n_sack:2])) if n_sack else (),
            head[:head_len], status, icmp_type, icmp_code, mss or None,
            None if wscale == 0xff else wscale))
    return packets


def read_packets(path: str | os.PathLike[str]) -> list[Packet]:
    """read_capture + ip_packets."""
    return ip_packets(read_capture(path))
