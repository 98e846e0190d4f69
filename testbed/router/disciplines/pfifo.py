"""pfifo: tail drop at a limit in packets."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from testbed.router.disciplines.fifo import FifoQueue


@dataclass(frozen=True)
class PfifoQueue(FifoQueue):
    discipline: ClassVar[str] = "pfifo"
    tc_kind: ClassVar[str] = "pfifo"
