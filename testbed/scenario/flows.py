"""The `[flows]` section: the named traffic flows of a scenario (docs/runner.md).

    [flows.web]
    kind = "http"            # http | bulk | udp | command
    workload = "s+2s"        # a label of workloads.toml, or objects = [6288, 2096, 2096]
    http = "1.0"             # "1.0" (parallel = 4) | "1.1" (persistent = 1|2, pipeline)
    start = "0s"             # offset from the emulator's start command (t = 0)
    dscp = 0                 # or tos = 0..255

`parse_flows_section` makes the cell's `flows`, a tuple of HttpFlow / BulkFlow / UdpFlow /
CommandFlow in file order (a command flow runs any program; its command lines with placeholders:
testbed/scenario/argv_template.py).
Every mistake is a ConfigError naming the key path (`flows.web.http`).

Each kind also answers what running it takes (FlowBase): its roles and their hosts, its
workload, its programs' command lines and log files, when its server is ready, how to judge
its programs' endings, and the main metrics of their summaries; testbed/run/ asks, it never
tests a flow's kind. FLOW_TYPES finds a kind's class by its name (workloads.json's `kind`).
"""
from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ClassVar, Mapping

from testbed.errors import ConfigError
from testbed.paths import PROFILE_DIR
from testbed.scenario import argv_template
from testbed.scenario.link_section import LinkConfig
from testbed.scenario.profiles import ProfileSet
from testbed.router.values import parse_dscp
from testbed.router.plan import PROTOCOL_NUMBERS
from testbed.scenario.units import (MAX_SIZE_BYTES, format_rate_bps, format_size, format_time_us, parse_size_bytes,
                                    parse_time_us)
from testbed.scenario.workloads import BulkTransfer, CbrStream, HttpPage, Workload, from_table, object_url

KINDS = ("http", "bulk", "udp", "command")
DIRECTIONS = ("down", "up")
COMMON_KEYS = {"kind", "start", "dscp", "tos", "direction", "workload"}
KIND_KEYS = {
    "http": {"objects", "http", "parallel", "persistent", "pipeline", "request_size", "inline_after",
             "delayed_acks"},
    "bulk": {"count", "length", "nodelay", "delayed_acks"},
    "udp": {"size", "rate", "rate_counts", "duration", "count"},
    "command": {"client", "server", "serve", "ready"},
}
HTTP_VERSIONS = ("1.0", "1.1")
DEFAULT_BULK = (90, 2096)       # IIP report 5.2: 90 buffers of 2096 B
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
TCP, UDP = PROTOCOL_NUMBERS["tcp"], PROTOCOL_NUMBERS["udp"]
# workloads.toml calls a UDP stream "cbr"
_PROFILE_KIND = {"http": "http", "bulk": "bulk", "udp": "cbr", "command": "command"}


# squall-http gives up on its own only after the runner's deadline (the scenario's timeout): the
# runner then records `timeout`, a result of the link, and stops the client, which prints what
# it had; a client giving up a few ms before the runner looked would make it `failed`.
CLIENT_TIMEOUT_GRACE_US = 5_000_000


@dataclass(frozen=True)
class Readiness:
    """When the passive program is ready for the active one: it printed a line starting with
    `line`, or (`listen`) a socket listens on the flow's port at its host; then `delay_us` more."""
    line: str | None = "listening"
    listen: bool = False
    delay_us: int = 0


@dataclass(frozen=True)
class LinkPackets:
    """The packets one side of a flow sends in one direction of the link (what the DiffServ
    warnings match filters against); None: an ephemeral port."""
    link_direction: str          # down | up
    what: str                    # data, ACKs, requests, responses, packets
    protocol: int
    tos: int
    sport: int | None
    dport: int | None


@dataclass(frozen=True)
class PacedStream:
    """Datagrams a flow's sender sends on a schedule: every `interval_us` to `port`, from the
    `side` host (fixed | mobile). The sender's capture shows whether the schedule was kept."""
    side: str
    port: int
    interval_us: float


