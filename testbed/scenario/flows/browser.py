"""The `browser` flow kind: headless Chromium at the mobile host loads a page that the fixed host
replays from a HAR file, each host name of the page on its own address, its names answered by a
DNS server at the fixed host reached over the emulated link (docs/browser.md).

The replay (testbed/browser/replay.py) is the flow's server; the browser's driver
(testbed/browser/driver.py) its client, started before t = 0 (PRESTARTS) so Chromium's start-up
never counts, and told to load the page at the flow's start. Its summary's `page_load_s`
(navigation start -> load event) is the flow's main metric."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from testbed.browser import har
from testbed.errors import ConfigError
from testbed.paths import PAGES_DIR
from testbed.scenario.flows.base import FlowBase
from testbed.scenario.flows.http import CLIENT_TIMEOUT_GRACE_US
from testbed.scenario.flows.running import TCP, UDP, LinkPackets
from testbed.scenario.link_section import LinkConfig
from testbed.units import format_size

HTTP_VERSIONS = ("1.1", "2")
CACHES = ("cold", "warm")
REPLAY_PORTS = (443, 80)           # every host name of the replay serves HTTPS and HTTP
DNS_PORT = 53


@dataclass(frozen=True)
class BrowserPage:
    """workloads.json's `workload` of a browser flow: the page (a shipped page's name or the HAR
    file's stem) and what the HAR says of it."""
    label: str
    har: str                    # the HAR file, absolute
    url: str
    port: int                   # the page's (its first entry's) port
    objects: int
    names: tuple[str, ...]      # its host names, each looked up once
    bytes: int

    @property
    def hosts(self) -> int:
        return len(self.names)


