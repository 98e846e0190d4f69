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

from testbed.errors import ConfigError
from testbed.profiles import deep_merge

SHORTHAND_AXES = {"link": "link.profile", "channel": "link.channel", "tcp": "tcp.profile"}
# What a cell may vary: the scenario's name, seed, replications and timeout are the run's.
SETTABLE = ("link", "router", "tcp", "flows")
MAX_CELLS = 10_000
MAX_CELL_ID = 200        # a directory name, with room for rep-NN.partial beside it


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
    axes = [_parse_axis(name, values, f"{where}.{name}") for name, values in matrix.items()]
    _check_no_overlap(axes, where)
    cells = 1
    for axis in axes:
        cells *= len(axis.values)
        if cells > MAX_CELLS:
            raise ConfigError(f"{where}.{axis.name}", f"the axes up to this one make more than {MAX_CELLS} "
                              "cells; split the study into several scenarios")
    return axes


def _check_no_overlap(axes: list[Axis], where: str) -> None:
    """Two axes setting the same key (or one a table inside the other's) would give cells
    whose labels do not say what runs: the later axis silently wins."""
    owner: dict[tuple[str, ...], str] = {}
    for axis in axes:
        paths = {tuple(p.split(".")) for v in axis.values for p in v.settings}
        for path in paths:
            for other_path, other in owner.items():
                short = min(len(path), len(other_path))
                if other != axis.name and path[:short] == other_path[:short]:
                    raise ConfigError(f"{where}.{axis.name}", f"sets {'.'.join(path)}, which axis {other!r} "
                                      f"already sets ({'.'.join(other_path)}); each key may vary on one axis only")
        for path in paths:
            owner.setdefault(path, axis.name)


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
        _check_path(path, where)
        parsed = tuple(AxisValue(_label(v, f"{where}[{i}]"), {path: v}) for i, v in enumerate(values))
    labels = [v.label for v in parsed]
    if len(set(labels)) != len(labels):
        raise ConfigError(where, f"labels must differ, got {labels}")
    return Axis(name, parsed)


def _table_value(value: Mapping[str, Any], where: str) -> AxisValue:
    unknown = set(value) - {"label", "set"}
    if unknown or "label" not in value or not isinstance(value.get("set"), Mapping) or not value["set"]:
        raise ConfigError(where, "expected { label = \"...\", set = { \"key.path\" = value, ... } }")
    for path in value["set"]:
        _check_path(path, f"{where}.set")
    return AxisValue(_label(value["label"], f"{where}.label"), dict(value["set"]))


def _check_path(path: str, where: str) -> None:
    parts = path.split(".")
    if parts[0] not in SETTABLE or "" in parts:
        raise ConfigError(where, f"{path!r} is not a key a cell can vary; expected a dotted key path under "
                          f"{', '.join(SETTABLE)} such as \"link.delay\" (name, seed, replications and "
                          "timeout are the same for every cell)")


def _label(value: object, where: str) -> str:
    if isinstance(value, (dict, list)):
        raise ConfigError(where, f"{value!r} cannot be an axis label; expected a string or number")
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


def expand(base: Mapping[str, Any], axes: list[Axis], where: str = "matrix") -> list[CellSpec]:
    """`where` is like `scenarios/x.toml: matrix`: cell ids must be distinct directory names."""
    cells: list[CellSpec] = []
    seen: dict[str, Mapping[str, str]] = {}
    for combo in itertools.product(*(a.values for a in axes)):
        table = dict(base)
        for value in combo:
            for path, setting in value.settings.items():
                table = deep_merge(table, nested(path, setting))
        labels = {a.name: v.label for a, v in zip(axes, combo)}
        cid = cell_id(labels)
        if cid in seen:
            raise ConfigError(where, f"the cells {dict(seen[cid])} and {labels} both get the id {cid!r} "
                              "(labels differ only in characters an id cannot hold); make the labels differ "
                              "in letters, digits, '.', '+' or '-'")
        if len(cid.encode()) > MAX_CELL_ID:
            raise ConfigError(where, f"the cell id {cid[:60]!r}... is {len(cid.encode())} bytes long; "
                              f"at most {MAX_CELL_ID} (it is a directory name): shorten the axis names or labels")
        seen[cid] = labels
        cells.append(CellSpec(cid, labels, table))
    return cells