@dataclass(frozen=True)
class FlowBase(ABC):
    """What a replication asks a flow (testbed/run/replication.py, status.py): its two roles and
    on which host each runs, its workload, the command lines of its programs, the files they
    write, and the main metrics of their summaries; also what the scenario loader and the
    warnings (testbed/run/lint.py) check. Each kind answers for itself.

    The active program (HTTP client, bulk or UDP sender) starts at the flow's offset from
    t = 0 and its end ends the flow; the passive side (web server, receiver) listens from
    before t = 0."""
    name: str
    start_us: int               # offset from t = 0 (the emulator's START)
    tos: int                    # IP TOS byte (DSCP << 2)
    direction: str              # down: server/sender at the fixed host; up: at the mobile host

    # Each kind's constants (class variables, so not in expanded.json).
    PROGRAM: ClassVar[str]                  # the C generator (build/bin/)
    ROLES: ClassVar[tuple[str, str]]        # (active, passive), as in workloads.json and file names
    ACTIVE_SENDS: ClassVar[bool]            # the active program is where the data starts (a sender)
    PORT_BASE: ClassVar[int]                # flow i (0-based, file order) uses PORT_BASE + i
    METRICS_ROLE: ClassVar[str]             # the role whose summary holds the main metrics
    STARTS_ITSELF: ClassVar[bool] = True    # the active program waits for --start-offset itself;
                                            # False: the replication starts it at the flow's start
    FIXED_RATE: ClassVar[bool] = False      # the active program sends at its own rate whatever the
                                            # link takes (UDP), so it can overflow the link

    @property
    def dscp(self) -> int:
        return self.tos >> 2

    @property
    @abstractmethod
    def workload(self) -> Workload:
        """The page, transfer or stream; its label is workloads.json's `workload`."""

    @property
    def workload_label(self) -> str:
        """workloads.json's `workload`: a label of workloads.toml, or `custom`."""
        return self.workload.label

    def hosts(self) -> tuple[str, str]:
        """The hosts ("fixed" or "mobile") of the active and the passive role."""
        source, sink = ("fixed", "mobile") if self.direction == "down" else ("mobile", "fixed")
        return (source, sink) if self.ACTIVE_SENDS else (sink, source)

    def port(self, index: int) -> int:
        """The port the passive side listens on, for the flow at `index` of its cell."""
        return self.PORT_BASE + index

    def paced(self, index: int) -> PacedStream | None:
        """What the flow sends on a schedule (None: it sends as its transport lets it)."""
        return None

    def program_name(self, role: str) -> str:
        """The name of the role's program: <flow>.<role>.stdout / .stderr in the results."""
        return f"{self.name}.{role}"

    def log_name(self, role: str) -> str:
        """The event log (--log) the role's program writes."""
        return f"{self.name}.{role}.log"

    def active_argv(self, program: Callable[[str], str], peer: str, *, offset_us: int, log: Path,
                    timeout_us: int, local: str = "") -> list[str]:
        """The active program's command line: `program` gives a C program's path on its host,
        `peer` is the passive side's address:port, `offset_us` the time left until the flow's
        start, `timeout_us` the scenario's timeout, `local` the active host's own address."""
        return [program(self.PROGRAM), *self._active_args(peer, timeout_us),
                "--start-offset", f"{offset_us}us", "--tos", str(self.tos), "--log", str(log)]

    @abstractmethod
    def _active_args(self, peer: str, timeout_us: int) -> list[str]:
        """The kind's own arguments of the active program."""

    @abstractmethod
    def passive_argv(self, program: Callable[[str], str], listen: str, log: Path, *,
                     peer: str = "", timeout_us: int = 0) -> list[str] | None:
        """The passive program's command line, listening on `listen` (address:port), ready as
        `readiness()` says; `peer` is the active host's address. None: no passive program (a web
        server serving web_pages(), or nothing)."""

    def readiness(self) -> Readiness:
        """When the passive program is ready: the generators print "listening ..."."""
        return Readiness()

    def web_pages(self) -> tuple[tuple[int, ...], ...]:
        """The pages (object sizes, main object first) a web server on the passive side serves."""
        return ()

    def unchecked_objects(self) -> tuple[tuple[str, int], ...]:
        """(key, size) of each object the flow's server serves that parsing the flow did not check
        against MAX_SIZE_BYTES (an HTTP page's, from `objects` or a workloads.toml label): the
        scenario loader checks them, naming the key (`objects[1]`)."""
        return ()

    @abstractmethod
    def log_files(self) -> list[tuple[str, str]]:
        """(host, file name) of the event logs the flow's programs write."""

    def summary(self, stdout: str) -> dict | None:
        """The program's summary for workloads.json: the generators' last JSON line."""
        for line in reversed(stdout.splitlines()):
            if line.startswith("{"):
                try:
                    found = json.loads(line)
                except ValueError:
                    return None
                return found if isinstance(found, dict) else None
        return None

    def problem(self, role: str, code: int | None, summary: Mapping[str, Any] | None, *, stopped: bool,
                stderr: str) -> str | None:
        """What went wrong with the role's program, as the end of "flow F: the ROLE (PROGRAM) ...";
        None when it did its job. `stopped`: squall ended it (a passive program after the flow);
        `stderr`: the end of its stderr. A generator must exit 0 with an ok summary."""
        if code is None:
            return "had not ended"
        if code != 0 or summary is None or not summary.get("ok"):
            return f"exited with code {code}: {(summary or {}).get('error') or stderr}"
        return None

    def planned_us(self, link: LinkConfig, timeout_us: int) -> int:
        """How long the flow is expected to last from its start on an error-free link: its bytes at the
        link's slowest rate in the direction of its data and a few round trips (the progress line's
        first ETA, before replications have been measured)."""
        return min(timeout_us, self._planned_us(link, timeout_us))

    def _planned_us(self, link: LinkConfig, timeout_us: int) -> int:
        return timeout_us

    def _transfer_us(self, link: LinkConfig, data_bytes: int, round_trips: int) -> int:
        d = link.direction(self.direction)
        rates = [s.rate_bps for s in d.bandwidth if s.rate_bps]          # None: unlimited, 0: an outage
        serialisation = data_bytes * 8 * 1_000_000 // min(rates) if rates else 0
        return serialisation + round_trips * (link.down.delay_us + link.up.delay_us)

    @abstractmethod
    def link_packets(self, index: int) -> list[LinkPackets]:
        """What each side of the flow at `index` of its cell sends, in which direction of the link."""

    def _ways(self) -> tuple[str, str]:
        """The link directions of the data and of what answers it."""
        return ("up", "down") if self.direction == "up" else ("down", "up")

    def describe(self) -> str:
        """One line for `squall show`: what the flow runs, on which hosts, from when, with units."""
        active, passive = self.hosts()
        marking = f"DSCP {self.dscp}" if self.tos & 3 == 0 else f"TOS {self.tos}"
        return (f"{self.name}: {self.kind}, {self._what()}; {self.ROLES[0]} at the {active} host, {self.ROLES[1]} "
                f"at the {passive} host ({self.direction}); start {format_time_us(self.start_us)}; {marking}")

    @abstractmethod
    def _what(self) -> str:
        """The kind's own part of describe()."""

    @classmethod
    def main_metrics(cls, entry: Mapping[str, Any]) -> dict[str, float]:
        """The main metrics of the flow's workloads.json entry, from its generators' own
        summaries (the status table); {} where the summary lacks them."""
        return cls._metrics((entry.get(cls.METRICS_ROLE) or {}).get("summary") or {})

    @staticmethod
    @abstractmethod
    def _metrics(summary: Mapping[str, Any]) -> dict[str, float]: ...


