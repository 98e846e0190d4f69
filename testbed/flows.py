"""The `[flows]` section: the named traffic flows of a scenario (docs/runner.md).

    [flows.web]
    kind = "http"            # http | bulk | udp
    workload = "s+2s"        # a label of workloads.toml, or objects = [6288, 2096, 2096]
    http = "1.0"             # "1.0" (parallel = 4) | "1.1" (persistent = 1|2, pipeline)
    start = "0s"             # offset from the emulator's start command (t = 0)
    dscp = 0                 # or tos = 0..255

Importing this module registers `parse_flows_section` as the loader's parser of `flows`;
`cell.sections["flows"]` is then a tuple of HttpFlow / BulkFlow / UdpFlow in file order.
Every mistake is a ConfigError naming the key path (`flows.web.http`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from .errors import ConfigError
from .profiles import PROFILE_DIR, ProfileSet
from .router_config import parse_dscp
from .scenario import SECTION_PARSERS, ResolvedCell
from .units import parse_size_bytes, parse_time_us
from .workload_profiles import BulkTransfer, CbrStream, HttpPage, from_table

KINDS = ("http", "bulk", "udp")
DIRECTIONS = ("down", "up")
COMMON_KEYS = {"kind", "start", "dscp", "tos", "direction", "workload"}
KIND_KEYS = {
    "http": {"objects", "http", "parallel", "persistent", "pipeline", "request_size"},
    "bulk": {"count", "length", "nodelay"},
    "udp": {"size", "rate", "duration", "count"},
}
HTTP_VERSIONS = ("1.0", "1.1")
DEFAULT_BULK = (90, 2096)       # IIP report 5.2: 90 buffers of 2096 B
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
# workloads.toml calls a UDP stream "cbr"
_PROFILE_KIND = {"http": "http", "bulk": "bulk", "udp": "cbr"}


@dataclass(frozen=True)
class FlowBase:
    name: str
    start_us: int               # offset from t = 0 (the emulator's START)
    tos: int                    # IP TOS byte (DSCP << 2)
    direction: str              # down: server/sender at the fixed host; up: at the mobile host

    @property
    def dscp(self) -> int:
        return self.tos >> 2


@dataclass(frozen=True)
class HttpFlow(FlowBase):
    page: HttpPage
    http: str                   # "1.0" | "1.1"
    parallel: int               # HTTP/1.0: connections open at a time
    persistent: int             # HTTP/1.1: persistent connections (1 or 2)
    pipeline: bool
    request_size: int
    kind: str = "http"


@dataclass(frozen=True)
class BulkFlow(FlowBase):
    transfer: BulkTransfer
    nodelay: bool
    kind: str = "bulk"


@dataclass(frozen=True)
class UdpFlow(FlowBase):
    stream: CbrStream
    duration_us: int | None
    count: int | None
    kind: str = "udp"


Flow = HttpFlow | BulkFlow | UdpFlow


def parse_flows_section(table: Mapping[str, Any], where: str, cell: ResolvedCell | None = None,
                        profile_dir: Path = PROFILE_DIR) -> tuple[Flow, ...]:
    """`where` is like `scenarios/x.toml: flows`."""
    if not isinstance(table, Mapping) or not table:
        raise ConfigError(where, "expected a table of named flows, e.g. [flows.web] kind = \"http\"")
    flows = []
    for name, flow in table.items():
        flow_where = f"{where}.{name}"
        if not _NAME.match(name):
            raise ConfigError(flow_where, "a flow name starts with a letter, then letters, digits, '_' or '-'")
        if not isinstance(flow, Mapping):
            raise ConfigError(flow_where, f"expected a table with kind = {' | '.join(KINDS)}, found {flow!r}")
        flows.append(parse_flow(name, flow, flow_where, profile_dir))
    return tuple(flows)


def parse_flow(name: str, table: Mapping[str, Any], where: str, profile_dir: Path = PROFILE_DIR) -> Flow:
    kind = table.get("kind")
    if kind not in KINDS:
        raise ConfigError(f"{where}.kind", f"{kind!r} is not a flow kind; expected one of {', '.join(KINDS)}")
    allowed = COMMON_KEYS | KIND_KEYS[kind]
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise ConfigError(f"{where}.{unknown[0]}", f"unknown key for a {kind} flow; expected one of "
                          f"{', '.join(sorted(allowed))}")
    common = dict(name=name, start_us=_start(table, where), tos=_tos(table, where),
                  direction=_direction(table, where))
    workload = _profile(table, kind, where, profile_dir)
    return _PARSERS[kind](table, where, workload, common)


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


def _profile(table: Mapping[str, Any], kind: str, where: str, profile_dir: Path) -> Any:
    """The workloads.toml profile named by `workload`, checked to be of the flow's kind; or None."""
    label = table.get("workload")
    if label is None:
        return None
    profiles = ProfileSet.load("workloads", profile_dir)
    if not isinstance(label, str) or label not in profiles.names():
        wanted = _PROFILE_KIND[kind]
        names = [n for n in profiles.names() if profiles.tables[n].get("kind") == wanted]
        raise ConfigError(f"{where}.workload", f"{label!r} is not a {wanted} workload of "
                          f"{profiles.path.name}; expected one of {', '.join(names)}")
    workload = from_table(label, profiles.resolve(label, f"{where}.workload"), f"{profiles.path}: {label}")
    expected = {"http": HttpPage, "bulk": BulkTransfer, "udp": CbrStream}[kind]
    if not isinstance(workload, expected):
        raise ConfigError(f"{where}.workload", f"{label!r} is a {type(workload).__name__} workload, "
                          f"not one for a {kind} flow")
    return workload


