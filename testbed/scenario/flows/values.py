"""The values a flow's keys take, parsed and checked the same way by every kind: flags, whole
numbers, lists of object sizes, and the rule that a workload label and the workload's own keys
exclude each other. Errors name the key path (`flows.web.count`)."""
from __future__ import annotations

from typing import Any, Mapping

from testbed.errors import ConfigError
from testbed.units import parse_size_bytes


def exclusive(table: Mapping[str, Any], where: str, keys: tuple[str, ...]) -> None:
    given = [k for k in keys if k in table]
    if "workload" in table and given:
        raise ConfigError(f"{where}.{given[0]}", "give a workload label or the workload's own keys, not both")


def flag(table: Mapping[str, Any], key: str, where: str) -> bool:
    value = table.get(key, False)
    if not isinstance(value, bool):
        raise ConfigError(f"{where}.{key}", f"{value!r} is not true or false")
    return value


def whole(value: object, where: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ConfigError(where, f"{value!r} is not a whole number from {low} to {high}")
    return value


def sizes(value: object, where: str, *, missing: str, largest: int | None = None) -> tuple[int, ...]:
    """A non-empty list of positive object sizes (integers are bytes), each at most `largest` when
    given; `missing`: the message for anything else."""
    if not isinstance(value, list) or not value:
        raise ConfigError(where, missing)
    found = []
    for i, size in enumerate(value):
        n = size if isinstance(size, int) and not isinstance(size, bool) else parse_size_bytes(size, f"{where}[{i}]")
        if n <= 0 or (largest is not None and n > largest):
            limit = "" if largest is None else f" of at most {largest} B"
            raise ConfigError(f"{where}[{i}]", f"{size!r} must be a positive size{limit}")
        found.append(n)
    return tuple(found)
