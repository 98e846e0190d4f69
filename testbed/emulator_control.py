"""The runner's side of the emulator's run control: START (t = 0) and STOP.

The messages are sent from a socket inside the emulation namespace, so control
traffic never crosses a testbed link.
"""
from __future__ import annotations

import socket
import struct
import time

from . import netns, wire

RETRY_INTERVAL_S = 0.2


class ControlError(RuntimeError):
    """The emulator did not answer a control message."""


class EmulatorControl:
    """A control socket in namespace `ns` talking to the emulator at `target`."""

    def __init__(self, ns: str, target: tuple[str, int], token_hex: str):
        self.target = target
        self.token = wire.parse_token(token_hex)
        self.sock = netns.socket_in(ns, socket.AF_INET, socket.SOCK_DGRAM)
        self.seq = 0

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> "EmulatorControl":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self, timeout_s: float = 5.0) -> int:
        """Sends START until STARTED arrives; returns CLOCK_REALTIME µs of t = 0."""
        reply = self._exchange(wire.MsgType.START, wire.MsgType.STARTED, timeout_s)
        if len(reply.payload) != 8:
            raise ControlError(f"STARTED from the emulator at {self._where()} carries "
                               f"{len(reply.payload)} payload bytes; expected 8 (u64 realtime µs)")
        return struct.unpack("!Q", reply.payload)[0]

    def stop(self, timeout_s: float = 5.0) -> None:
        """Sends STOP until the emulator's BYE says the log is complete."""
        self._exchange(wire.MsgType.STOP, wire.MsgType.BYE, timeout_s)

    def _exchange(self, send: wire.MsgType, expect: wire.MsgType, timeout_s: float) -> wire.Message:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self.seq += 1
            self.sock.sendto(wire.encode(send, wire.Role.CONTROL, self.token, self.seq), self.target)
            reply = self._receive(expect, min(RETRY_INTERVAL_S, max(0.0, deadline - time.monotonic())))
            if reply is not None:
                return reply
        raise ControlError(f"the emulator at {self._where()} did not answer {send.name} with "
                           f"{expect.name} within {timeout_s:g} s")

    def _receive(self, expect: wire.MsgType, wait_s: float) -> wire.Message | None:
        end = time.monotonic() + wait_s
        while (left := end - time.monotonic()) > 0:
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(65535)
            except TimeoutError:
                return None
            except ConnectionRefusedError:
                # The emulator is not bound (yet): wait a little before the next retry.
                time.sleep(min(left, 0.05))
                continue
            msg = wire.decode(data)
            if msg is not None and msg.type == expect and msg.token == self.token:
                return msg
        return None

    def _where(self) -> str:
        return f"{self.target[0]}:{self.target[1]}"