def _exclusive(table: Mapping[str, Any], where: str, keys: tuple[str, ...]) -> None:
    given = [k for k in keys if k in table]
    if "workload" in table and given:
        raise ConfigError(f"{where}.{given[0]}", "give a workload label or the workload's own keys, not both")


def _http(table: Mapping[str, Any], where: str, workload: HttpPage | None, common: dict) -> HttpFlow:
    _exclusive(table, where, ("objects",))
    if workload is None:
        workload = HttpPage("custom", _objects(table.get("objects"), f"{where}.objects"))
    version = table.get("http", "1.0")
    if version not in HTTP_VERSIONS:
        raise ConfigError(f"{where}.http", f"{version!r} is not an HTTP version; expected \"1.0\" or \"1.1\" "
                          "(a string)")
    if version == "1.0":
        for key in ("persistent", "pipeline"):
            if key in table:
                raise ConfigError(f"{where}.{key}", "applies to http = \"1.1\" only")
    elif "parallel" in table:
        raise ConfigError(f"{where}.parallel", "applies to http = \"1.0\" only")
    pipeline = table.get("pipeline", False)
    if not isinstance(pipeline, bool):
        raise ConfigError(f"{where}.pipeline", f"{pipeline!r} is not true or false")
    request_size = parse_size_bytes(table.get("request_size", "350B"), f"{where}.request_size")
    return HttpFlow(**common, page=workload, http=version,
                    parallel=_whole(table.get("parallel", 4), f"{where}.parallel", 1, 64),
                    persistent=_whole(table.get("persistent", 1), f"{where}.persistent", 1, 2),
                    pipeline=pipeline, request_size=request_size)


def _objects(value: object, where: str) -> tuple[int, ...]:
    if not isinstance(value, list) or not value:
        raise ConfigError(where, "missing: give workload = \"s+2s\" (a label) or objects = [6288, 2096, ...] "
                          "(sizes in bytes, main object first)")
    sizes = []
    for i, size in enumerate(value):
        n = size if isinstance(size, int) and not isinstance(size, bool) else parse_size_bytes(size, f"{where}[{i}]")
        if n <= 0:
            raise ConfigError(f"{where}[{i}]", f"{size!r} must be a positive size")
        sizes.append(n)
    return tuple(sizes)


def _bulk(table: Mapping[str, Any], where: str, workload: BulkTransfer | None, common: dict) -> BulkFlow:
    _exclusive(table, where, ("count", "length"))
    if workload is None:
        count = _whole(table.get("count", DEFAULT_BULK[0]), f"{where}.count", 1, 10**9)
        length = parse_size_bytes(table.get("length", f"{DEFAULT_BULK[1]}B"), f"{where}.length")
        if length <= 0:
            raise ConfigError(f"{where}.length", "must be a positive size")
        workload = BulkTransfer("custom", count, length)
    nodelay = table.get("nodelay", False)
    if not isinstance(nodelay, bool):
        raise ConfigError(f"{where}.nodelay", f"{nodelay!r} is not true or false")
    return BulkFlow(**common, transfer=workload, nodelay=nodelay)


def _udp(table: Mapping[str, Any], where: str, workload: CbrStream | None, common: dict) -> UdpFlow:
    _exclusive(table, where, ("size", "rate"))
    if workload is None:
        missing = [k for k in ("size", "rate") if k not in table]
        if missing:
            raise ConfigError(f"{where}.{missing[0]}", "missing: a udp flow needs size and rate (or a cbr workload)")
        workload = from_table("custom", {"kind": "cbr", "size": table["size"], "rate": table["rate"]}, where)
    duration = table.get("duration")
    duration_us = None if duration is None else parse_time_us(duration, f"{where}.duration")
    if duration_us is not None and duration_us <= 0:
        raise ConfigError(f"{where}.duration", "must be greater than zero")
    count = None if "count" not in table else _whole(table["count"], f"{where}.count", 1, 10**9)
    if duration_us is None and count is None:
        raise ConfigError(f"{where}.duration", "missing: a udp flow needs a duration (\"60s\") or a count")
    return UdpFlow(**common, stream=workload, duration_us=duration_us, count=count)


def _whole(value: object, where: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ConfigError(where, f"{value!r} is not a whole number from {low} to {high}")
    return value


_PARSERS: dict[str, Callable[..., Flow]] = {"http": _http, "bulk": _bulk, "udp": _udp}

SECTION_PARSERS["flows"] = parse_flows_section
