"""Matrix expansion: a scenario's named axes, crossed into cells.

    [matrix]
    link = ["e0", "r2"]                  # shorthand axis: sets link.profile
    "flows.web.http" = ["1.0", "1.1"]    # any dotted key path
    [[matrix.workload]]                  # an axis whose values set several keys
    label = "s+2s"
    set = { "flows.web.workload" = "s+2s", "link.channel" = "iip-short" }

Axes cross in the order written; each cell is the scenario with its axis values set.
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any, Mapping

from .errors import ConfigError
from .profiles import deep_merge

SHORTHAND_AXES = {"link": "link.profile", "channel": "link.channel", "tcp": "tcp.profile"}


@dataclass(frozen=True)
class AxisValue:
    label: str
    settings: Mapping[str, Any]      # dotted key path -> value


@dataclass(frozen=True)
class Axis:
    name: str
    values: tuple[AxisValue, ...]


@dataclass(frozen=True)
class CellSpec:
    cell_id: str
    labels: Mapping[str, str]        # axis name -> label, in axis order
    table: Mapping[str, Any]         # the scenario table with this cell's settings applied


def parse_axes(matrix: object, where: str) -> list[Axis]:
    if not isinstance(matrix, Mapping):
        raise ConfigError(where, "expected a table of axes")
    return [_parse_axis(name, values, f"{where}.{name}") for name, values in matrix.items()]


def _parse_axis(name: str, values: object, where: str) -> Axis:
    if not isinstance(values, list) or not values:
        raise ConfigError(where, "expected a non-empty list of values")
    if all(isinstance(v, Mapping) for v in values):
        parsed = tuple(_table_value(v, f"{where}[{i}]") for i, v in enumerate(values))
    elif any(isinstance(v, Mapping) for v in values):
        raise ConfigError(where, "mixes tables and plain values; use one form per axis")
    else:
        path = SHORTHAND_AXES.get(name, name)
        if "." not in path:
            raise ConfigError(where, f"unknown axis; a plain-valued axis is one of "
                              f"{', '.join(SHORTHAND_AXES)} or a dotted key path such as \"flows.web.http\"")
        parsed = tuple(AxisValue(_label(v), {path: v}) for v in values)
    labels = [v.label for v in parsed]
    if len(set(labels)) != len(labels):
        raise ConfigError(where, f"labels must differ, got {labels}")
    return Axis(name, parsed)


def _table_value(value: Mapping[str, Any], where: str) -> AxisValue:
    unknown = set(value) - {"label", "set"}
    if unknown or "label" not in value or not isinstance(value.get("set"), Mapping) or not value["set"]:
        raise ConfigError(where, "expected { label = \"...\", set = { \"key.path\" = value, ... } }")
    return AxisValue(_label(value["label"]), dict(value["set"]))


def _label(value: object) -> str:
    if isinstance(value, (dict, list)):
        raise ConfigError("matrix", f"{value!r} cannot be an axis label")
    return str(value).lower() if isinstance(value, bool) else str(value)


def nested(path: str, value: Any) -> dict[str, Any]:
    """"a.b.c", v -> {"a": {"b": {"c": v}}}"""
    table: Any = value
    for key in reversed(path.split(".")):
        table = {key: table}
    return table


_UNSAFE = re.compile(r"[^A-Za-z0-9.+-]+")


def cell_id(labels: Mapping[str, str]) -> str:
    """A directory-safe, readable id such as link-r2_tcp-baseline_http-1.1."""
    if not labels:
        return "default"
    parts = (f"{axis.split('.')[-1]}-{label}" for axis, label in labels.items())
    return "_".join(_UNSAFE.sub("-", p) for p in parts)


def expand(base: Mapping[str, Any], axes: list[Axis]) -> list[CellSpec]:
    cells = []
    for combo in itertools.product(*(a.values for a in axes)):
        table = dict(base)
        for value in combo:
            for path, setting in value.settings.items():
                table = deep_merge(table, nested(path, setting))
        labels = {a.name: v.label for a, v in zip(axes, combo)}
        cells.append(CellSpec(cell_id(labels), labels, table))
    return cells
