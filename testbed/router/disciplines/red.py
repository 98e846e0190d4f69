"""RED: Random Early Detection, sizes in bytes, burst in packets of avpkt bytes.

RED's rules (min < max <= limit, the weight) are checked here and only here for scenarios;
the emulator checks its own configuration file (emulator/src/model/router_red.c), which
scenarios reach only through this type (docs/architecture.md).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from testbed.errors import ConfigError
from testbed.router.values import (optional_bool, positive_int, positive_rate, positive_size, reject_unknown,
                                   required)
from testbed.units import format_rate_bps, format_size

RED_DEFAULT_PROBABILITY = 0.1  # max_p of the IIP report, table 1
RED_DEFAULT_W_Q = 0.002        # w_q of the IIP report, table 1
RED_MAX_WLOG = 31
_KEYS = {"discipline", "limit", "min", "max", "avpkt", "burst", "w_q", "probability", "bandwidth", "ecn"}


@dataclass(frozen=True)
class RedQueue:
    """The average-queue weight is w_q = 2**-wlog: Linux keeps only powers of two, and tc
    derives wlog from burst (`red_wlog`), so burst and wlog always agree here."""
    limit: int
    min: int
    max: int
    avpkt: int
    burst: int
    wlog: int
    probability: float
    bandwidth_bps: int
    ecn: bool
    discipline: ClassVar[str] = "red"
    kernel_module: ClassVar[str] = "sch_red"

    @property
    def w_q(self) -> float:
        return 2.0 ** -self.wlog

    @classmethod
    def parse(cls, body: dict, where: str, link_rate_bps: int) -> RedQueue:
        reject_unknown(body, where, _KEYS)
        limit, low, high, avpkt = (positive_size(required(body, k, where), f"{where}.{k}")
                                   for k in ("limit", "min", "max", "avpkt"))
        if low >= high:
            raise ConfigError(f"{where}.min", f"{low} B is not below max {high} B; RED needs min < max")
        if high > limit:
            raise ConfigError(f"{where}.max", f"{high} B is above limit {limit} B; the queue could never "
                                              "reach max")
        burst, wlog = _red_weight(body, where, low, avpkt)
        probability = _probability(body.get("probability", RED_DEFAULT_PROBABILITY), f"{where}.probability")
        bandwidth = (positive_rate(body["bandwidth"], f"{where}.bandwidth") if "bandwidth" in body
                     else link_rate_bps)
        ecn = optional_bool(body, "ecn", where, False)
        return cls(limit, low, high, avpkt, burst, wlog, probability, bandwidth, ecn)

    def tc_options(self) -> str:
        ecn = " ecn" if self.ecn else ""
        return (f"red limit {self.limit} min {self.min} max {self.max} avpkt {self.avpkt}"
                f" burst {self.burst} probability {self.probability:g} bandwidth {self.bandwidth_bps}bit{ecn}")

    def emulator_keys(self) -> list[str]:
        return [
            "discipline = red",
            f"limit = {self.limit}B",
            f"red.min = {self.min}B",
            f"red.max = {self.max}B",
            f"red.avpkt = {self.avpkt}B",
            f"red.max_p = {self.probability!r}",
            f"red.w_q = {self.w_q!r}",
            f"red.ecn = {'true' if self.ecn else 'false'}",
        ]

    def emulator_ignores(self, default_rate_bps: int) -> list[tuple[str, str]]:
        if self.bandwidth_bps == default_rate_bps:
            return []
        return [("bandwidth", f"{self.bandwidth_bps} bit/s is ignored; RED's idle-time decay uses the "
                              "link's current rate")]

    def most_bytes(self, mtu: int) -> int:
        return self.limit

    def describe(self) -> str:
        return (f"RED limit {format_size(self.limit)}, min {format_size(self.min)}, max {format_size(self.max)}, "
                f"avpkt {format_size(self.avpkt)}, burst {self.burst} packets, w_q {self.w_q:g}, "
                f"max_p {self.probability:g}, bandwidth {format_rate_bps(self.bandwidth_bps)}"
                f"{', ECN marking' if self.ecn else ''}")


def _red_weight(body: dict, where: str, low: int, avpkt: int) -> tuple[int, int]:
    """(burst, wlog) from `burst` or `w_q` (default w_q 0.002), as tc will set them."""
    if "burst" in body and "w_q" in body:
        raise ConfigError(where, "has both `burst` and `w_q`; tc derives w_q from burst, give one of them")
    if "burst" in body:
        burst = positive_int(body["burst"], f"{where}.burst", "packets")
        if burst < low / avpkt:
            raise ConfigError(f"{where}.burst", f"{burst} packets is below min/avpkt = {low / avpkt:g}; "
                                                "the average queue could never reach min")
        wlog = red_wlog(low, burst, avpkt)
        if wlog is None:
            raise ConfigError(f"{where}.burst", f"{burst} packets needs w_q below 2^-{RED_MAX_WLOG}, "
                                                "more than Linux RED can represent")
        return burst, wlog
    w_q = body.get("w_q", RED_DEFAULT_W_Q)
    if isinstance(w_q, bool) or not isinstance(w_q, (int, float)) or not 0 < w_q <= 0.5:
        raise ConfigError(f"{where}.w_q", f"{w_q!r} is not a weight in (0, 0.5]; expected e.g. 0.002")
    wlog = min(RED_MAX_WLOG, max(1, round(-math.log2(w_q))))
    return burst_for_wlog(low, avpkt, wlog), wlog


def red_wlog(low: int, burst: int, avpkt: int) -> int | None:
    """The log2 of 1/w_q tc chooses for `burst`: the largest weight w = 2^-wlog with which
    `burst` back-to-back packets arriving at an empty queue leave the average below min
    (burst + 1 - min/avpkt <= (1 - (1 - w)^burst) / w, the RED paper's rule)."""
    target = burst + 1 - low / avpkt
    for wlog in range(1, RED_MAX_WLOG + 1):
        w = 2.0 ** -wlog
        if target <= (1 - (1 - w) ** burst) / w:
            return wlog
    return None


def burst_for_wlog(low: int, avpkt: int, wlog: int) -> int:
    """The smallest burst for which tc sets at least this wlog (so w_q = 2^-wlog or just below)."""
    def reaches(burst: int) -> bool:  # monotonic: a larger burst never gives a larger w_q
        return (red_wlog(low, burst, avpkt) or RED_MAX_WLOG + 1) >= wlog

    low_burst = max(1, math.ceil(low / avpkt))
    high_burst = low_burst
    while not reaches(high_burst):
        low_burst, high_burst = high_burst + 1, high_burst * 2
    while low_burst < high_burst:
        middle = (low_burst + high_burst) // 2
        if reaches(middle):
            high_burst = middle
        else:
            low_burst = middle + 1
    return high_burst


def _probability(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(where, f"{value!r} is not a number; expected a probability in (0, 1] such as 0.1")
    if not 0 < value <= 1:
        raise ConfigError(where, f"{value} is outside (0, 1]")
    return float(value)
