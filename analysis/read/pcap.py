"""Capture reading: pcap/pcapng -> header records (numpy) -> Packet dataclasses.

The parsing is done by the C program squall-capture-records (analysis/src/), which
writes fixed-size records; RECORD_DTYPE below must match analysis/src/packet_record.h.
"""

from __future__ import annotations

import ipaddress
import mmap
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from analysis.errors import CaptureError
from analysis.gc_pause import gc_paused

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


def program_path(name: str) -> Path:
    """A C program of the analysis: $SQUALL_BIN_DIR, else build/bin of the source tree."""
    env = os.environ.get("SQUALL_BIN_DIR")
    base = Path(env) if env else Path(__file__).resolve().parents[2] / "build" / "bin"
    return base / name


def reader_path() -> Path:
    """The C capture reader."""
    return program_path(READER_NAME)


def read_capture(path: str | os.PathLike[str]) -> Capture:
    """Reads every frame's headers; raises CaptureError naming the file and the frame
    and byte offset of a truncated or corrupt record."""
    path = Path(path)
    reader = reader_path()
    if not reader.exists():
        raise CaptureError(f"{path}: cannot read captures without {reader}; run `make build`")
    if not path.is_file():
        raise CaptureError(f"{path}: no such capture file")
    status, stderr, data = run_to_memory([str(reader), str(path)])
    if status != 0:
        message = stderr.decode(errors="replace").strip()
        raise CaptureError(message or f"{path}: {READER_NAME} failed with status {status}")
    return _decode_stream(path, data)


def run_to_memory(argv: list[str]) -> tuple[int, bytes, bytes | mmap.mmap]:
    """Runs a reader with an anonymous in-memory file as its OUTPUT argument: (exit
    status, stderr, the output mapped read-only). Hundreds of megabytes through a pipe
    cost a second of 64 KB reads; this costs nothing."""
    fd = os.memfd_create("squall-records", os.MFD_CLOEXEC)
    try:
        proc = subprocess.run([*argv, f"/dev/fd/{fd}"], pass_fds=(fd,), check=False,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        size = os.fstat(fd).st_size
        data: bytes | mmap.mmap = mmap.mmap(fd, size, prot=mmap.PROT_READ) if size else b""
    finally:
        os.close(fd)
    return proc.returncode, proc.stderr, data


def _decode_stream(path: Path, data: bytes | mmap.mmap) -> Capture:
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


def address_texts(version: np.ndarray, raw: np.ndarray) -> list[str]:
    """Text form of the 16-byte address fields, converted once per distinct value."""
    out = np.empty(len(raw), dtype=object)
    bytes16 = np.ascontiguousarray(raw).view(np.uint8).reshape(len(raw), 16)
    v4 = version == 4
    if v4.any():
        words = np.ascontiguousarray(bytes16[v4, :4]).view(">u4").reshape(-1)
        values, inverse = np.unique(words, return_inverse=True)
        texts = np.array([str(ipaddress.IPv4Address(v)) for v in values.tolist()], dtype=object)
        out[v4] = texts[inverse.reshape(-1)]
    if not v4.all():
        values, inverse = np.unique(raw[~v4], return_inverse=True)
        texts = np.array([str(ipaddress.IPv6Address(bytes(v))) for v in values.tolist()],
                         dtype=object)
        out[~v4] = texts[inverse.reshape(-1)]
    return out.tolist()


def _or_none(values: np.ndarray, present: np.ndarray) -> list[int | None]:
    column = values.astype(object)
    column[~present] = None
    return column.tolist()


def _heads(r: np.ndarray) -> list[bytes]:
    heads = r["head"].tolist()
    lengths = r["head_len"]
    for i in np.flatnonzero(lengths != r.dtype["head"].itemsize).tolist():
        heads[i] = heads[i][:int(lengths[i])]
    return heads


def sack_blocks(r: np.ndarray) -> list[tuple[tuple[int, int], ...]]:
    sacks: list[tuple[tuple[int, int], ...]] = [()] * len(r)
    n_sack = r["n_sack"]
    for i in np.flatnonzero(n_sack).tolist():
        blocks = r["sack"][i].tolist()
        n = int(n_sack[i])
        sacks[i] = tuple(zip(blocks[0:2 * n:2], blocks[1:2 * n:2]))
    return sacks


def ip_records(capture: Capture) -> np.ndarray:
    """The records of the IP packets that are not malformed, in capture order."""
    return only_ip(capture.records)


def only_ip(r: np.ndarray) -> np.ndarray:
    keep = (r["status"] & (NOT_IP | IP_MALFORMED)) == 0
    return r if keep.all() else r[keep]


def address_ids(version: np.ndarray, raw: np.ndarray) -> np.ndarray:
    """An int64 per address field, equal for equal addresses: IPv4 as its 32-bit value,
    IPv6 above 2**32 (rank among the distinct IPv6 addresses)."""
    out = np.empty(len(raw), np.int64)
    bytes16 = np.ascontiguousarray(raw).view(np.uint8).reshape(len(raw), 16)
    v4 = version == 4
    out[v4] = np.ascontiguousarray(bytes16[v4, :4]).view(">u4").reshape(-1)
    if not v4.all():
        _, inverse = np.unique(raw[~v4], return_inverse=True)
        out[~v4] = (1 << 32) + inverse.reshape(-1)
    return out


def ip_packets(capture: Capture) -> list[Packet]:
    """The capture's IP packets that are not malformed, in capture order."""
    return packets_of(ip_records(capture))


def packets_of(r: np.ndarray) -> list[Packet]:
    """Packet objects of records (RECORD_DTYPE rows of IP packets)."""
    version, status = r["ip_version"], r["status"]
    has_ts = (status & HAS_TCP_TS) != 0

    def column(name: str) -> list[int]:
        return r[name].tolist()

    # one map over column lists: the per-packet work is only Packet.__init__
    with gc_paused():
        return list(map(
            Packet, column("ts_us"), column("frame_no"), column("ip_version"), column("proto"),
            address_texts(version, r["src"]), address_texts(version, r["dst"]), column("sport"),
            column("dport"), _or_none(r["ip_id"], (version == 4) | ((status & FRAGMENT) != 0)),
            column("ip_len"), column("payload_len"), column("tos"), column("tcp_seq"),
            column("tcp_ack"), column("tcp_flags"), column("window"), _or_none(r["ts_val"], has_ts),
            _or_none(r["ts_ecr"], has_ts), sack_blocks(r), _heads(r), column("status"),
            column("icmp_type"), column("icmp_code"), _or_none(r["mss"], r["mss"] != 0),
            _or_none(r["wscale"], r["wscale"] != 0xFF)))


def read_packets(path: str | os.PathLike[str]) -> list[Packet]:
    """read_capture + ip_packets."""
    return ip_packets(read_capture(path))
