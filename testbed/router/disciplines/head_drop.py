"""head_drop: a FIFO that, when full, drops from the front (the oldest packet) to take the
arrival; limit in packets. tc's `pfifo_head_drop`, the emulator's `head_drop`."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from testbed.router.disciplines.fifo import FifoQueue


@dataclass(frozen=True)
class HeadDropQueue(FifoQueue):
    discipline: ClassVar[str] = "head_drop"
    tc_kind: ClassVar[str] = "pfifo_head_drop"
    drop: ClassVar[str] = "head drop"
