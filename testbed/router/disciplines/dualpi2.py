"""DualPI2: the DualQ Coupled AQM of RFC 9332 with Linux sch_dualpi2's defaults.

Two queues in one qdisc: ECT(1) and CE packets (the L4S identifier) go to the L queue, Not-ECT
and ECT(0) to the C queue. A PI controller (PI2: alpha, beta per second of delay, every tupdate,
on the larger of the two head packets' sojourn times) gives the base probability p'; a Classic
packet is dropped (ECT(0): marked) with p'^2, an L4S packet marked with coupling x p' or by
the L queue's own step at step_thresh; a weighted round robin gives the C queue at least
c_protection percent of the link when both hold packets. Linux holds alpha and beta in 1/256 Hz
(tc rounds), so they are kept rounded here.

In the emulator's router stage both queues live in the class's one queue
(emulator/LINK_MODEL.md "DualPI2").
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from testbed.errors import ConfigError
from testbed.router.values import int_in_range, optional_bool, optional_time, positive_int, reject_unknown
from testbed.units import format_time_us

DUALPI2_DEFAULT_LIMIT = 10_000        # packets (Linux: "max 125 ms at 1 Gbps")
DUALPI2_DEFAULT_TARGET_US = 15_000    # RFC 9332 appendix A and Linux
DUALPI2_DEFAULT_TUPDATE_US = 16_000
DUALPI2_DEFAULT_ALPHA = 41 / 256      # 0.16 Hz as Linux holds it
DUALPI2_DEFAULT_BETA = 819 / 256      # 3.2 Hz
DUALPI2_DEFAULT_COUPLING = 2          # k: window fairness for equal RTTs
DUALPI2_DEFAULT_STEP_US = 1_000       # the L queue's step threshold (sojourn time)
DUALPI2_DEFAULT_C_PROTECTION = 10     # percent of the WRR for the C queue
_KEYS = {"discipline", "limit", "target", "tupdate", "alpha", "beta", "coupling", "step_thresh",
         "c_protection", "drop_on_overload"}


@dataclass(frozen=True)
class DualPi2Queue:
    limit: int = DUALPI2_DEFAULT_LIMIT
    target_us: int = DUALPI2_DEFAULT_TARGET_US
    tupdate_us: int = DUALPI2_DEFAULT_TUPDATE_US
    alpha: float = DUALPI2_DEFAULT_ALPHA
    beta: float = DUALPI2_DEFAULT_BETA
    coupling: int = DUALPI2_DEFAULT_COUPLING
    step_thresh_us: int = DUALPI2_DEFAULT_STEP_US
    c_protection: int = DUALPI2_DEFAULT_C_PROTECTION
    drop_on_overload: bool = True
    discipline: ClassVar[str] = "dualpi2"
    kernel_module: ClassVar[str] = "sch_dualpi2"

    @classmethod
    def parse(cls, body: dict, where: str, link_rate_bps: int) -> DualPi2Queue:
        reject_unknown(body, where, _KEYS)
        return cls(
            limit=positive_int(body.get("limit", DUALPI2_DEFAULT_LIMIT), f"{where}.limit", "packets"),
            target_us=optional_time(body, "target", where, DUALPI2_DEFAULT_TARGET_US),
            tupdate_us=optional_time(body, "tupdate", where, DUALPI2_DEFAULT_TUPDATE_US),
            alpha=hertz(body.get("alpha", DUALPI2_DEFAULT_ALPHA), f"{where}.alpha"),
            beta=hertz(body.get("beta", DUALPI2_DEFAULT_BETA), f"{where}.beta"),
            coupling=int_in_range(body.get("coupling", DUALPI2_DEFAULT_COUPLING), 1, 255, f"{where}.coupling",
                                  "a coupling factor"),
            step_thresh_us=optional_time(body, "step_thresh", where, DUALPI2_DEFAULT_STEP_US),
            c_protection=int_in_range(body.get("c_protection", DUALPI2_DEFAULT_C_PROTECTION), 0, 100,
                                      f"{where}.c_protection", "a percentage"),
            drop_on_overload=optional_bool(body, "drop_on_overload", where, True),
        )

    def tc_options(self) -> str:
        return (f"dualpi2 limit {self.limit} target {self.target_us}us tupdate {self.tupdate_us}us"
                f" alpha {self.alpha!r} beta {self.beta!r} coupling_factor {self.coupling}"
                f" step_thresh {self.step_thresh_us}us classic_protection {self.c_protection}"
                f" {'drop_on_overload' if self.drop_on_overload else 'overflow'} drop_dequeue l4s_ect")

    def emulator_keys(self) -> list[str]:
        return [
            "discipline = dualpi2",
            f"limit = {self.limit}",
            f"dualpi2.target = {self.target_us}us",
            f"dualpi2.tupdate = {self.tupdate_us}us",
            f"dualpi2.alpha = {self.alpha!r}",
            f"dualpi2.beta = {self.beta!r}",
            f"dualpi2.coupling = {self.coupling}",
            f"dualpi2.step_thresh = {self.step_thresh_us}us",
            f"dualpi2.c_protection = {self.c_protection}",
            f"dualpi2.overflow = {'false' if self.drop_on_overload else 'true'}",
        ]

    def emulator_ignores(self, default_rate_bps: int) -> list[tuple[str, str]]:
        return []

    def most_bytes(self, mtu: int) -> int:
        return self.limit * mtu

    def describe(self) -> str:
        return (f"DualPI2 limit {self.limit} packets, target {format_time_us(self.target_us)}, tupdate "
                f"{format_time_us(self.tupdate_us)}, alpha {self.alpha:g} Hz, beta {self.beta:g} Hz, coupling "
                f"{self.coupling}, L step {format_time_us(self.step_thresh_us)}, C protection {self.c_protection} %"
                f"{'' if self.drop_on_overload else ', overflow on overload'}")


def hertz(value: object, where: str) -> float:
    """A PI gain in Hz as Linux holds it: rounded to 1/256 Hz, at least 1/256 (tc's range)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(where, f"{value!r} is not a number; expected a gain in Hz such as 0.16")
    steps = round(value * 256)
    if not 1 <= steps < 2 ** 23:
        raise ConfigError(where, f"{value} is outside [1/256, 32768) Hz, the range Linux holds")
    return steps / 256