@dataclass(frozen=True)
class BrowserFlow(FlowBase):
    page: BrowserPage
    http: str                   # "1.1" | "2": what the HTTPS origins offer (ALPN)
    cache: str                  # "cold" (a fresh profile) | "warm" (the page loaded once before)
    kind: str = "browser"

    KEYS = frozenset({"har", "http", "cache"})
    PROFILE_KIND = None
    WORKLOAD_TYPE = None
    TITLE = "browser"
    ROLES = ("browser", "replay")
    ACTIVE_SENDS = False
    PORT_BASE = REPLAY_PORTS[0]
    PORT_PER_FLOW = False       # the origins' addresses and the DNS server are one per lane
    METRICS_ROLE = "browser"
    STARTS_ITSELF = False
    PRESTARTS = True
    LANES_ONLY = True           # the driver reads the replay's key hash from the run's files

    @classmethod
    def resolve_paths(cls, table: Mapping[str, Any], base_dir: Path | None) -> Mapping[str, Any]:
        value = table.get("har")
        if isinstance(value, str) and value.endswith(".har") and not Path(value).is_absolute():
            return {**table, "har": str(((base_dir or Path.cwd()) / value).resolve())}
        return table

    @classmethod
    def from_table(cls, table: Mapping[str, Any], where: str, workload: None,
                   common: dict[str, Any]) -> BrowserFlow:
        if common["direction"] != "down":
            raise ConfigError(f"{where}.direction", "a browser flow's browser is at the mobile host and its "
                              "replay at the fixed host: direction = \"down\" only")
        http = table.get("http", "2")
        if http not in HTTP_VERSIONS:
            raise ConfigError(f"{where}.http", f"{http!r}: expected \"1.1\" or \"2\" (a string)")
        cache = table.get("cache", "cold")
        if cache not in CACHES:
            raise ConfigError(f"{where}.cache", f"{cache!r}: expected \"cold\" (a fresh profile) or \"warm\"")
        return cls(**common, page=_page(table.get("har"), f"{where}.har"), http=http, cache=cache)

    @property
    def workload(self) -> BrowserPage:          # type: ignore[override]
        return self.page

    def port(self, index: int) -> int:
        """The page's own port (443 for https://, 80 for http://): workloads.json's `port`, by which
        the analysis finds the browser's connections to its origins."""
        return self.page.port

    def inapplicable_keys(self) -> tuple[str, ...]:
        # browsers speak HTTP/2 over TLS only: a plain-HTTP page's origins serve it HTTP/1.1
        return ("http",) if self.page.url.startswith("http://") else ()

    def late_answer_ports(self) -> tuple[int, ...]:
        # Chromium's resolver asks again from a new socket after its own timeout (about a second,
        # less than a loaded GPRS uplink's round trip); the first answer then finds its socket closed
        return (DNS_PORT,)

    def third_party_programs(self) -> tuple[str, ...]:
        return ("chromium", "nginx", "dnsmasq")

    def _replay_dir(self, log: Path) -> Path:
        return log.parent / f"{self.name}.replay"

    def active_argv(self, program: Callable[[str], str], peer: str, *, offset_us: int, log: Path,
                    timeout_us: int, local: str = "") -> list[str]:
        # its own mount namespace: the driver points /etc/resolv.conf at the replay's DNS server
        return ["unshare", "--mount", "--propagation", "private", sys.executable, "-m", "testbed.browser.driver",
                *self._active_args(peer, timeout_us), "--log", str(log),
                "--spki-file", str(self._replay_dir(log) / "ca" / "spki"),
                "--profile", str(log.parent / f"{self.name}.profile")] + (["--warm"] if self.cache == "warm" else [])

    def _active_args(self, peer: str, timeout_us: int) -> list[str]:
        # the runner's deadline comes first, as for squall-http: the replication is then `timeout`
        return ["--url", self.page.url, "--names", ",".join(self.page.names), "--resolver", peer.rpartition(":")[0],
                "--timeout", f"{(timeout_us + CLIENT_TIMEOUT_GRACE_US) / 1e6:g}"]

    def passive_argv(self, program: Callable[[str], str], listen: str, log: Path, *,
                     peer: str = "", timeout_us: int = 0) -> list[str]:
        return [sys.executable, "-m", "testbed.browser.replay", "--har", self.page.har,
                "--dir", str(self._replay_dir(log)), "--listen", listen.rpartition(":")[0], "--http", self.http]

    def log_files(self) -> list[tuple[str, str]]:
        return [("mobile", self.log_name(self.ROLES[0]))]

    def link_packets(self, index: int) -> list[LinkPackets]:
        return [LinkPackets("up", "DNS queries", UDP, 0, None, DNS_PORT),
                LinkPackets("down", "DNS answers", UDP, 0, DNS_PORT, None),
                *(LinkPackets("up", "requests", TCP, 0, None, port) for port in REPLAY_PORTS),
                *(LinkPackets("down", "responses", TCP, 0, port, None) for port in REPLAY_PORTS)]

    def _planned_us(self, link: LinkConfig, timeout_us: int) -> int:
        # per host name a look-up, a TCP and a TLS handshake; then the requests, a round trip each
        return self._transfer_us(link, self.page.bytes, 3 * self.page.hosts + 4)

    def _what(self) -> str:
        return (f"page {self.page.label} ({self.page.url}: {self.page.objects} objects, "
                f"{format_size(self.page.bytes)} from {self.page.hosts} host name{'s' if self.page.hosts > 1 else ''}), Chromium, HTTP/{self.http}, "
                f"{self.cache} cache")

    @staticmethod
    def _metrics(summary: Mapping[str, Any]) -> dict[str, float]:
        load = summary.get("page_load_s")
        return {"page load": load} if isinstance(load, (int, float)) else {}


def _page(value: object, where: str) -> BrowserPage:
    """A shipped page's name (scenarios/pages/NAME.har) or a HAR file (made absolute by resolve_paths)."""
    shipped = sorted(p.stem for p in PAGES_DIR.glob("*.har"))
    if not isinstance(value, str) or not value:
        raise ConfigError(where, f"missing: a HAR file (\"page.har\", relative to the scenario) or a shipped "
                          f"page: {', '.join(shipped)}")
    path = Path(value) if value.endswith(".har") else PAGES_DIR / f"{value}.har"
    if not value.endswith(".har") and value not in shipped:
        raise ConfigError(where, f"{value!r} is not a shipped page ({', '.join(shipped)}) nor a file ending in .har")
    try:
        page = har.read(path)
    except har.HarError as e:
        raise ConfigError(where, str(e)) from None
    label = value if not value.endswith(".har") else path.stem
    return BrowserPage(label, str(path), page.url, page.entries[0].origin.port, len(page.entries), page.hosts,
                       page.bytes)
