"""The SP wire protocol header (emulator/PROTOCOL.md, common/wire.h) in Python."""
from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum

MAGIC = 0x5351574C
VERSION = 1
HEADER = struct.Struct("!IBBBBQIHH")
HEADER_LEN = HEADER.size  # 24


class MsgType(IntEnum):
    HELLO = 1
    WELCOME = 2
    DATA = 3
    KEEPALIVE = 4
    BYE = 5
    START = 6
    STARTED = 7
    STOP = 8


class Role(IntEnum):
    SP = 0
    ROUTER = 1
    MOBILE = 2
    CONTROL = 3


@dataclass(frozen=True)
class Message:
    type: int
    role: int
    token: int
    seq: int
    payload: bytes
    flags: int = 0


FLAG_CLOCK = 0x01       # the shared clock (emulator/PROTOCOL.md, "Shared clock")
STAMP_LEN = 8


def encode(type_: int, role: int, token: int, seq: int = 0, payload: bytes = b"",
           *, magic: int = MAGIC, version: int = VERSION, length: int | None = None, flags: int = 0) -> bytes:
    """A datagram; magic, version and length can be set wrong on purpose (tests)."""
    n = len(payload) if length is None else length
    return HEADER.pack(magic, version, type_, role, flags, token, seq, n, 0) + payload


def decode(datagram: bytes) -> Message | None:
    """The message, or None if it is not a well-formed version-1 datagram."""
    if len(datagram) < HEADER_LEN:
        return None
    magic, version, type_, role, flags, token, seq, length, _ = HEADER.unpack_from(datagram)
    if magic != MAGIC or version != VERSION or length != len(datagram) - HEADER_LEN:
        return None
    return Message(type_, role, token, seq, datagram[HEADER_LEN:], flags)
