"""What the machine may do to a replication before its numbers are less exact than asked:
beyond either tolerance an otherwise ok replication is `degraded` (docs/runner.md).

    timing_tolerance = "1ms"     # p99 end-to-end timing error, per capture point and direction
    cpu_wait_tolerance = 0.01    # a flow's programs' wait for a CPU, a share of its run time
                                 # (the roles' waits are summed: it may be more than 1)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from testbed.errors import ConfigError
from testbed.units import parse_positive_time_us

DEFAULT_TIMING_US = 1_000
DEFAULT_CPU_WAIT_SHARE = 0.01
MAX_CPU_WAIT_SHARE = 100.0          # as good as none: the roles waited 100 run times
KEYS = ("timing_tolerance", "cpu_wait_tolerance")


@dataclass(frozen=True)
class Tolerances:
    timing_us: int = DEFAULT_TIMING_US
    cpu_wait_share: float = DEFAULT_CPU_WAIT_SHARE

    def as_json(self) -> dict[str, Any]:
        return {"timing_tolerance_us": self.timing_us, "cpu_wait_tolerance": self.cpu_wait_share}


def share_text(share: float) -> str:
    """A CPU-wait share as people read it: `1 %`, or `3 × the run time` beyond the whole of it."""
    return f"{100 * share:g} %" if share <= 1 else f"{share:g} × the run time"


def parse_tolerances(table: Mapping[str, Any], where: str) -> Tolerances:
    return Tolerances(_timing(table.get("timing_tolerance"), f"{where}: timing_tolerance"),
                      _share(table.get("cpu_wait_tolerance"), f"{where}: cpu_wait_tolerance"))


def _timing(value: object, where: str) -> int:
    return DEFAULT_TIMING_US if value is None else parse_positive_time_us(value, where)


def _share(value: object, where: str) -> float:
    if value is None:
        return DEFAULT_CPU_WAIT_SHARE
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= MAX_CPU_WAIT_SHARE:
        raise ConfigError(where, f"{value!r}: expected a share of the flow's run time, a number greater "
                          f"than 0 and at most {MAX_CPU_WAIT_SHARE:g} (0.01 = 1 %)")
    return float(value)
