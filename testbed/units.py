"""Quantities with written-out units, as scenario files use them.

Times become integer microseconds, rates integer bit/s, sizes integer bytes: the
link model works in integers, so nothing here goes through floating point where a
user wrote an exact value.
"""
from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from .errors import ConfigError

_TIME_UNITS = {"us": 1, "ms": 1_000, "s": 1_000_000, "min": 60_000_000}
_RATE_UNITS = {"bit": 1, "kbit": 10**3, "Mbit": 10**6, "Gbit": 10**9}
_SIZE_UNITS = {"B": 1, "kB": 10**3, "KiB": 2**10, "MB": 10**6, "MiB": 2**20}

_QUANTITY = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]+)\s*$")


def _parse(value: object, units: dict[str, int], kind: str, example: str, where: str) -> int:
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
    return int(exact)


def parse_time_us(value: object, where: str) -> int:
    return _parse(value, _TIME_UNITS, "a time", "300ms", where)


def parse_rate_bps(value: object, where: str) -> int:
    return _parse(value, _RATE_UNITS, "a rate", "64kbit", where)


def parse_size_bytes(value: object, where: str) -> int:
    return _parse(value, _SIZE_UNITS, "a size", "9600B", where)


def format_time_us(us: int) -> str:
    return f"{us}us"


def format_rate_bps(bps: int) -> str:
    return f"{bps}bit"


def format_size_bytes(n: int) -> str:
    return f"{n}B"
