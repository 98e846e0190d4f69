"""Small checks of TOML values shared by the router's parser, its queue disciplines and the flows
(a DSCP).

Each raises ConfigError naming the key (`where`) and what was expected.
"""
from __future__ import annotations

from testbed.errors import ConfigError
from testbed.units import MAX_TIME_US, format_time_us, parse_positive_time_us, parse_rate_bps, parse_size_bytes

_DSCP_NAMES: dict[str, int] = {"BE": 0, "default": 0, "EF": 46, "VA": 44}
_DSCP_NAMES.update({f"CS{i}": 8 * i for i in range(8)})
_DSCP_NAMES.update({f"AF{c}{d}": 8 * c + 2 * d for c in range(1, 5) for d in range(1, 4)})


def expect_table(value: object, where: str) -> None:
    if not isinstance(value, dict):
        raise ConfigError(where, f"expected a table, found {type(value).__name__} {value!r}")


def reject_unknown(table: dict, where: str, known: set[str]) -> None:
    for key in table:
        if key not in known:
            raise ConfigError(f"{where}.{key}", f"unknown key; expected one of {', '.join(sorted(known))}")


def required(table: dict, key: str, where: str) -> object:
    if key not in table:
        raise ConfigError(f"{where}.{key}", "is missing")
    return table[key]


def positive_rate(value: object, where: str) -> int:
    """A rate with a unit, above zero (integer bit/s)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value <= 0:
        raise ConfigError(where, f"{value} is not a positive rate; expected e.g. \"64kbit\"")
    if isinstance(value, str) and value.strip().startswith("-"):
        raise ConfigError(where, f"\"{value}\" is negative; expected a positive rate such as \"64kbit\"")
    rate = parse_rate_bps(value, where)
    if rate <= 0:
        raise ConfigError(where, f"\"{value}\" is not a positive rate; expected e.g. \"64kbit\"")
    return rate


def positive_size(value: object, where: str) -> int:
    size = parse_size_bytes(value, where)
    if size <= 0:
        raise ConfigError(where, f"\"{value}\" is not a positive size; expected e.g. \"1500B\"")
    return size


def optional_bool(table: dict, key: str, where: str, default: bool) -> bool:
    value = table.get(key, default)
    if not isinstance(value, bool):
        raise ConfigError(f"{where}.{key}", f"{value!r} is not true or false")
    return value


def optional_time(table: dict, key: str, where: str, default_us: int, most_us: int = MAX_TIME_US) -> int:
    """A positive time in µs (the default when the key is absent), at most most_us."""
    if key not in table:
        return default_us
    us = parse_positive_time_us(table[key], f"{where}.{key}")
    if us > most_us:
        raise ConfigError(f"{where}.{key}", f"\"{table[key]}\" is above {format_time_us(most_us)}")
    return us


def positive_int(value: object, where: str, unit: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(where, f"{value!r} is not a positive whole number of {unit}")
    return value


def int_in_range(value: object, low: int, high: int, where: str, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ConfigError(where, f"{value!r} is not {what}; expected a whole number {low}-{high}")
    return value


def parse_dscp(value: object, where: str) -> int:
    if isinstance(value, str):
        if value not in _DSCP_NAMES:
            raise ConfigError(where, f"unknown DSCP name {value!r}; expected EF, BE, AFxy, CSx or a number 0-63")
        return _DSCP_NAMES[value]
    return int_in_range(value, 0, 63, where, "a DSCP value")
