"""PIE: Proportional Integral controller Enhanced (RFC 8033) with Linux sch_pie's defaults.

The queue's limit counts packets; target and tupdate are times; alpha and beta are in the RFC's
units (probability per second of delay), which Linux and tc hold as whole sixteenths 0-32, so
only those values are accepted: both engines then run the same controller. The emulator's
rules are in emulator/src/model/router_pie.c, its semantics in emulator/LINK_MODEL.md "PIE".
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from testbed.errors import ConfigError
from testbed.router.values import optional_bool, optional_time, positive_int, reject_unknown
from testbed.units import format_time_us

PIE_DEFAULT_LIMIT = 1000        # packets: Linux sch_pie
PIE_DEFAULT_TARGET_US = 15_000  # RFC 8033 section 5.1 and Linux
PIE_DEFAULT_TUPDATE_US = 15_000
PIE_DEFAULT_ALPHA = 0.125       # tc's alpha 2 (sixteenths)
PIE_DEFAULT_BETA = 1.25         # tc's beta 20
PIE_MAX_TIME_US = 10_000_000    # what the emulator accepts for target and tupdate
_KEYS = {"discipline", "limit", "target", "tupdate", "alpha", "beta", "ecn", "bytemode"}


@dataclass(frozen=True)
class PieQueue:
    limit: int = PIE_DEFAULT_LIMIT
    target_us: int = PIE_DEFAULT_TARGET_US
    tupdate_us: int = PIE_DEFAULT_TUPDATE_US
    alpha: float = PIE_DEFAULT_ALPHA
    beta: float = PIE_DEFAULT_BETA
    ecn: bool = False
    bytemode: bool = False
    discipline: ClassVar[str] = "pie"
    kernel_module: ClassVar[str] = "sch_pie"

    @classmethod
    def parse(cls, body: dict, where: str, link_rate_bps: int) -> PieQueue:
        reject_unknown(body, where, _KEYS)
        return cls(
            limit=positive_int(body.get("limit", PIE_DEFAULT_LIMIT), f"{where}.limit", "packets"),
            target_us=optional_time(body, "target", where, PIE_DEFAULT_TARGET_US, PIE_MAX_TIME_US),
            tupdate_us=optional_time(body, "tupdate", where, PIE_DEFAULT_TUPDATE_US, PIE_MAX_TIME_US),
            alpha=sixteenths(body.get("alpha", PIE_DEFAULT_ALPHA), f"{where}.alpha"),
            beta=sixteenths(body.get("beta", PIE_DEFAULT_BETA), f"{where}.beta"),
            ecn=optional_bool(body, "ecn", where, False),
            bytemode=optional_bool(body, "bytemode", where, False),
        )

    def tc_options(self) -> str:
        return (f"pie limit {self.limit} target {self.target_us}us tupdate {self.tupdate_us}us"
                f" alpha {round(self.alpha * 16)} beta {round(self.beta * 16)}"
                f" {'ecn' if self.ecn else 'noecn'} {'bytemode' if self.bytemode else 'nobytemode'}")

    def emulator_keys(self) -> list[str]:
        return [
            "discipline = pie",
            f"limit = {self.limit}",
            f"pie.target = {self.target_us}us",
            f"pie.tupdate = {self.tupdate_us}us",
            f"pie.alpha = {self.alpha!r}",
            f"pie.beta = {self.beta!r}",
            f"pie.ecn = {'true' if self.ecn else 'false'}",
            f"pie.bytemode = {'true' if self.bytemode else 'false'}",
        ]

    def emulator_ignores(self, default_rate_bps: int) -> list[tuple[str, str]]:
        return []

    def most_bytes(self, mtu: int) -> int:
        return self.limit * mtu

    def describe(self) -> str:
        return (f"PIE limit {self.limit} packets, target {format_time_us(self.target_us)}, tupdate "
                f"{format_time_us(self.tupdate_us)}, alpha {self.alpha:g}, beta {self.beta:g}"
                f"{', ECN marking' if self.ecn else ''}{', byte mode' if self.bytemode else ''}")


def sixteenths(value: object, where: str) -> float:
    """A gain in [0, 2] that is a whole number of sixteenths (tc's 0-32)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(where, f"{value!r} is not a number; expected a multiple of 1/16 in [0, 2] such as 0.125")
    if not 0 <= value <= 2 or value * 16 != round(value * 16):
        raise ConfigError(where, f"{value} is not a multiple of 1/16 in [0, 2]; Linux holds it in sixteenths "
                                 "(tc's 0-32), e.g. 0.125")
    return float(value)