@dataclass(frozen=True)
class HttpFlow(FlowBase):
    """A page: squall-http (client) fetches it from nginx (server)."""
    page: HttpPage
    http: str                   # "1.0" | "1.1"
    parallel: int               # HTTP/1.0: connections open at a time
    persistent: int             # HTTP/1.1: persistent connections (1 or 2)
    pipeline: bool
    request_size: int
    inline_after: str = "complete"      # when in-line requests may go: "first", "complete" or a byte count
    delayed_acks: bool = False          # the client re-arms TCP_QUICKACK = 0 after every read
    kind: str = "http"

    PROGRAM = "squall-http"
    ROLES = ("client", "server")
    ACTIVE_SENDS = False
    PORT_BASE = 8080
    METRICS_ROLE = "client"

    @property
    def workload(self) -> HttpPage:
        return self.page

    def _active_args(self, peer: str, timeout_us: int) -> list[str]:
        # A label of workloads.toml is passed as such (squall-http has the same table), so the
        # client's summary names the workload for the analysis; other pages go as sizes.
        page = ["--objects", ",".join(str(s) for s in self.page.sizes)] if self.page.label == "custom" \
            else ["--workload", self.page.label]
        args = ["--connect", peer, *page, "--http", self.http, "--request-size", str(self.request_size),
                "--timeout", f"{timeout_us + CLIENT_TIMEOUT_GRACE_US}us"]
        args += ["--parallel", str(self.parallel)] if self.http == "1.0" else \
            ["--persistent", str(self.persistent)] + (["--pipeline"] if self.pipeline else [])
        return args + (["--inline-after", self.inline_after] if self.inline_after != "complete" else []) + \
            (["--delayed-acks"] if self.delayed_acks else [])

    def passive_argv(self, program: Callable[[str], str], listen: str, log: Path, *,
                     peer: str = "", timeout_us: int = 0) -> None:
        return None

    def web_pages(self) -> tuple[tuple[int, ...], ...]:
        return (self.page.sizes,)

    def unchecked_objects(self) -> tuple[tuple[str, int], ...]:
        return tuple((f"objects[{i}]", size) for i, size in enumerate(self.page.sizes))

    def _planned_us(self, link: LinkConfig, timeout_us: int) -> int:
        # handshake, main request and response, then the in-line objects' requests and responses
        return self._transfer_us(link, sum(self.page.sizes) + self.request_size * len(self.page.sizes), 4)

    def link_packets(self, index: int) -> list[LinkPackets]:
        # client -> server: requests (with the flow's TOS); server -> client: responses (nginx: TOS 0)
        towards, back = self._ways()
        port = self.port(index)
        return [LinkPackets(back, "requests", TCP, self.tos, None, port),
                LinkPackets(towards, "responses", TCP, 0, port, None)]

    def _what(self) -> str:
        sizes = " + ".join(format_size(s) for s in self.page.sizes)
        page = sizes if self.page.label == "custom" else f"{self.page.label} ({sizes})"
        connections = f"{self.parallel} parallel connections" if self.http == "1.0" else \
            f"{self.persistent} persistent connection{'s' if self.persistent > 1 else ''}" + \
            (", pipelined" if self.pipeline else "")
        inline = {"complete": "", "first": ", in-line requests from the main object's first byte"}.get(
            self.inline_after, f", in-line requests after {self.inline_after} B of the main object")
        return (f"page {page}, HTTP/{self.http}, {connections}, requests {format_size(self.request_size)}{inline}"
                + (", delayed ACKs" if self.delayed_acks else ""))

    def log_files(self) -> list[tuple[str, str]]:
        return [(self.hosts()[0], self.log_name(self.ROLES[0]))]     # nginx's logs are the web server's

    @staticmethod
    def _metrics(summary: Mapping[str, Any]) -> dict[str, float]:
        return {"page time": summary["response_time_us"] / 1e6} if "response_time_us" in summary else {}


