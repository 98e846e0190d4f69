"""bfifo: tail drop at a limit in bytes."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from testbed.router.disciplines.fifo import FifoQueue


@dataclass(frozen=True)
class BfifoQueue(FifoQueue):
    discipline: ClassVar[str] = "bfifo"
    tc_kind: ClassVar[str] = "bfifo"
    in_bytes: ClassVar[bool] = True
