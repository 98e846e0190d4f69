"""Packet identity (emulator/LOG_FORMAT.md, "Packet identity"), and a captured packet's
fate in the link.

The one definition of the identity fields, used by every join: capture records, Packet
objects and log events all become the same int64 key columns (KEY_COLUMNS; NULL where
the log writes `-`). Numbers stay numbers; the protocol is its number; an address is the
two big-endian halves of its 16-byte IPv6 form, IPv4 as ::ffff:a.b.c.d. The columns of a
capture therefore do not depend on the log they are joined with. The identity's other
half, the occurrence number at the capture point, is counted where packets are matched
with events (fate_index.LinkEvents)."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from analysis.read.emulog import COLUMNS, LogEvent
from analysis.read.event_table import NULL, TEXT_NAMES, EventTable
from analysis.read.pcap import FRAGMENT, PROTO_TCP, PROTO_UDP, RECORD_DTYPE, Packet

PROTO_NAMES = {1: "icmp", 6: "tcp", 17: "udp", 58: "icmp6"}
_PROTO_NUMBERS = {name: number for number, name in PROTO_NAMES.items()}

# the log's ten identity columns, each address in two
KEY_COLUMNS = ("proto", "src_hi", "src_lo", "sport", "dst_hi", "dst_lo", "dport", "ip_id",
               "tcp_seq", "tcp_ack", "tcp_flags", "payload_len")
Columns = list[np.ndarray]  # int64, one per KEY_COLUMNS entry
_SRC_HI, _SRC_LO = KEY_COLUMNS.index("src_hi"), KEY_COLUMNS.index("src_lo")
PacketIdentity = tuple[int | None, ...]  # one row of the key columns, None for NULL

_FLAG_LETTERS = "FSRPAUEC"  # bit 0 to 7 of the TCP header's flag byte, as the log writes them
_V4_MAPPED = 0xFFFF << 32  # the low half of ::ffff:a.b.c.d without the address

# Fates of a captured packet in the link.
UNSEEN = "unseen"    # no event: sent, it never reached the emulator (before the link: tc
                     # router drop); received, it did not come through the link
PENDING = "pending"  # entered the link, still inside when the log ended
CONGESTION_FATES = frozenset({"drop_sbuf", "drop_router"})


@dataclass(frozen=True, slots=True)
class PacketFate:
    """What the link did to one captured packet."""
    frame_no: int
    fate: str            # out | drop_sbuf | drop_router | drop_err | drop_mtu | pending | unseen
    pkt_id: int | None   # the emulator's packet id
    dir: str | None      # down | up
    in_us: int | None    # log time of `in`
    end_us: int | None   # log time of the final event
    hits: int            # link frames of it hit by errors (`hit` events; each is an ARQ
                         # retransmission unless it was the last try)
    ecn_marked: bool = False  # the emulator's router stage set CE on it


def capture_columns(records: np.ndarray) -> Columns:
    """Key columns of capture records (IP packets, pcap.RECORD_DTYPE). As the emulator
    logs a packet: ports and payload length only for TCP/UDP packets that carry their
    transport header (not a later fragment), TCP fields only for TCP, the IP id only for
    IPv4."""
    proto = records["proto"].astype(np.int64)
    ports = ((proto == PROTO_TCP) | (proto == PROTO_UDP)) & ((records["status"] & FRAGMENT) == 0)
    tcp = ports & (proto == PROTO_TCP)
    version = records["ip_version"]

    def where(mask: np.ndarray, name: str) -> np.ndarray:
        values = records[name].astype(np.int64)
        return values if mask.all() else np.where(mask, values, NULL)

    src_hi, src_lo = _address_halves(version, records["src"])
    dst_hi, dst_lo = _address_halves(version, records["dst"])
    return [proto, src_hi, src_lo, where(ports, "sport"), dst_hi, dst_lo, where(ports, "dport"),
            where(version == 4, "ip_id"), where(tcp, "tcp_seq"), where(tcp, "tcp_ack"),
            where(tcp, "tcp_flags"), where(ports, "payload_len")]


def log_columns(table: EventTable, rows: np.ndarray) -> Columns:
    """Key columns of the log's event rows: the packet columns as logged."""
    def text(column: str, *converts: Callable[[str], int]) -> list[np.ndarray]:
        ids = table.texts[column][rows]
        # the strings are shared by all text columns: convert those these rows use
        used = np.flatnonzero(np.bincount(ids, minlength=1)).tolist()
        out = []
        for convert in converts:
            per_string = np.full(len(table.strings), NULL, np.int64)
            for i in used:
                if i:
                    per_string[i] = convert(table.strings[i])  # type: ignore[arg-type]
            out.append(per_string[ids])
        return out

    def number(column: str) -> np.ndarray:
        return table.ints[column][rows]

    [proto], src, dst = (text("proto", _proto_number), text("src", _address_hi, _address_lo),
                         text("dst", _address_hi, _address_lo))
    return [proto, *src, number("sport"), *dst, number("dport"), number("ip_id"),
            number("tcp_seq"), number("tcp_ack"), *text("tcp_flags", _flag_bits),
            number("payload_len")]


