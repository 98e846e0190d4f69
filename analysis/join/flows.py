"""Which flow of the scenario each measured connection belongs to.

A replication's `workloads.json` (written by testbed/run/replication.py) has one entry per
flow: `{"web": {"kind": "http", "port": 8080, "direction": "down", "start_us": 0,
"tos": 0, "client": {"argv": [...], "exit_code": 0, "summary": {...}}, ...}}` with the
generators' JSON summaries (workloads/README.md). The summaries name the endpoints
(`local`, `remote`, `listen`, per-connection `local` / `peer`), so a connection or UDP flow
is matched to its flow by its client endpoint first, then by its server endpoint, then by
the flow's server port. Also accepted: a summary directly under the flow name, a list of
summaries, or a list of `{"flow": name, ...}` objects.

A `command` flow (any program, testbed/scenario/flows/command.py) has no summary: its TCP connections
and UDP flows are matched by the flow's port (`{port}` in its command lines) at either end. A
`browser` flow's by its replay's ports at either end: DNS (53), HTTP (80), HTTPS (443).

Without `workloads.json` connections are named by protocol and server endpoint
(`tcp 198.18.1.1:8080`) with kind `tcp` / `udp`: the report then uses its generic table."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analysis.errors import AnalysisInputError, read_json
from analysis.results.directory import WORKLOADS_FILE as WORKLOADS_NAME

@dataclass(frozen=True)
class KindTraits:
    """What the analysis knows of a flow kind. The analysis reads files only (it imports nothing
    of testbed), so this table is where a kind's analysis roles are declared; testbed's flow
    kinds (testbed/scenario/flows/) refer to their entry (`FlowBase.ANALYSIS`) and take their
    program's name from it, and a test keeps the two registries to the same kinds."""
    tool: str | None                  # the generator whose summaries name the kind; None: any program
    protocols: tuple[str, ...]        # the transports its connections or UDP flows use
    client_port: bool = False         # matched by its port at the client end too (a command's own
                                      # client may listen: iperf3 -u's data comes from the server's port)
    service_ports: tuple[int, ...] = ()   # its servers' fixed ports besides the flow's, at either end
                                          # (a browser's replay: DNS, HTTP and HTTPS)


FLOW_KINDS = {
    "http": KindTraits("squall-http", ("tcp",)),
    "bulk": KindTraits("squall-bulk", ("tcp",)),
    "udp": KindTraits("squall-udp", ("udp",)),
    "command": KindTraits(None, ("tcp", "udp"), client_port=True),
    "probe": KindTraits("irtt", ("udp",), client_port=True),   # irtt's replies come from its port
    "flent": KindTraits("flent", ("udp",), client_port=True),  # its irtt runner's datagrams
    "browser": KindTraits(None, ("tcp", "udp"), service_ports=(53, 80, 443)),   # Chromium's to its replay
}
KINDS = tuple(FLOW_KINDS)


def kind_of_tool(tool: object) -> str | None:
    """The kind whose generator wrote a summary with this `tool`; None: no kind's."""
    return next((kind for kind, t in FLOW_KINDS.items() if t.tool is not None and t.tool == tool), None)


def endpoint_text(e: tuple[str, int]) -> str:
    """The generators' spelling of an endpoint: `addr:port`, `[v6]:port`."""
    return f"[{e[0]}]:{e[1]}" if ":" in e[0] else f"{e[0]}:{e[1]}"


@dataclass
class FlowSpec:
    name: str
    kind: str                                   # http | bulk | udp | command | probe | flent
    summaries: list[dict[str, Any]] = field(default_factory=list)
    clients: set[str] = field(default_factory=set)   # client / source endpoints
    servers: set[str] = field(default_factory=set)   # server / destination endpoints
    port: int | None = None                          # the server's / receiver's port
    start_us: int | None = None                      # offset from the emulator's t = 0

    @property
    def http_version(self) -> str | None:
        return next((str(s["http"]) for s in self.summaries if "http" in s), None)

    @property
    def workload(self) -> str | None:
        return next((str(s["workload"]) for s in self.summaries if s.get("workload")), None)

    @property
    def ok(self) -> bool:
        return all(s.get("ok", True) for s in self.summaries)

    def summary(self, key: str) -> Any:
        """The first summary value of `key` (e.g. `response_time_us`)."""
        return next((s[key] for s in self.summaries if key in s), None)


