"""What the bulk and udp kinds share: a sender and a receiver, one generator's `send` and `recv`
modes, each writing its own event log."""
from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from testbed.scenario.flows.base import FlowBase


@dataclass(frozen=True)
class SenderReceiverFlow(FlowBase):
    """A sender and a receiver: one program's `send` and `recv` modes."""
    ROLES = ("sender", "receiver")
    ACTIVE_SENDS = True

    def _active_args(self, peer: str, timeout_us: int) -> list[str]:
        return ["send", "--connect", peer, *self._send_args()]

    @abstractmethod
    def _send_args(self) -> list[str]: ...

    def passive_argv(self, program: Callable[[str], str], listen: str, log: Path, *,
                     peer: str = "", timeout_us: int = 0) -> list[str]:
        return [program(self.PROGRAM), "recv", "--listen", listen, "--tos", str(self.tos), "--log", str(log),
                *self._receive_args()]

    def _receive_args(self) -> list[str]:
        return []

    def log_files(self) -> list[tuple[str, str]]:
        return [(host, self.log_name(role)) for host, role in zip(self.hosts(), self.ROLES)]

