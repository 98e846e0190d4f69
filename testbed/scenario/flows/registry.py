"""The flow kinds, listed once, and a [flows.NAME] table made into the flow of its kind.

A kind is one subclass of FlowBase in a file of its own (http.py, bulk.py, udp.py, command.py, probe.py, flent.py,
browser.py)
that declares everything about it: its keys (KEYS), its workloads.toml profile (PROFILE_KIND,
WORKLOAD_TYPE), its parser (`from_table`), its programs per role, what the analysis knows of it
(ANALYSIS), its `squall show` line, its ETA and its main metrics. FLOW_TYPES is the one list of
them; everything else (the loader, the runner, `show`, the ETA, the status table) asks a flow,
or finds its class here by workloads.json's `kind`.

The keys every kind has (COMMON_KEYS) are parsed here: name, kind, start, dscp/tos, direction and
the workload label, which names a profile of the kind's own PROFILE_KIND.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Mapping

from testbed.errors import ConfigError
from testbed.paths import PROFILE_DIR
from testbed.router.parse import parse_dscp
from testbed.scenario.flows.base import FlowBase
from testbed.scenario.flows.browser import BrowserFlow
from testbed.scenario.flows.bulk import BulkFlow
from testbed.scenario.flows.command import CommandFlow
from testbed.scenario.flows.flent import FlentFlow
from testbed.scenario.flows.http import HttpFlow
from testbed.scenario.flows.probe import ProbeFlow
from testbed.scenario.flows.udp import UdpFlow
from testbed.profiles import ProfileSet
from testbed.units import parse_time_us
from testbed.scenario.workloads import from_table

Flow = HttpFlow | BulkFlow | UdpFlow | CommandFlow | ProbeFlow | FlentFlow | BrowserFlow
FLOW_TYPES: dict[str, type[FlowBase]] = {t.kind: t for t in (HttpFlow, BulkFlow, UdpFlow, CommandFlow, ProbeFlow,
                                                             FlentFlow, BrowserFlow)}
KINDS = tuple(FLOW_TYPES)
DIRECTIONS = ("down", "up")
COMMON_KEYS = frozenset({"kind", "start", "dscp", "tos", "direction", "workload"})
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")


def parse_flows_section(table: Mapping[str, Any], where: str, profile_dir: Path = PROFILE_DIR,
                        base_dir: Path | None = None) -> tuple[Flow, ...]:
    """`where` is like `scenarios/x.toml: flows`; `base_dir`: what files a flow names are relative
    to (the scenario file's directory; None: the current directory)."""
    if not isinstance(table, Mapping) or not table:
        raise ConfigError(where, "expected a table of named flows, e.g. [flows.web] kind = \"http\"")
    flows = []
    for name, flow in table.items():
        flow_where = f"{where}.{name}"
        if not _NAME.match(name):
            raise ConfigError(flow_where, "a flow name starts with a letter, then letters, digits, '_' or '-'")
        if not isinstance(flow, Mapping):
            raise ConfigError(flow_where, f"expected a table with kind = {' | '.join(KINDS)}, found {flow!r}")
        flows.append(parse_flow(name, flow, flow_where, profile_dir, base_dir))
        _one_per_port(flows, flow_where)
    return tuple(flows)


def _one_per_port(flows: list[Flow], where: str) -> None:
    """A kind with one port for all its flows (PORT_PER_FLOW) has at most one flow per cell."""
    new = flows[-1]
    same = [f for f in flows[:-1] if f.kind == new.kind and not new.PORT_PER_FLOW]
    if same:
        raise ConfigError(where, f"a second {new.kind} flow (beside {same[0].name}): both would need port "
                          f"{new.PORT_BASE} at their server host; one {new.kind} flow per cell")


def parse_flow(name: str, table: Mapping[str, Any], where: str, profile_dir: Path = PROFILE_DIR,
               base_dir: Path | None = None) -> Flow:
    kind = table.get("kind")
    if kind not in FLOW_TYPES:
        raise ConfigError(f"{where}.kind", f"{kind!r} is not a flow kind; expected one of {', '.join(KINDS)}")
    flow_type = FLOW_TYPES[kind]
    allowed = (COMMON_KEYS - ({"workload"} if flow_type.PROFILE_KIND is None else set())) | flow_type.KEYS
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise ConfigError(f"{where}.{unknown[0]}", f"unknown key for a {kind} flow; expected one of "
                          f"{', '.join(sorted(allowed))}")
    table = flow_type.resolve_paths(table, base_dir)
    common = dict(name=name, start_us=_start(table, where), tos=_tos(table, where),
                  direction=_direction(table, where))
    return flow_type.from_table(table, where, _profile(table, flow_type, where, profile_dir), common)  # type: ignore[return-value]


def _start(table: Mapping[str, Any], where: str) -> int:
    us = parse_time_us(table.get("start", "0s"), f"{where}.start")
    if us < 0:
        raise ConfigError(f"{where}.start", "must not be negative")
    return us


def _tos(table: Mapping[str, Any], where: str) -> int:
    if "dscp" in table and "tos" in table:
        raise ConfigError(f"{where}.tos", "give dscp or tos, not both")
    if "tos" in table:
        tos = table["tos"]
        if isinstance(tos, bool) or not isinstance(tos, int) or not 0 <= tos <= 255:
            raise ConfigError(f"{where}.tos", f"{tos!r} is not a TOS byte 0-255")
        return tos
    return parse_dscp(table.get("dscp", 0), f"{where}.dscp") << 2


def _direction(table: Mapping[str, Any], where: str) -> str:
    direction = table.get("direction", "down")
    if direction not in DIRECTIONS:
        raise ConfigError(f"{where}.direction", f"{direction!r} is not a direction; expected \"down\" "
                          "(server/sender at the fixed host) or \"up\" (at the mobile host)")
    return direction


def _profile(table: Mapping[str, Any], flow_type: type[FlowBase], where: str, profile_dir: Path) -> Any:
    """The workloads.toml profile named by `workload`, checked to be of the flow's kind; or None."""
    label = table.get("workload")
    if label is None:
        return None
    profiles = ProfileSet.load("workloads", profile_dir)
    if not isinstance(label, str) or label not in profiles.names():
        wanted = flow_type.PROFILE_KIND
        names = [n for n in profiles.names() if profiles.tables[n].get("kind") == wanted]
        raise ConfigError(f"{where}.workload", f"{label!r} is not a {wanted} workload of "
                          f"{profiles.path.name}; expected one of {', '.join(names)}")
    workload = from_table(label, profiles.resolve(label, f"{where}.workload"), f"{profiles.path}: {label}")
    assert flow_type.WORKLOAD_TYPE is not None      # a kind without a profile has no `workload` key
    if not isinstance(workload, flow_type.WORKLOAD_TYPE):
        raise ConfigError(f"{where}.workload", f"{label!r} is a {type(workload).__name__} workload, "
                          f"not one for a {flow_type.kind} flow")
    return workload