def _summaries_of(value: Any) -> list[dict[str, Any]]:
    """Generator summaries anywhere inside a flow's entry (argv lists and the like are
    skipped; a program that printed no summary has `"summary": null`)."""
    if isinstance(value, list):
        return [s for item in value for s in _summaries_of(item)]
    if not isinstance(value, dict):
        return []
    if "tool" in value:
        return [value]
    return [s for item in value.values() for s in _summaries_of(item)]


def _add_endpoints(flow: FlowSpec, s: dict[str, Any]) -> None:
    mode = s.get("mode")
    if "remote" in s:
        flow.servers.add(str(s["remote"]))
    if "listen" in s:
        flow.servers.add(str(s["listen"]))
    if "local" in s and mode != "recv":
        flow.clients.add(str(s["local"]))
    for conn in s.get("connections") or []:
        if isinstance(conn, dict):
            if "local" in conn:
                flow.clients.add(str(conn["local"]))
            if "peer" in conn:
                flow.clients.add(str(conn["peer"]))


def parse_workloads(data: Any, where: str) -> list[FlowSpec]:
    if isinstance(data, list):
        items = [(str(item.get("flow", item.get("name", f"flow{i}"))), item)
                 for i, item in enumerate(data) if isinstance(item, dict)]
    elif isinstance(data, dict):
        items = list(data.items())
    else:
        raise AnalysisInputError(f"{where}: expected an object of flows or a list, got "
                                 f"{type(data).__name__}")
    flows = []
    for name, value in items:
        summaries = _summaries_of(value)
        declared = value.get("kind") if isinstance(value, dict) else None
        kinds = {declared} if declared in FLOW_KINDS else (
            {kind_of_tool(s.get("tool")) for s in summaries} - {None})
        if len(kinds) != 1:
            tools = ", ".join(t.tool for t in FLOW_KINDS.values() if t.tool is not None)
            raise AnalysisInputError(f"{where}: {name}: expected a \"kind\" ({', '.join(FLOW_KINDS)}) "
                                     f"or summaries of one generator ({tools}), got tools "
                                     f"{sorted(str(s.get('tool')) for s in summaries)}")
        flow = FlowSpec(str(name), kinds.pop(), summaries)
        port = value.get("port") if isinstance(value, dict) else None
        flow.port = port if isinstance(port, int) else None
        start = value.get("start_us") if isinstance(value, dict) else None
        flow.start_us = start if isinstance(start, int) else None
        for s in summaries:
            _add_endpoints(flow, s)
        flows.append(flow)
    return flows


def read_workloads(rep_dir: Path) -> list[FlowSpec] | None:
    """The flows of a replication, or None when it has no workloads.json."""
    path = rep_dir / WORKLOADS_NAME
    if not path.exists():
        return None
    return parse_workloads(read_json(path), str(path))


@dataclass(frozen=True)
class FlowMatch:
    name: str
    kind: str   # http | bulk | udp | command | probe | flent; tcp or udp for one of no known flow


def match_flow(flows: list[FlowSpec] | None, proto: str, client: tuple[str, int],
               server: tuple[str, int]) -> FlowMatch:
    """The flow a connection (client -> server) or UDP flow (src -> dst) belongs to."""
    c, s = endpoint_text(client), endpoint_text(server)
    candidates = [f for f in flows or [] if proto in FLOW_KINDS[f.kind].protocols]
    by_client = [f for f in candidates if c in f.clients]
    by_server = [f for f in candidates if s in f.servers]
    by_port = [f for f in candidates if f.port == server[1]]
    by_port += [f for f in candidates if FLOW_KINDS[f.kind].client_port and f.port == client[1]]
    by_port += [f for f in candidates if {server[1], client[1]} & set(FLOW_KINDS[f.kind].service_ports)]
    for found in (by_client, by_server, by_port):
        if found:
            return FlowMatch(found[0].name, found[0].kind)
    return FlowMatch(f"{proto} {s}", proto)