@dataclass(frozen=True)
class _SenderReceiverFlow(FlowBase):
    """A sender and a receiver: one program's `send` and `recv` modes."""
    ROLES = ("sender", "receiver")
    ACTIVE_SENDS = True

    def _active_args(self, peer: str, timeout_us: int) -> list[str]:
        return ["send", "--connect", peer, *self._send_args()]

    @abstractmethod
    def _send_args(self) -> list[str]: ...

    def passive_argv(self, program: Callable[[str], str], listen: str, log: Path, *,
                     peer: str = "", timeout_us: int = 0) -> list[str]:
        return [program(self.PROGRAM), "recv", "--listen", listen, "--tos", str(self.tos), "--log", str(log),
                *self._receive_args()]

    def _receive_args(self) -> list[str]:
        return []

    def log_files(self) -> list[tuple[str, str]]:
        return [(host, self.log_name(role)) for host, role in zip(self.hosts(), self.ROLES)]


@dataclass(frozen=True)
class BulkFlow(_SenderReceiverFlow):
    """A bulk TCP transfer (squall-bulk)."""
    transfer: BulkTransfer
    nodelay: bool
    delayed_acks: bool = False          # the receiver re-arms TCP_QUICKACK = 0 after every read
    kind: str = "bulk"

    PROGRAM = "squall-bulk"
    PORT_BASE = 5001
    METRICS_ROLE = "sender"

    @property
    def workload(self) -> BulkTransfer:
        return self.transfer

    def _send_args(self) -> list[str]:
        return ["--count", str(self.transfer.count), "--length", str(self.transfer.length)] + \
            (["--nodelay"] if self.nodelay else [])

    def _planned_us(self, link: LinkConfig, timeout_us: int) -> int:
        return self._transfer_us(link, self.transfer.count * self.transfer.length, 2)

    def link_packets(self, index: int) -> list[LinkPackets]:
        towards, back = self._ways()
        port = self.port(index)
        return [LinkPackets(towards, "data", TCP, self.tos, None, port),
                LinkPackets(back, "ACKs", TCP, self.tos, port, None)]

    def _what(self) -> str:
        t = self.transfer
        label = "" if t.label == "custom" else f"{t.label}: "
        return (f"{label}{t.count} x {format_size(t.length)} ({format_size(t.count * t.length)})"
                + (", TCP_NODELAY" if self.nodelay else "") + (", delayed ACKs" if self.delayed_acks else ""))

    def _receive_args(self) -> list[str]:
        return ["--delayed-acks"] if self.delayed_acks else []

    @staticmethod
    def _metrics(summary: Mapping[str, Any]) -> dict[str, float]:
        if "end_us" not in summary or "connect_start_us" not in summary:
            return {}
        elapsed = (summary["end_us"] - summary["connect_start_us"]) / 1e6
        return {"elapsed": elapsed, "goodput": summary["bytes"] * 8 / elapsed if elapsed > 0 else 0.0}


