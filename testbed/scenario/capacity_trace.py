"""Recorded capacity traces: `bandwidth = { mahimahi = "FILE" }` (docs/links.md).

The file is mahimahi's delivery-opportunity trace: one line per opportunity, its time in whole
milliseconds since the link's start, each opportunity worth one 1500 B IP packet, the trace
repeating with its last line's time as period (emulator/LINK_MODEL.md "Recorded capacity
traces"). The emulator is the one validator (`squall-emulator --check` reads the file, and names
its line in what it refuses); here the times are only read for the trace's summary in
`squall show` and the per-second rates that estimates (ETA, drain bounds) use.
"""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

from testbed.errors import ConfigError

IP_BYTES_PER_OPPORTUNITY = 1500      # mahimahi: 1504 B of TUN frame, i.e. 4 B header + 1500 B of IP
SECOND_MS = 1000


@dataclass(frozen=True)
class CapacityTrace:
    path: str                         # absolute and resolved: what the emulator opens and names
    opportunities: int
    period_ms: int

    @property
    def mean_bps(self) -> int:
        return self.opportunities * IP_BYTES_PER_OPPORTUNITY * 8 * SECOND_MS // self.period_ms

    def summary(self, per_second_bps: tuple[int, ...]) -> str:
        """`squall show`'s text; per_second_bps: the rates of the trace's seconds (load())."""
        from testbed.units import format_rate_bps, format_time_us
        return (f"mahimahi trace {self.path} ({self.opportunities} opportunities, period "
                f"{format_time_us(self.period_ms * 1000)}, repeated; per second of IP packets: mean "
                f"{format_rate_bps(self.mean_bps)}, min {format_rate_bps(min(per_second_bps))}, "
                f"max {format_rate_bps(max(per_second_bps))})")


def parse_capacity(value: object, where: str, base: Path | None) -> tuple[CapacityTrace, tuple[int, ...]]:
    """value: the `{ mahimahi = "FILE" }` table; a relative path is relative to `base`. With the
    trace, the IP bit/s of each whole second of one period (all of it if shorter than 1 s)."""
    if not isinstance(value, dict) or set(value) != {"mahimahi"} or not isinstance(value["mahimahi"], str) \
            or not value["mahimahi"] or "\0" in value["mahimahi"]:
        raise ConfigError(where, "expected { mahimahi = \"FILE\" } naming a delivery-opportunity trace")
    return load(os.path.realpath((base or Path()) / value["mahimahi"]), where)


def load(path: str, where: str) -> tuple[CapacityTrace, tuple[int, ...]]:
    try:
        st = Path(path).stat()
    except OSError as exc:
        raise ConfigError(where, f"{path}: cannot read the trace ({exc.strerror})") from exc
    return _load(path, where, (st.st_ino, st.st_mtime_ns, st.st_size))


@functools.lru_cache(maxsize=64)
def _load(path: str, where: str, _state: object) -> tuple[CapacityTrace, tuple[int, ...]]:
    """Cached per file version: a matrix names the same trace in many cells."""
    times = []
    with open(path, "rb") as f:
        for number, line in enumerate(f, 1):
            text = line.rstrip(b"\n")
            if not text.isdigit():
                raise ConfigError(where, f"{path}:{number}: expected a delivery opportunity's time in whole "
                                  "milliseconds, one per line as in mahimahi's traces")
            times.append(int(text))
    if not times or times[-1] == 0:
        raise ConfigError(where, f"{path}: the trace must have opportunities and last a nonzero time "
                          "(its last line is its period)")
    return CapacityTrace(path, len(times), times[-1]), _per_second(times)


def _per_second(times: list[int]) -> tuple[int, ...]:
    """Opportunities of each whole second [k s, k+1 s) of the period, as IP bit/s, as the trace
    repeats: the last line, at the period, is the next cycle's time 0. A period shorter than a
    second is one bin scaled to a second; the seconds after the last whole one are left out."""
    period = times[-1]
    if period < SECOND_MS:
        return (len(times) * IP_BYTES_PER_OPPORTUNITY * 8 * SECOND_MS // period,)
    counts = [0] * (period // SECOND_MS)
    for t in times:
        if (t % period) // SECOND_MS < len(counts):
            counts[(t % period) // SECOND_MS] += 1
    return tuple(c * IP_BYTES_PER_OPPORTUNITY * 8 for c in counts)