def from_addresses(columns: Columns, addresses: np.ndarray) -> np.ndarray:
    """Mask of the rows whose source is one of these (hi, lo) pairs (a testbed has a few
    hosts: one pass per address)."""
    mask = np.zeros(len(columns[_SRC_HI]), bool)
    for hi, lo in addresses.tolist():
        mask |= (columns[_SRC_HI] == hi) & (columns[_SRC_LO] == lo)
    return mask


def address_keys(texts: Sequence[str]) -> np.ndarray:
    """Addresses in text form as (hi, lo) pairs of the key columns."""
    return np.array([(_address_hi(t), _address_lo(t)) for t in texts], np.int64).reshape(-1, 2)


def packet_identity(p: Packet) -> PacketIdentity:
    """One packet's identity fields (for joins with dictionaries)."""
    return _row(capture_columns(identity_records([p])))


def event_identity(e: LogEvent) -> PacketIdentity:
    """One log event's identity fields (for joins with dictionaries)."""
    return _row(log_columns(EventTable.from_events([e], COLUMNS, TEXT_NAMES), np.zeros(1, int)))


def _row(columns: Columns) -> PacketIdentity:
    return tuple(None if v == NULL else v for v in (int(c[0]) for c in columns))


def identity_records(packets: Sequence[Packet]) -> np.ndarray:
    """Records (pcap.RECORD_DTYPE) of Packet objects with the frame number and the fields
    capture_columns reads; the other fields are 0."""
    r = np.zeros(len(packets), RECORD_DTYPE)
    for name in ("frame_no", "ip_version", "proto", "status", "sport", "dport", "tcp_seq",
                 "tcp_ack", "tcp_flags", "payload_len"):
        r[name] = [getattr(p, name) for p in packets]
    r["ip_id"] = [p.ip_id or 0 for p in packets]
    r["src"] = [_address_bytes(p.src) for p in packets]
    r["dst"] = [_address_bytes(p.dst) for p in packets]
    return r


def _address_halves(version: np.ndarray, raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Record address fields (IPv4 in the first 4 bytes) -> the halves of the IPv6 form."""
    v4 = version == 4
    if v4.all():  # the usual capture: no IPv6 halves to read
        words = np.ascontiguousarray(raw).view(">u4").reshape(-1, 4)[:, 0]
        return np.zeros(len(raw), np.int64), _V4_MAPPED | words.astype(np.int64)
    halves = np.ascontiguousarray(raw).view(">i8").reshape(len(raw), 2).astype(np.int64)
    if v4.any():
        words = np.ascontiguousarray(raw[v4]).view(">u4").reshape(-1, 4)[:, 0]
        halves[v4, 0] = 0
        halves[v4, 1] = _V4_MAPPED | words.astype(np.int64)
    return halves[:, 0], halves[:, 1]


def _proto_number(text: str) -> int:
    """A logged protocol as its number (-1 for a text that is neither name nor number)."""
    return _PROTO_NUMBERS.get(text, int(text) if text.isdigit() else -1)


def _flag_bits(text: str) -> int:
    """Logged TCP flags ("SA"; "." for none) as the header's flag byte; -1 if not flags."""
    if text == ".":
        return 0
    bits = [_FLAG_LETTERS.find(c) for c in text]
    return -1 if not bits or -1 in bits else sum(1 << b for b in bits)


@lru_cache(maxsize=4096)
def _ipv6_form(text: str) -> bytes:
    address = ipaddress.ip_address(text)
    if address.version == 4:
        return bytes(10) + b"\xff\xff" + address.packed
    return address.packed


def _address_hi(text: str) -> int:
    return int.from_bytes(_ipv6_form(text)[:8], "big", signed=True)


def _address_lo(text: str) -> int:
    return int.from_bytes(_ipv6_form(text)[8:], "big", signed=True)


def _address_bytes(text: str) -> bytes:
    """An address as a record holds it: IPv4 in the first 4 of 16 bytes."""
    return ipaddress.ip_address(text).packed.ljust(16, b"\0")
