"""The runner's side of the emulator's run control: START (t = 0), STATE (what is still inside
the link, for the drain) and STOP.

Both go to the emulator's Unix control socket (emulator/PROTOCOL.md, "Run control"), a 0600
file in the session's private directory: on a lane this process connects to it directly (a
pathname socket is reached from any network namespace of the machine); on lab hosts
testbed/lab/hosts.py runs `squall-control` through the SSH connection. Control never
crosses a network as datagrams, and needs no token: the file's mode and the emulator's
check of the peer's user admit only root and the emulator's own user.
"""
from __future__ import annotations

import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

RETRY_INTERVAL_S = 0.05


class ControlError(RuntimeError):
    """The emulator did not answer a control command, or refused it."""


@dataclass(frozen=True)
class LinkState:
    """The emulator's answer to STATE: packets inside the link (router stage included), the
    model time (µs since t = 0) of the last packet in or out (-1: none) and now (-1: not
    started)."""
    pending: int
    last_us: int
    now_us: int

    def quiet_us(self) -> int:
        """How long no packet went in or out; since t = 0 when none did."""
        return self.now_us - max(self.last_us, 0)


class Control(Protocol):
    def start(self, timeout_s: float = 5.0) -> int:
        """Starts the run; returns CLOCK_REALTIME µs of t = 0."""

    def state(self, timeout_s: float = 5.0) -> LinkState:
        """What is inside the link now."""

    def stop(self, timeout_s: float = 5.0) -> None:
        """Ends the run; returns once the emulator's log is complete."""

    def close(self) -> None: ...


def parse_started(answer: str, where: str) -> int:
    """`started T0` -> T0; ControlError for anything else."""
    words = answer.split()
    if len(words) == 2 and words[0] == "started" and words[1].isdigit():
        return int(words[1])
    raise ControlError(f"the emulator's control socket {where} answered START with {answer!r}; "
                       "expected 'started T0_REALTIME_US'")


def parse_state(answer: str, where: str) -> LinkState:
    """`state pending N last_us T now_us M` -> LinkState; ControlError for anything else."""
    words = answer.split()
    try:
        if len(words) == 7 and words[0] == "state" and words[1:6:2] == ["pending", "last_us", "now_us"]:
            return LinkState(int(words[2]), int(words[4]), int(words[6]))
    except ValueError:
        pass
    raise ControlError(f"the emulator's control socket {where} answered STATE with {answer!r}; "
                       "expected 'state pending N last_us T now_us M'")


def check_stopped(answer: str, where: str) -> None:
    if answer.strip() != "stopped":
        raise ControlError(f"the emulator's control socket {where} answered STOP with {answer!r}; "
                           "expected 'stopped'")


class SocketControl:
    """The control socket at a path of this machine's file system."""

    def __init__(self, path: str | Path):
        self.path = str(path)

    def close(self) -> None:
        pass

    def __enter__(self) -> "SocketControl":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self, timeout_s: float = 5.0) -> int:
        return parse_started(self.command("start", timeout_s), self.path)

    def state(self, timeout_s: float = 5.0) -> LinkState:
        return parse_state(self.command("state", timeout_s), self.path)

    def stop(self, timeout_s: float = 5.0) -> None:
        check_stopped(self.command("stop", timeout_s), self.path)

    def command(self, command: str, timeout_s: float) -> str:
        """Sends one command line and returns the answer line; connecting is retried while
        the socket is not there yet (the emulator is starting)."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                return self._exchange(command, deadline)
            except (FileNotFoundError, ConnectionRefusedError) as e:
                if time.monotonic() >= deadline:
                    raise ControlError(f"cannot reach the emulator's control socket {self.path} "
                                       f"within {timeout_s:g} s: {e.strerror}") from None
                time.sleep(RETRY_INTERVAL_S)

    def _exchange(self, command: str, deadline: float) -> str:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(max(0.01, deadline - time.monotonic()))
            sock.connect(self.path)
            sock.sendall(f"{command}\n".encode())
            answer = b""
            try:
                while not answer.endswith(b"\n"):
                    sock.settimeout(max(0.01, deadline - time.monotonic()))
                    chunk = sock.recv(256)
                    if not chunk:
                        break
                    answer += chunk
            except TimeoutError:
                raise ControlError(f"the emulator did not answer {command.upper()} on its control "
                                   f"socket {self.path} in time") from None
            if not answer.endswith(b"\n"):
                raise ControlError(f"the emulator closed its control socket {self.path} without "
                                   f"answering {command.upper()}")
            text = answer.decode(errors="replace").strip()
            if text.startswith("error"):
                raise ControlError(f"the emulator refused {command.upper()} on {self.path}: {text}")
            return text
