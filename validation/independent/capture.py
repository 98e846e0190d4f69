"""A host capture as tshark reads it: TCP segments and UDP datagrams with the header fields the
cross-check needs. One tshark pass per capture; tshark opens `.pcap.gz` as it is.

Times stay integers of nanoseconds as tshark prints them (`frame.time_epoch`), so nothing is
rounded before a difference is taken. Sequence and acknowledgement numbers are the raw ones
(`tcp.seq_raw`, `tcp.ack_raw`): tshark's relative numbers and its analysis flags are not used
(on a sender's capture `tcp.analysis.retransmission` alone misses resends it files as
out-of-order; the cross-check tracks the sequence itself). ICMP errors quoting a TCP or UDP
header are left out, as they are not the flow's packets."""
from __future__ import annotations

import ipaddress
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

FIELDS = ("frame.time_epoch", "ip.src", "ip.dst", "ip.id", "ipv6.src", "ipv6.dst",
          "tcp.srcport", "tcp.dstport", "tcp.seq_raw", "tcp.ack_raw", "tcp.flags", "tcp.len",
          "udp.srcport", "udp.dstport", "udp.length", "udp.payload")
DISPLAY_FILTER = "(tcp or udp) and not icmp and not icmpv6"
UDP_HEADER = 8


class TsharkError(RuntimeError):
    """tshark is missing or could not read a capture; the message names the file."""


@dataclass(frozen=True, slots=True)
class Segment:
    t_ns: int
    src: str
    sport: int
    dst: str
    dport: int
    ip_id: int | None          # None over IPv6
    seq: int
    ack: int                   # 0 where the header's ACK field is not shown (no ACK flag)
    flags: int                 # the header's flag bits, FIN = 0x01 ... CWR = 0x80
    length: int                # TCP payload bytes


@dataclass(frozen=True, slots=True)
class Datagram:
    t_ns: int
    src: str
    sport: int
    dst: str
    dport: int
    ip_id: int | None
    length: int                # UDP payload bytes (from the header, whatever was captured)
    head: bytes                # the payload's captured bytes


@dataclass(frozen=True)
class Capture:
    segments: list[Segment]
    datagrams: list[Datagram]


def tshark_version() -> str:
    """tshark's first version line; TsharkError when it is not installed."""
    if shutil.which("tshark") is None:
        raise TsharkError("tshark is not installed (scripts/install-deps installs it)")
    out = subprocess.run(["tshark", "--version"], capture_output=True, text=True, check=False)
    return out.stdout.splitlines()[0] if out.stdout else "tshark"


def read_capture(path: Path) -> Capture:
    argv = ["tshark", "-n", "-r", str(path), "-Y", DISPLAY_FILTER, "-T", "fields",
            "-E", "separator=/t", "-E", "occurrence=f",
            "-o", "tcp.analyze_sequence_numbers:FALSE"]
    for name in FIELDS:
        argv += ["-e", name]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
    except FileNotFoundError as e:
        raise TsharkError("tshark is not installed (scripts/install-deps installs it)") from e
    if done.returncode != 0:
        raise TsharkError(f"{path}: tshark exit status {done.returncode}: {done.stderr.strip()}")
    return _parse(done.stdout)


def _parse(text: str) -> Capture:
    segments, datagrams = [], []
    for line in text.splitlines():
        f = dict(zip(FIELDS, line.split("\t")))
        if f.get("tcp.srcport"):
            segments.append(_segment(f))
        elif f.get("udp.srcport"):
            datagrams.append(_datagram(f))
    return Capture(segments, datagrams)


def _addresses(f: dict[str, str]) -> tuple[str, str]:
    """Source and destination in one spelling (the log's addresses are compared with these)."""
    src, dst = (f["ip.src"], f["ip.dst"]) if f.get("ip.src") else (f["ipv6.src"], f["ipv6.dst"])
    return str(ipaddress.ip_address(src)), str(ipaddress.ip_address(dst))


def _ip_id(f: dict[str, str]) -> int | None:
    return int(f["ip.id"], 0) if f.get("ip.id") else None


def time_ns(epoch: str) -> int:
    """`1795710011.758710000` -> ns since the epoch, without a float."""
    seconds, _, fraction = epoch.partition(".")
    return int(seconds) * 1_000_000_000 + int((fraction + "000000000")[:9])


def _segment(f: dict[str, str]) -> Segment:
    src, dst = _addresses(f)
    return Segment(time_ns(f["frame.time_epoch"]), src, int(f["tcp.srcport"]), dst,
                   int(f["tcp.dstport"]), _ip_id(f), int(f["tcp.seq_raw"]),
                   int(f["tcp.ack_raw"] or 0), int(f["tcp.flags"], 16), int(f["tcp.len"]))


def _datagram(f: dict[str, str]) -> Datagram:
    src, dst = _addresses(f)
    return Datagram(time_ns(f["frame.time_epoch"]), src, int(f["udp.srcport"]), dst,
                    int(f["udp.dstport"]), _ip_id(f), int(f["udp.length"]) - UDP_HEADER,
                    bytes.fromhex(f.get("udp.payload", "").replace(":", "")))
