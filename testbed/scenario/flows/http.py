"""The `http` flow kind: squall-http fetches a page (workloads.toml `http`, or `objects`) from the
per-run nginx, over HTTP/1.0 with parallel connections or HTTP/1.1 persistent and pipelined."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from testbed.errors import ConfigError
from testbed.scenario.flows.base import FlowBase
from testbed.scenario.flows.running import TCP, LinkPackets
from testbed.scenario.flows.values import exclusive, flag, sizes, whole
from testbed.scenario.link_section import LinkConfig
from testbed.units import format_size, parse_size_bytes
from testbed.scenario.workloads import HttpPage

HTTP_VERSIONS = ("1.0", "1.1")
OBJECTS_MISSING = ("missing: give workload = \"s+2s\" (a label) or objects = [6288, 2096, ...] "
                   "(sizes in bytes, main object first)")

# squall-http (and a browser flow's driver) gives up on its own only after the runner's deadline
# (the scenario's timeout): the runner then records `timeout`, a result of the link, and stops the
# client, which prints what it had; a client giving up a few ms before the runner looked would make
# it `failed`.
CLIENT_TIMEOUT_GRACE_US = 5_000_000


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

    KEYS = frozenset({"objects", "http", "parallel", "persistent", "pipeline", "request_size", "inline_after",
                      "delayed_acks"})
    PROFILE_KIND = "http"
    WORKLOAD_TYPE = HttpPage
    TITLE = "HTTP"
    ROLES = ("client", "server")
    ACTIVE_SENDS = False
    PORT_BASE = 8080
    METRICS_ROLE = "client"
    SIZED_BY_BYTES = True

    @classmethod
    def from_table(cls, table: Mapping[str, Any], where: str, workload: HttpPage | None,
                   common: dict[str, Any]) -> HttpFlow:
        exclusive(table, where, ("objects",))
        if workload is None:
            workload = HttpPage("custom", sizes(table.get("objects"), f"{where}.objects", missing=OBJECTS_MISSING))
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
        pipeline = flag(table, "pipeline", where)
        request_size = parse_size_bytes(table.get("request_size", "350B"), f"{where}.request_size")
        return cls(**common, page=workload, http=version,
                   parallel=whole(table.get("parallel", 4), f"{where}.parallel", 1, 64),
                   persistent=whole(table.get("persistent", 1), f"{where}.persistent", 1, 2),
                   pipeline=pipeline, request_size=request_size,
                   inline_after=inline_after(table.get("inline_after", "complete"), f"{where}.inline_after"),
                   delayed_acks=flag(table, "delayed_acks", where))

    @property
    def workload(self) -> HttpPage:
        return self.page

    def inapplicable_keys(self) -> tuple[str, ...]:
        # from_table's rule: HTTP/1.0 opens `parallel` connections, HTTP/1.1 `persistent` ones
        return ("persistent", "pipeline") if self.http == "1.0" else ("parallel",)

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
        shown = " + ".join(format_size(s) for s in self.page.sizes)
        page = shown if self.page.label == "custom" else f"{self.page.label} ({shown})"
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


def inline_after(value: object, where: str) -> str:
    """squall-http's --inline-after: "first", "complete", or a number of the main object's body bytes."""
    if value in ("first", "complete"):
        return str(value)
    n = value if isinstance(value, int) and not isinstance(value, bool) else parse_size_bytes(value, where)
    if n <= 0:
        raise ConfigError(where, f"{value!r}: expected \"first\", \"complete\" or a positive size such as \"1000B\"")
    return str(n)
