"""A FIFO with one limit, in packets or bytes: what pfifo, bfifo (and head_drop) have in common.

A discipline of this shape says its names and its limit's unit; parsing the limit and the
rendering for both engines are the same for all of them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from testbed.router.values import positive_int, positive_size, reject_unknown, required


@dataclass(frozen=True)
class FifoQueue:
    limit: int
    discipline: ClassVar[str]       # the name in scenario files and emulator.conf
    tc_kind: ClassVar[str]          # the qdisc's name in tc
    kernel_module: ClassVar[str] = "sch_fifo"
    in_bytes: ClassVar[bool] = False    # the limit counts bytes (else packets)
    drop: ClassVar[str] = "tail drop"

    @classmethod
    def parse_limit(cls, value: object, where: str) -> int:
        return positive_size(value, where) if cls.in_bytes else positive_int(value, where, "packets")

    @classmethod
    def parse(cls, body: dict, where: str, link_rate_bps: int) -> FifoQueue:
        reject_unknown(body, where, {"discipline", "limit"})
        return cls(cls.parse_limit(required(body, "limit", where), f"{where}.limit"))

    def tc_options(self) -> str:
        return f"{self.tc_kind} limit {self.limit}"

    def emulator_keys(self) -> list[str]:
        return [f"discipline = {self.discipline}", f"limit = {self.limit}{'B' if self.in_bytes else ''}"]

    def emulator_ignores(self, default_rate_bps: int) -> list[tuple[str, str]]:
        return []

    def most_bytes(self, mtu: int) -> int:
        return self.limit if self.in_bytes else self.limit * mtu

    def describe(self) -> str:
        return f"{self.drop} ({self.discipline}) at {self.limit} {'B' if self.in_bytes else 'packets'}"