@dataclass(frozen=True)
class UdpFlow(_SenderReceiverFlow):
    """A constant-bit-rate UDP stream (squall-udp)."""
    stream: CbrStream
    duration_us: int | None
    count: int | None
    kind: str = "udp"

    PROGRAM = "squall-udp"
    PORT_BASE = 6001
    METRICS_ROLE = "receiver"
    FIXED_RATE = True

    @property
    def workload(self) -> CbrStream:
        return self.stream

    def _planned_us(self, link: LinkConfig, timeout_us: int) -> int:
        if self.duration_us is not None:
            return self.duration_us
        assert self.count is not None
        return self.count * self.stream.size * 8 * 1_000_000 // self.stream.rate_bps

    def link_packets(self, index: int) -> list[LinkPackets]:
        return [LinkPackets(self._ways()[0], "data", UDP, self.tos, None, self.port(index))]

    def paced(self, index: int) -> PacedStream:
        return PacedStream(self.hosts()[0], self.port(index), self.stream.interval_us)

    def _what(self) -> str:
        label = "" if self.stream.label == "custom" else f"{self.stream.label}: "
        length = [f"for {format_time_us(self.duration_us)}"] if self.duration_us else []
        length += [f"{self.count} datagrams"] if self.count else []
        return (f"{label}{format_size(self.stream.size)} datagrams at {format_rate_bps(self.stream.rate_bps)} "
                f"of payload, {' or '.join(length)}")

    def _send_args(self) -> list[str]:
        return ["--size", str(self.stream.size), "--rate", f"{self.stream.rate_bps}bit"] + \
            (["--duration", f"{self.duration_us}us"] if self.duration_us else []) + \
            (["--count", str(self.count)] if self.count else [])

    @staticmethod
    def _metrics(summary: Mapping[str, Any]) -> dict[str, float]:
        keys = {"throughput": "throughput_bps", "jitter": "jitter_mean_us", "loss": "loss"}
        return {k: float(summary[v]) for k, v in keys.items() if v in summary}

    @classmethod
    def main_metrics(cls, entry: Mapping[str, Any]) -> dict[str, float]:
        """The receiver's loss counts against its highest sequence number, which misses the
        datagrams lost at the end of the stream: against what the sender's summary says it
        sent (`packets`) when that is there."""
        metrics = super().main_metrics(entry)
        sent = ((entry.get("sender") or {}).get("summary") or {}).get("packets")
        received = ((entry.get("receiver") or {}).get("summary") or {}).get("received")
        if isinstance(sent, int) and sent > 0 and isinstance(received, int):
            metrics["loss"] = max(0, sent - received) / sent
        return metrics


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

    PROGRAM = ""
    ROLES = ("client", "server")
    ACTIVE_SENDS = False                    # down: the server at the fixed host, like http
    PORT_BASE = 7001
    METRICS_ROLE = "client"
    STARTS_ITSELF = False

    @property
    def workload(self) -> CommandWorkload:       # type: ignore[override]
        return CommandWorkload(Path(self.client[0]).name)

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
        if role == self.ROLES[1] and stopped:
            return None     # the server ran until squall stopped it after the flow: its job
        if code is None:
            return "had not ended"
        return None if code == 0 else f"exited with code {code}: {stderr}"

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


