"""Scenario files: load, validate, expand the matrix into fully resolved cells.

Everything is checked before anything is created: a scenario either loads into
typed cells or raises one ConfigError naming the file, the key and what was expected.
See docs/scenarios.md for the format.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from .errors import ConfigError
from .link import LinkConfig, parse_channel, parse_link
from .matrix import CellSpec, expand, parse_axes
from .profiles import ProfileSet, load_toml
from .units import parse_time_us

TOP_LEVEL_KEYS = {"name", "description", "seed", "replications", "timeout", "link", "router",
                  "tcp", "flows", "matrix"}
DEFAULT_TIMEOUT_US = 600_000_000

# Parsers of the sections other modules own: section name -> (table, where, cell) -> typed value.
SectionParser = Callable[[Mapping[str, Any], str, "ResolvedCell"], Any]
SECTION_PARSERS: dict[str, SectionParser] = {}


@dataclass(frozen=True)
class ResolvedCell:
    cell_id: str
    labels: Mapping[str, str]
    link: LinkConfig
    sections: Mapping[str, Any] = field(default_factory=dict)   # router, tcp, flows, ...
    table: Mapping[str, Any] = field(default_factory=dict)      # the resolved raw table


@dataclass(frozen=True)
class Scenario:
    path: Path
    name: str
    description: str
    seed: int
    replications: int
    timeout_us: int
    cells: tuple[ResolvedCell, ...]
    source: str

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.source.encode()).hexdigest()


@dataclass(frozen=True)
class Profiles:
    links: ProfileSet
    channels: ProfileSet

    @classmethod
    def load(cls) -> "Profiles":
        return cls(ProfileSet.load("links"), ProfileSet.load("channels"))


def load(path: Path, profiles: Profiles | None = None) -> Scenario:
    _register_section_parsers()
    path = Path(path)
    table = load_toml(path)
    where = str(path)
    profiles = profiles or Profiles.load()
    _check_top_level(table, where)
    axes = parse_axes(table.get("matrix", {}), f"{where}: matrix")
    base = _normalise({k: v for k, v in table.items() if k != "matrix"})
    cells = tuple(_resolve(spec, where, profiles) for spec in expand(base, axes))
    return Scenario(
        path=path,
        name=_string(table.get("name", path.stem), f"{where}: name"),
        description=_string(table.get("description", ""), f"{where}: description"),
        seed=_whole(table["seed"], f"{where}: seed", minimum=0),
        replications=_whole(table.get("replications", 1), f"{where}: replications", minimum=1),
        timeout_us=_timeout(table.get("timeout"), f"{where}: timeout"),
        cells=cells,
        source=path.read_text(),
    )


def _register_section_parsers() -> None:
    """The modules of the other sections register themselves when imported; importing them
    here (not at the top: they import this module) means no caller can forget one."""
    from . import flows, router_section, tcp_section  # noqa: F401


def _check_top_level(table: Mapping[str, Any], where: str) -> None:
    unknown = sorted(set(table) - TOP_LEVEL_KEYS)
    if unknown:
        raise ConfigError(f"{where}: {unknown[0]}", f"unknown key; expected one of {', '.join(sorted(TOP_LEVEL_KEYS))}")
    for key in ("seed", "link"):
        if key not in table:
            raise ConfigError(f"{where}: {key}", "missing")


def _normalise(table: dict[str, Any]) -> dict[str, Any]:
    """`link = "r2"` is short for `[link] profile = "r2"`, likewise tcp and router."""
    for key in ("link", "tcp", "router"):
        if isinstance(table.get(key), str):
            table[key] = {"profile": table[key]}
    return table


def _resolve(spec: CellSpec, where: str, profiles: Profiles) -> ResolvedCell:
    cell_where = where if spec.cell_id == "default" else f"{where} (cell {spec.cell_id})"
    link_table = spec.table["link"]
    if not isinstance(link_table, Mapping):
        raise ConfigError(f"{cell_where}: link", "expected a link profile name or a table")
    link_table = profiles.links.with_overrides(link_table, f"{cell_where}: link.profile")
    channel = _channel(link_table, profiles, cell_where)
    link_table = {k: v for k, v in link_table.items() if k != "channel"}
    name = str(spec.table["link"].get("profile", "custom"))
    link = parse_link(link_table, f"{cell_where}: link", name, channel)
    cell = ResolvedCell(spec.cell_id, spec.labels, link, table=spec.table)
    sections = {name: parser(spec.table[name], f"{cell_where}: {name}", cell)
                for name, parser in SECTION_PARSERS.items() if name in spec.table}
    return ResolvedCell(spec.cell_id, spec.labels, link, sections, spec.table)


def _channel(link_table: Mapping[str, Any], profiles: Profiles, where: str):
    value = link_table.get("channel")
    if value is None:
        if _lossy(link_table):
            raise ConfigError(f"{where}: link.channel", "missing: a link with error probabilities "
                              f"needs a channel (a profile name from channels.toml: "
                              f"{', '.join(profiles.channels.names())}, or a table)")
        value = "always-good"
    if isinstance(value, str):
        value = {"profile": value}
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}: link.channel", "expected a channel profile name or a table")
    table = profiles.channels.with_overrides(value, f"{where}: link.channel.profile")
    return parse_channel(table, f"{where}: link.channel")


def _lossy(link_table: Mapping[str, Any]) -> bool:
    tables = [link_table] + [link_table.get(d, {}) for d in ("down", "up")]
    return any(isinstance(t, Mapping) and isinstance(t.get("error"), Mapping)
               and any(p for p in t["error"].values()) for t in tables)


def _string(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(where, f"{value!r} is not a string")
    return value


def _whole(value: object, where: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(where, f"{value!r} is not a whole number >= {minimum}")
    return value


def _timeout(value: object, where: str) -> int:
    if value is None:
        return DEFAULT_TIMEOUT_US
    us = parse_time_us(value, where)
    if us <= 0:
        raise ConfigError(where, "must be greater than zero")
    return us
