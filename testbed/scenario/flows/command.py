"""The `command` flow kind: any program as a flow (curl, iperf3, ...), its command lines with
placeholders (testbed/scenario/argv_template.py); a server command line of its own, or the
per-run nginx serving objects (`serve`), or nothing on the server side."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from testbed.errors import ConfigError
from testbed.scenario import argv_template
from testbed.scenario.flows.base import FlowBase
from testbed.scenario.flows.running import TCP, UDP, LinkPackets, Readiness
from testbed.scenario.flows.third_party import third_party_problem
from testbed.scenario.flows.values import sizes
from testbed.scenario.link_section import LinkConfig
from testbed.units import MAX_SIZE_BYTES, format_size, format_time_us, parse_time_us
from testbed.scenario.workloads import object_url

SERVE_MISSING = "expected a list of object sizes, e.g. [\"100kB\", 2096] (integers are bytes)"


@dataclass(frozen=True)
class CommandWorkload:
    """What a command flow runs, for workloads.json's `workload`: its client program's name."""
    label: str


# A command flow's placeholders (docs/runner.md); `url`, `url0`, `url1`, ... only with `serve`.
COMMAND_PLACEHOLDERS = {
    "server_address": "the server host's testbed address",
    "client_address": "the client host's testbed address",
    "port": "the flow's port (7001 + i for flow i in file order)",
    "server": "server_address:port ([address]:port for IPv6)",
    "tos": "the flow's TOS byte (dscp << 2), a decimal number",
    "dscp": "the flow's DSCP, a decimal number",
    "timeout_s": "the scenario's timeout in seconds",
}


@dataclass(frozen=True)
class CommandFlow(FlowBase):
    """Any program as a flow: `client` runs on the client host from the flow's start and its end
    ends the flow (exit status 0: ok); `server` (optional) runs on the server host from before
    t = 0, ready when a socket listens on the flow's port (or after `ready`), and is stopped
    after the flow; or `serve` has the per-run nginx serve objects of these sizes on the port
    (`{url}`, `{url0}`, ...). Both command lines take the placeholders of COMMAND_PLACEHOLDERS;
    squall marks none of their packets itself (`{tos}` passes the flow's TOS)."""
    client: tuple[str, ...]
    server: tuple[str, ...] | None = None
    serve: tuple[int, ...] = ()
    ready_delay_us: int | None = None       # None: ready when a socket listens on the port
    kind: str = "command"

    KEYS = frozenset({"client", "server", "serve", "ready"})
    PROFILE_KIND = None                     # no `workload`: what it runs is its command lines
    WORKLOAD_TYPE = None
    TITLE = "command"
    ROLES = ("client", "server")
    ACTIVE_SENDS = False                    # down: the server at the fixed host, like http
    PORT_BASE = 7001
    METRICS_ROLE = "client"
    STARTS_ITSELF = False

    @classmethod
    def from_table(cls, table: Mapping[str, Any], where: str, workload: None,
                   common: dict[str, Any]) -> CommandFlow:
        if "server" in table and "serve" in table:
            raise ConfigError(f"{where}.serve", "give a server command line or serve = [sizes] (the per-run "
                              "nginx), not both")
        serve: tuple[int, ...] = ()
        if "serve" in table:
            serve = sizes(table["serve"], f"{where}.serve", missing=SERVE_MISSING, largest=MAX_SIZE_BYTES)
        known = set(COMMAND_PLACEHOLDERS) | ({"url"} | {f"url{i}" for i in range(len(serve))} if serve else set())
        if "client" not in table:
            raise ConfigError(f"{where}.client", "missing: a command flow needs the client's command line, e.g. "
                              "client = [\"curl\", \"-o\", \"/dev/null\", \"{url}\"]")
        client = argv_template.parse(table["client"], f"{where}.client", known)
        server = None if "server" not in table else argv_template.parse(table["server"], f"{where}.server",
                                                                          COMMAND_PLACEHOLDERS)
        ready = table.get("ready", "listen")
        if "ready" in table and server is None:
            raise ConfigError(f"{where}.ready", "applies to a flow with a server command line only")
        delay = None
        if ready != "listen":
            delay = parse_time_us(ready, f"{where}.ready") if isinstance(ready, str) else -1
            if not 0 < delay <= 60_000_000:
                raise ConfigError(f"{where}.ready", f"{ready!r}: expected \"listen\" (a socket listens on the "
                                  "flow's port at the server host) or a time after the server's start, up to 60s")
        return cls(**common, client=client, server=server, serve=serve, ready_delay_us=delay)


    @property
    def workload(self) -> CommandWorkload:       # type: ignore[override]
        return CommandWorkload(Path(self.client[0]).name)

    def third_party_programs(self) -> tuple[str, ...]:
        return (self.client[0],) + ((self.server[0],) if self.server else ())

    def values(self, server_address: str, port: int, client_address: str, timeout_us: int) -> dict[str, str]:
        """Each placeholder's value in one replication."""
        server = f"[{server_address}]:{port}" if ":" in server_address else f"{server_address}:{port}"
        values = {"server_address": server_address, "client_address": client_address, "port": str(port),
                  "server": server, "tos": str(self.tos), "dscp": str(self.dscp), "timeout_s": f"{timeout_us / 1e6:g}"}
        for i, size in enumerate(self.serve):
            values[f"url{i}"] = f"http://{server}{object_url(i, size)}"
        if self.serve:
            values["url"] = values["url0"]
        return values

    def active_argv(self, program: Callable[[str], str], peer: str, *, offset_us: int, log: Path,
                    timeout_us: int, local: str = "") -> list[str]:
        address, port = _split_endpoint(peer)
        return argv_template.fill(self.client, self.values(address, port, local, timeout_us))

    def _active_args(self, peer: str, timeout_us: int) -> list[str]:
        return []

    def passive_argv(self, program: Callable[[str], str], listen: str, log: Path, *,
                     peer: str = "", timeout_us: int = 0) -> list[str] | None:
        if self.server is None:
            return None
        address, port = _split_endpoint(listen)
        return argv_template.fill(self.server, self.values(address, port, peer, timeout_us))

    def readiness(self) -> Readiness:
        if self.ready_delay_us is None:
            return Readiness(line=None, listen=True)
        return Readiness(line=None, delay_us=self.ready_delay_us)

    def web_pages(self) -> tuple[tuple[int, ...], ...]:
        return (self.serve,) if self.serve else ()

    def _planned_us(self, link: LinkConfig, timeout_us: int) -> int:
        # the objects it is served, if any (it may fetch them more than once); any other: its timeout
        return self._transfer_us(link, sum(self.serve), 4) if self.serve else timeout_us

    def link_packets(self, index: int) -> list[LinkPackets]:
        # any program: taken to use its port and its TOS, over TCP or UDP, either way
        port = self.port(index)
        return [LinkPackets(d, "packets", proto, self.tos, sport, dport)
                for d in ("down", "up") for proto in (TCP, UDP) for sport, dport in ((None, port), (port, None))]

    def _what(self) -> str:
        what = f"client `{_shown(self.client)}`"
        if self.server is not None:
            ready = "once it listens on its port" if self.ready_delay_us is None else \
                f"ready {format_time_us(self.ready_delay_us)} after its start"
            what += f", server `{_shown(self.server)}` ({ready})"
        elif self.serve:
            what += f", nginx serving {' + '.join(format_size(s) for s in self.serve)}"
        return what

    def log_files(self) -> list[tuple[str, str]]:
        return []           # its stdout and stderr are the record (<flow>.<role>.stdout, .stderr)

    def summary(self, stdout: str) -> dict | None:
        return None         # any program: its output stays in its files

    def problem(self, role: str, code: int | None, summary: Mapping[str, Any] | None, *, stopped: bool,
                stderr: str) -> str | None:
        return third_party_problem(role == self.ROLES[1] and stopped, code, stderr)

    @staticmethod
    def _metrics(summary: Mapping[str, Any]) -> dict[str, float]:
        return {}

    @classmethod
    def main_metrics(cls, entry: Mapping[str, Any]) -> dict[str, float]:
        run_time = (entry.get(cls.METRICS_ROLE) or {}).get("run_time_us")
        return {"run time": run_time / 1e6} if isinstance(run_time, int) else {}


def _shown(argv: tuple[str, ...]) -> str:
    """A command line on one line: arguments with spaces, quotes or control characters as JSON strings."""
    return " ".join(json.dumps(a) if not a or re.search(r"[\s\"'\\]", a) else a for a in argv)


def _split_endpoint(endpoint: str) -> tuple[str, int]:
    """`addr:port` or `[v6]:port` -> (addr, port)."""
    address, _, port = endpoint.rpartition(":")
    return address.strip("[]"), int(port)
