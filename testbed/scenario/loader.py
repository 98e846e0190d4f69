"""Scenario files: load, validate, expand the matrix into fully resolved cells.

Everything is checked before anything is created: a scenario either loads into
typed cells or raises one ConfigError naming the file, the key and what was expected.
See docs/scenarios.md for the format.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from testbed.errors import ConfigError
from testbed.paths import require_profiles
from testbed.scenario.link_check import check_link
from testbed.scenario.cell import ResolvedCell
from testbed.scenario.flows import UdpFlow, parse_flows_section
from testbed.scenario.link_section import parse_channel, parse_link
from testbed.scenario.matrix import CellSpec, expand, parse_axes
from testbed.profiles import ProfileSet, parse_toml, read_text
from testbed.router.directions import Routers
from testbed.router.engines import in_emulator
from testbed.scenario.router_section import parse_router_section
from testbed.scenario.tcp_section import parse_tcp_section
from testbed.scenario.tolerances import KEYS as TOLERANCE_KEYS, Tolerances, parse_tolerances
from testbed.units import MAX_SIZE_BYTES, parse_positive_time_us

TOP_LEVEL_KEYS = {"name", "description", "seed", "replications", "timeout", *TOLERANCE_KEYS,
                  "link", "router", "tcp", "flows", "matrix"}
DEFAULT_TIMEOUT_US = 600_000_000
MAX_REPLICATIONS = 10_000                # per cell
# A scenario's name is the start of its run directory's name: a safe file name, never a path.
SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,99}$")
SAFE_NAME_RULE = ("a safe file name: a letter or digit, then letters, digits, '.', '_', '+' or '-' "
                  "(at most 100 characters, no '/')")

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
    tolerances: Tolerances = Tolerances()

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


def load(path: Path, profiles: Profiles | None = None, base_dir: Path | None = None) -> Scenario:
    """`base_dir`: what relative paths in the scenario (channel traces) are relative to; by
    default the scenario file's directory (a resumed run passes the original one)."""
    path = Path(path)
    if profiles is None:
        require_profiles()
    source = read_text(path)
    table = parse_toml(source, path)
    where = str(path)
    profiles = profiles or Profiles.load()
    _check_top_level(table, where)
    name = safe_name(table.get("name", path.stem), f"{where}: name",
                     given="name" in table)
    description = _string(table.get("description", ""), f"{where}: description")
    seed = _whole(table["seed"], f"{where}: seed", minimum=0)
    replications = _whole(table.get("replications", 1), f"{where}: replications", minimum=1,
                          maximum=MAX_REPLICATIONS)
    timeout_us = _timeout(table.get("timeout"), f"{where}: timeout")
    axes = parse_axes(table.get("matrix", {}), f"{where}: matrix")
    base = _normalise({k: v for k, v in table.items() if k != "matrix"})
    context = _Context(where, profiles, (base_dir or path.parent).absolute(), timeout_us)
    cells = tuple(_resolve(spec, context) for spec in expand(base, axes, f"{where}: matrix"))
    return Scenario(path=path, name=name, description=description, seed=seed,
                    replications=replications, timeout_us=timeout_us, cells=cells, source=source,
                    tolerances=parse_tolerances(table, where))


def safe_name(value: object, where: str, given: bool = True) -> str:
    """A scenario or run name that is safe as (the start of) a directory name."""
    if not isinstance(value, str):
        raise ConfigError(where, f"{value!r} is not a string; expected {SAFE_NAME_RULE}")
    if not SAFE_NAME.match(value):
        origin = "" if given else " (the file name without .toml; give name = \"...\" to choose another)"
        raise ConfigError(where, f"{value!r}{origin} is not {SAFE_NAME_RULE}")
    return value


@dataclass
class _Context:
    """What every cell of one scenario is resolved with."""
    where: str
    profiles: Profiles
    base_dir: Path
    timeout_us: int


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


def _resolve(spec: CellSpec, context: _Context) -> ResolvedCell:
    where = context.where
    cell_where = where if spec.cell_id == "default" else f"{where} (cell {spec.cell_id})"
    table = _normalise(dict(spec.table))      # after the matrix: an axis may set `link = "r2"` too
    link_table = table["link"]
    if not isinstance(link_table, Mapping):
        raise ConfigError(f"{cell_where}: link", "expected a link profile name or a table")
    link_table = context.profiles.links.with_overrides(link_table, f"{cell_where}: link.profile")
    channel = _channel(link_table, context, cell_where)
    link_table = {k: v for k, v in link_table.items() if k != "channel"}
    name = str(table["link"].get("profile", "custom"))
    link = parse_link(link_table, f"{cell_where}: link", name, channel, context.base_dir)
    section = {name: (table[name], f"{cell_where}: {name}") for name in ("router", "tcp", "flows")
               if name in table}
    routers = parse_router_section(*section["router"], link) if "router" in section else Routers()
    check_link(link, in_emulator(routers), cell_where)
    flows = parse_flows_section(*section["flows"], base_dir=context.base_dir) if "flows" in section else ()
    _check_flows(flows, context.timeout_us, f"{cell_where}: flows")
    return ResolvedCell(
        spec.cell_id, spec.labels, link, router=routers.down, router_up=routers.up,
        tcp=parse_tcp_section(*section["tcp"]) if "tcp" in section else None,
        flows=flows,
        table=table)


def _check_flows(flows: tuple, timeout_us: int, where: str) -> None:
    """What the flows section alone cannot see: the scenario's timeout, the servers' limits."""
    for flow in flows:
        if flow.start_us >= timeout_us:
            raise ConfigError(f"{where}.{flow.name}.start", f"{flow.start_us / 1e6:g} s is not before the "
                              f"scenario's timeout ({timeout_us / 1e6:g} s): the flow would never start; "
                              "start it earlier or raise timeout")
        for key, size in flow.unchecked_objects():
            if size > MAX_SIZE_BYTES:
                raise ConfigError(f"{where}.{flow.name}.{key}", f"{size} B is too large; an object "
                                  f"is at most {MAX_SIZE_BYTES} B")


def udp_end_us(flow: UdpFlow) -> int:
    """When a UDP stream's sender ends, from t = 0 (its duration, or its count of datagrams)."""
    if flow.duration_us is not None:
        return flow.start_us + flow.duration_us
    assert flow.count is not None
    return flow.start_us + flow.count * flow.stream.size * 8 * 1_000_000 // flow.stream.rate_bps


def _channel(link_table: Mapping[str, Any], context: _Context, where: str):
    profiles = context.profiles
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
    return parse_channel(table, f"{where}: link.channel", context.base_dir)   # the trace: check_link


def _lossy(link_table: Mapping[str, Any]) -> bool:
    tables = [link_table] + [link_table.get(d, {}) for d in ("down", "up")]
    return any(isinstance(t, Mapping) and isinstance(t.get("error"), Mapping)
               and any(p for p in t["error"].values()) for t in tables)


def _string(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(where, f"{value!r} is not a string")
    return value


def _whole(value: object, where: str, minimum: int, maximum: int = 2**64 - 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
        raise ConfigError(where, f"{value!r} is not a whole number >= {minimum}"
                          + (f" and <= {maximum}" if maximum < 2**63 else ""))
    return value


def _timeout(value: object, where: str) -> int:
    return DEFAULT_TIMEOUT_US if value is None else parse_positive_time_us(value, where)
