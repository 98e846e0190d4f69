"""Quantities with written-out units, as scenario files use them.

Times become integer microseconds, rates integer bit/s, sizes integer bytes: the
link model works in integers, so nothing here goes through floating point where a
user wrote an exact value.
"""
from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from testbed.errors import ConfigError

_TIME_UNITS = {"us": 1, "ms": 1_000, "s": 1_000_000, "min": 60_000_000}
_RATE_UNITS = {"bit": 1, "kbit": 10**3, "Mbit": 10**6, "Gbit": 10**9}
_SIZE_UNITS = {"B": 1, "kB": 10**3, "KiB": 2**10, "MB": 10**6, "MiB": 2**20}

# The largest value of each kind, in the smallest unit: nothing in a replication lasts longer than
# its longest timeout, the emulator holds sizes in 32 bits, and no link here is faster than 100 Gbit/s.
MAX_TIME_US = 86_400_000_000            # 1 day
MAX_RATE_BPS = 100 * 10**9              # 100 Gbit/s
MAX_SIZE_BYTES = 2**32 - 1              # the emulator's uint32 sizes
_MAX_SAID = {MAX_TIME_US: "1440min (one day)", MAX_RATE_BPS: "100Gbit", MAX_SIZE_BYTES: "4294967295B"}

_QUANTITY = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]+)\s*$", re.ASCII)


def _parse(value: object, units: dict[str, int], kind: str, example: str, where: str, maximum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, str):
        raise ConfigError(where, f"{value!r} is not {kind} with a unit; expected a string such as \"{example}\"")
    m = _QUANTITY.match(value)
    if not m:
        raise ConfigError(where, f"\"{value}\" is not {kind}; expected a number and a unit, such as \"{example}\"")
    number, unit = m.groups()
    if unit not in units:
        raise ConfigError(where, f"\"{value}\": unknown unit \"{unit}\"; expected one of {', '.join(units)}")
    try:
        exact = Decimal(number) * units[unit]
    except InvalidOperation:  # pragma: no cover - the regex admits only decimals
        raise ConfigError(where, f"\"{value}\" is not a number")
    if exact != exact.to_integral_value():
        smallest = min(units, key=units.get)
        raise ConfigError(where, f"\"{value}\" is not a whole number of {smallest}")
    if exact > maximum:
        raise ConfigError(where, f"\"{value}\" is too large; expected at most {_MAX_SAID[maximum]}")
    return int(exact)


def parse_time_us(value: object, where: str) -> int:
    return _parse(value, _TIME_UNITS, "a time", "300ms", where, MAX_TIME_US)


def parse_positive_time_us(value: object, where: str) -> int:
    us = parse_time_us(value, where)
    if us <= 0:
        raise ConfigError(where, "must be greater than zero")
    return us


def parse_rate_bps(value: object, where: str) -> int:
    return _parse(value, _RATE_UNITS, "a rate", "64kbit", where, MAX_RATE_BPS)


def parse_size_bytes(value: object, where: str) -> int:
    return _parse(value, _SIZE_UNITS, "a size", "9600B", where, MAX_SIZE_BYTES)


def si_quantity(label: str) -> tuple[float, str] | None:
    """A matrix label that is a time, rate or size ("50ms", "384kbit", "12000B") as its value in
    SI units: (0.05, "s"), (384000.0, "bit/s"), (12000.0, "B"); None for any other label ("e0",
    "1.1"). expanded.json's `axis_si`, the tables' value column beside the label."""
    for parse, per_unit, unit in ((parse_time_us, 1e6, "s"), (parse_rate_bps, 1, "bit/s"),
                                  (parse_size_bytes, 1, "B")):
        try:
            return parse(label, "label") / per_unit, unit
        except ConfigError:
            continue
    return None


# --- the other way: a value with its unit, for people (squall show) --------------------------

def format_time_us(us: int) -> str:
    """`300 ms`, `2.5 s`, `120 us`, `0 s`: the largest unit up to s that keeps it short and exact."""
    if us == 0:
        return "0 s"
    for unit, size in (("s", 1_000_000), ("ms", 1_000)):
        if abs(us) >= size and (us * 1000) % size == 0:
            return f"{_number(us / size)} {unit}"
    return f"{us} us"


def format_rate_bps(bps: int | None) -> str:
    """`64 kbit/s`, `1.5 Mbit/s`, `500 bit/s`; None is `unlimited`."""
    if bps is None:
        return "unlimited"
    for unit, size in (("Gbit/s", 10**9), ("Mbit/s", 10**6), ("kbit/s", 10**3)):
        if bps >= size and (bps * 1000) % size == 0:
            return f"{_number(bps / size)} {unit}"
    return f"{bps} bit/s"


def format_size(size: int) -> str:
    """`9600 B`: sizes stay in bytes, as the emulator and the studies count them."""
    return f"{size} B"


def _number(x: float) -> str:
    return f"{x:.3f}".rstrip("0").rstrip(".")