Flow = HttpFlow | BulkFlow | UdpFlow | CommandFlow
FLOW_TYPES: dict[str, type[FlowBase]] = {t.kind: t for t in (HttpFlow, BulkFlow, UdpFlow, CommandFlow)}


def parse_flows_section(table: Mapping[str, Any], where: str, profile_dir: Path = PROFILE_DIR) -> tuple[Flow, ...]:
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
    allowed = (COMMON_KEYS - ({"workload"} if kind == "command" else set())) | KIND_KEYS[kind]
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
    pipeline = _flag(table, "pipeline", where)
    request_size = parse_size_bytes(table.get("request_size", "350B"), f"{where}.request_size")
    return HttpFlow(**common, page=workload, http=version,
                    parallel=_whole(table.get("parallel", 4), f"{where}.parallel", 1, 64),
                    persistent=_whole(table.get("persistent", 1), f"{where}.persistent", 1, 2),
                    pipeline=pipeline, request_size=request_size,
                    inline_after=_inline_after(table.get("inline_after", "complete"), f"{where}.inline_after"),
                    delayed_acks=_flag(table, "delayed_acks", where))


def _inline_after(value: object, where: str) -> str:
    """squall-http's --inline-after: "first", "complete", or a number of the main object's body bytes."""
    if value in ("first", "complete"):
        return str(value)
    n = value if isinstance(value, int) and not isinstance(value, bool) else parse_size_bytes(value, where)
    if n <= 0:
        raise ConfigError(where, f"{value!r}: expected \"first\", \"complete\" or a positive size such as \"1000B\"")
    return str(n)


def _flag(table: Mapping[str, Any], key: str, where: str) -> bool:
    value = table.get(key, False)
    if not isinstance(value, bool):
        raise ConfigError(f"{where}.{key}", f"{value!r} is not true or false")
    return value


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
    return BulkFlow(**common, transfer=workload, nodelay=_flag(table, "nodelay", where),
                    delayed_acks=_flag(table, "delayed_acks", where))


def _udp(table: Mapping[str, Any], where: str, workload: CbrStream | None, common: dict) -> UdpFlow:
    _exclusive(table, where, ("size", "rate", "rate_counts"))
    if workload is None:
        missing = [k for k in ("size", "rate") if k not in table]
        if missing:
            raise ConfigError(f"{where}.{missing[0]}", "missing: a udp flow needs size and rate (or a cbr workload)")
        own = {k: table[k] for k in ("size", "rate", "rate_counts") if k in table}
        workload = from_table("custom", {"kind": "cbr", **own}, where)
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


def _command(table: Mapping[str, Any], where: str, workload: None, common: dict) -> CommandFlow:
    if "server" in table and "serve" in table:
        raise ConfigError(f"{where}.serve", "give a server command line or serve = [sizes] (the per-run "
                          "nginx), not both")
    serve: tuple[int, ...] = ()
    if "serve" in table:
        serve = _sizes(table["serve"], f"{where}.serve")
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
    return CommandFlow(**common, client=client, server=server, serve=serve, ready_delay_us=delay)


def _sizes(value: object, where: str) -> tuple[int, ...]:
    if not isinstance(value, list) or not value:
        raise ConfigError(where, "expected a list of object sizes, e.g. [\"100kB\", 2096] (integers are bytes)")
    sizes = []
    for i, size in enumerate(value):
        n = size if isinstance(size, int) and not isinstance(size, bool) else parse_size_bytes(size, f"{where}[{i}]")
        if not 0 < n <= MAX_SIZE_BYTES:
            raise ConfigError(f"{where}[{i}]", f"{size!r} must be a positive size of at most {MAX_SIZE_BYTES} B")
        sizes.append(n)
    return tuple(sizes)


_PARSERS: dict[str, Callable[..., Flow]] = {"http": _http, "bulk": _bulk, "udp": _udp, "command": _command}
