"""FQ-CoDel (RFC 8290): packets hashed into `flows` queues by their 5-tuple, served by deficit
round robin (`quantum` bytes a turn) with new flows first, each flow under its own CoDel
(`target`, `interval`, `ecn`); limit in packets. Every key is optional, with Linux
sch_fq_codel's defaults: limit 10240 packets, flows 1024, quantum 1514 bytes, target 5 ms,
interval 100 ms, ecn on.

The emulator's FQ-CoDel is emulator/src/model/router_fq_codel.c (emulator/LINK_MODEL.md
"FQ-CoDel"; its quantum counts IP bytes, Linux's the frame with its 14-byte Ethernet header);
tc's is the kernel's sch_fq_codel, which the machine may lack (the tc engine then refuses the
scenario before it creates anything, testbed/router/tc_apply.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from testbed.router.disciplines.codel import parse_target_interval
from testbed.router.values import int_in_range, optional_bool, positive_int, reject_unknown
from testbed.units import format_time_us

FQ_CODEL_LIMIT = 10240     # packets, sch_fq_codel's defaults
FQ_CODEL_FLOWS = 1024
FQ_CODEL_QUANTUM = 1514    # bytes
_KEYS = {"discipline", "limit", "flows", "quantum", "target", "interval", "ecn"}


@dataclass(frozen=True)
class FqCodelQueue:
    limit: int
    flows: int
    quantum: int
    target_us: int
    interval_us: int
    ecn: bool
    discipline: ClassVar[str] = "fq_codel"
    kernel_module: ClassVar[str] = "sch_fq_codel"

    @classmethod
    def parse(cls, body: dict, where: str, link_rate_bps: int) -> FqCodelQueue:
        reject_unknown(body, where, _KEYS)
        limit = positive_int(body.get("limit", FQ_CODEL_LIMIT), f"{where}.limit", "packets")
        flows = int_in_range(body.get("flows", FQ_CODEL_FLOWS), 1, 65536, f"{where}.flows", "a number of flows")
        quantum = int_in_range(body.get("quantum", FQ_CODEL_QUANTUM), 256, 1 << 20, f"{where}.quantum", "a quantum in bytes")
        target, interval = parse_target_interval(body, where)
        return cls(limit, flows, quantum, target, interval, optional_bool(body, "ecn", where, True))

    def tc_options(self) -> str:
        return (f"fq_codel limit {self.limit} flows {self.flows} quantum {self.quantum} "
                f"target {self.target_us}us interval {self.interval_us}us {'ecn' if self.ecn else 'noecn'}")

    def emulator_keys(self) -> list[str]:
        return [
            "discipline = fq_codel",
            f"limit = {self.limit}",
            f"fq_codel.target = {self.target_us}us",
            f"fq_codel.interval = {self.interval_us}us",
            f"fq_codel.ecn = {'true' if self.ecn else 'false'}",
            f"fq_codel.quantum = {self.quantum}",
            f"fq_codel.flows = {self.flows}",
        ]

    def emulator_ignores(self, default_rate_bps: int) -> list[tuple[str, str]]:
        return []

    def most_bytes(self, mtu: int) -> int:
        return self.limit * mtu

    def describe(self) -> str:
        return (f"FQ-CoDel limit {self.limit} packets, {self.flows} flows, quantum {self.quantum} B, "
                f"target {format_time_us(self.target_us)}, interval {format_time_us(self.interval_us)}"
                f"{', ECN marking' if self.ecn else ''}")
