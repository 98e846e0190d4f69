"""Test helpers for squall-npa: a small SP peer that speaks the wire protocol, and
hand-built IPv4/UDP packets.

The SP peer is a test peer, not an emulator: it registers the NPA (HELLO →
WELCOME), optionally answers keepalives, and records everything it receives so
tests can assert on the exact datagrams.
"""
from __future__ import annotations

import queue
import socket
import struct
import threading
import time
from dataclasses import dataclass, field

from testbed import netns

from testbed.link import wire

SO_RCVBUFFORCE = 33   # asm-generic/socket.h; not in Python 3.11's socket module


def checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def ipv4_udp_packet(src: str, dst: str, sport: int, dport: int, payload: bytes,
                    ident: int = 0x1234) -> bytes:
    """An IPv4/UDP packet with a valid header checksum and no UDP checksum (0 is allowed)."""
    udp = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    header = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), ident, 0x4000, 64,
                         socket.IPPROTO_UDP, 0, socket.inet_aton(src), socket.inet_aton(dst))
    header = header[:10] + struct.pack("!H", checksum(header)) + header[12:]
    return header + udp


@dataclass(frozen=True)
class Received:
    message: wire.Message
    source: tuple[str, int]


@dataclass
class SPPeer:
    """An SP stand-in on a UDP socket bound in a namespace, served by a thread."""
    ns: str
    address: str
    port: int
    token: int
    link_mtu: int = 1500
    answer_keepalives: bool = True
    welcome_flags: int = 0            # wire.FLAG_CLOCK: agree to the NPA's clock offer
    sock: socket.socket = field(init=False)
    received: "queue.Queue[Received]" = field(init=False, default_factory=queue.Queue)
    npa_address: tuple[str, int] | None = field(init=False, default=None)
    _stop: threading.Event = field(init=False, default_factory=threading.Event)
    _thread: threading.Thread = field(init=False)
    _seq: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self.sock = netns.socket_in(self.ns, socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 8 << 20)   # bursts in tests
        self.sock.bind((self.address, self.port))
        self.sock.settimeout(0.05)
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()

    def __enter__(self) -> "SPPeer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def send(self, type_: int, payload: bytes = b"", *, to: tuple[str, int] | None = None,
             token: int | None = None, role: int = wire.Role.SP, flags: int = 0) -> None:
        target = to or self.npa_address
        assert target is not None, "the NPA has not registered yet"
        self._seq += 1
        self.sock.sendto(wire.encode(type_, role, self.token if token is None else token,
                                     self._seq, payload, flags=flags), target)

    def send_raw(self, datagram: bytes) -> None:
        assert self.npa_address is not None, "the NPA has not registered yet"
        self.sock.sendto(datagram, self.npa_address)

    def wait_for(self, type_: int, timeout: float = 5.0) -> Received:
        """The next received message of type_ (others are skipped)."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                got = self.received.get(timeout=left)
            except queue.Empty:
                break
            if got.message.type == type_:
                return got
        raise AssertionError(f"the SP peer received no {wire.MsgType(type_).name} within {timeout} s")

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                datagram, source = self.sock.recvfrom(65600)
            except TimeoutError:
                continue
            message = wire.decode(datagram)
            if message is None:
                continue
            self.received.put(Received(message, source))
            if message.token != self.token:
                continue
            if message.type == wire.MsgType.HELLO:
                self.npa_address = source
                self.send(wire.MsgType.WELCOME, struct.pack("!H", self.link_mtu), to=source,
                          flags=self.welcome_flags)
            elif message.type == wire.MsgType.KEEPALIVE and self.answer_keepalives:
                self.send(wire.MsgType.KEEPALIVE, to=source)
