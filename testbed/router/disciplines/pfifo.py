"""pfifo: tail drop at a limit in packets."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from testbed.router.disciplines.fifo import FifoQueue
from testbed.router.values import positive_int


@dataclass(frozen=True)
class PfifoQueue(FifoQueue):
    discipline: ClassVar[str] = "pfifo"
    tc_kind: ClassVar[str] = "pfifo"
    in_bytes: ClassVar[bool] = False

    @classmethod
    def parse_limit(cls, value: object, where: str) -> int:
        return positive_int(value, where, "packets")
