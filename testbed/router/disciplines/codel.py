"""CoDel (RFC 8289): drops (or, with ECN, marks) at dequeue once the queue's sojourn time has
stayed above `target` for `interval`; limit in packets. Every key is optional, with Linux
sch_codel's defaults: limit 1000 packets, target 5 ms, interval 100 ms, ecn off, no
ce_threshold.

The emulator's CoDel is emulator/src/model/router_codel.c (emulator/LINK_MODEL.md "CoDel");
tc's is the kernel's sch_codel, which the machine may lack (the tc engine then refuses the
scenario before it creates anything, testbed/router/tc_apply.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from testbed.errors import ConfigError
from testbed.router.values import optional_bool, positive_int, reject_unknown
from testbed.units import format_time_us, parse_positive_time_us

CODEL_LIMIT = 1000            # packets, sch_codel's default
CODEL_TARGET_US = 5_000
CODEL_INTERVAL_US = 100_000
_KEYS = {"discipline", "limit", "target", "interval", "ecn", "ce_threshold"}


def parse_target_interval(body: dict, where: str) -> tuple[int, int]:
    """(target, interval) in µs, each > 0, target below interval (RFC 8289 section 4.4: target
    is 5-10 % of interval)."""
    target = parse_positive_time_us(body.get("target", "5ms"), f"{where}.target")
    interval = parse_positive_time_us(body.get("interval", "100ms"), f"{where}.interval")
    if target >= interval:
        raise ConfigError(f"{where}.target", f"{format_time_us(target)} is not below interval "
                                             f"{format_time_us(interval)}; CoDel's target is a few percent of it")
    return target, interval


@dataclass(frozen=True)
class CodelQueue:
    limit: int
    target_us: int
    interval_us: int
    ecn: bool
    ce_threshold_us: int = 0        # 0: off
    discipline: ClassVar[str] = "codel"
    kernel_module: ClassVar[str] = "sch_codel"

    @classmethod
    def parse(cls, body: dict, where: str, link_rate_bps: int) -> CodelQueue:
        reject_unknown(body, where, _KEYS)
        limit = positive_int(body.get("limit", CODEL_LIMIT), f"{where}.limit", "packets")
        target, interval = parse_target_interval(body, where)
        ce_threshold = (parse_positive_time_us(body["ce_threshold"], f"{where}.ce_threshold")
                        if "ce_threshold" in body else 0)
        return cls(limit, target, interval, optional_bool(body, "ecn", where, False), ce_threshold)

    def tc_options(self) -> str:
        ce = f" ce_threshold {self.ce_threshold_us}us" if self.ce_threshold_us else ""
        return (f"codel limit {self.limit} target {self.target_us}us interval {self.interval_us}us "
                f"{'ecn' if self.ecn else 'noecn'}{ce}")

    def emulator_keys(self) -> list[str]:
        return [
            "discipline = codel",
            f"limit = {self.limit}",
            f"codel.target = {self.target_us}us",
            f"codel.interval = {self.interval_us}us",
            f"codel.ecn = {'true' if self.ecn else 'false'}",
            f"codel.ce_threshold = {self.ce_threshold_us}us",
        ]

    def emulator_ignores(self, default_rate_bps: int) -> list[tuple[str, str]]:
        return []

    def most_bytes(self, mtu: int) -> int:
        return self.limit * mtu

    def describe(self) -> str:
        return (f"CoDel limit {self.limit} packets, target {format_time_us(self.target_us)}, "
                f"interval {format_time_us(self.interval_us)}{', ECN marking' if self.ecn else ''}"
                f"{f', CE above {format_time_us(self.ce_threshold_us)}' if self.ce_threshold_us else ''}")
