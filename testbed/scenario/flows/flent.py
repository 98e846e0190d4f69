"""The `flent` flow kind: one of Flent's own tests across the emulated link, unchanged, so a Flent
user brings their tests. Flent runs at the client host against the server host (`-H`), where
squall runs what its test's runners talk to: irtt's server on irtt's port (2112, the port Flent's
irtt runner connects to); the kernel answers ICMP ping. Flent writes its data file
(`<test>-<time>.<flow>.flent.gz`, the flow's name as Flent's title) into the replication's
directory; the analysis reads it (analysis/metrics/flent.py).

Only the tests whose runners Debian can run here are accepted: most of Flent's tests need netperf,
which Debian main does not package (FLENT_TESTS lists the others)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from analysis.join.flows import FLOW_KINDS
from analysis.metrics.flent import IRTT_PORT
from testbed.errors import ConfigError
from testbed.scenario.flows.base import FlowBase
from testbed.scenario.flows.running import UDP, LinkPackets, Readiness
from testbed.scenario.flows.third_party import third_party_problem
from testbed.scenario.link_section import LinkConfig
from testbed.units import format_time_us, parse_time_us

# Flent 2.1.1's tests whose runners are all in Debian main here: test -> its runners' programs
FLENT_TESTS = {"ping": "ping (ICMP) and irtt (UDP)"}
# what the others need instead (Flent's tests/*.conf); any test not named: netperf
NEEDS = {"voip": "D-ITG", "voip-1up": "D-ITG", "voip-rrul": "D-ITG and netperf", "http": "http-getter",
         "http-1down": "http-getter", "http-1up": "http-getter and netperf", "http-rrul": "http-getter and netperf",
         "udp_flood": "iperf 2", "udp_flood_var_up": "iperf 2", "udp_flood_var_up_stagger": "iperf 2",
         "qdisc-stats": "a qdisc on the client host's own interface"}
DEFAULT_STEP = "200ms"


@dataclass(frozen=True)
class FlentWorkload:
    """workloads.json's `workload` of a flent flow: its test."""
    label: str


@dataclass(frozen=True)
class FlentFlow(FlowBase):
    """Flent's `test` for `length` (Flent's -l), sampled every `step` (-s); Flent at the mobile
    host for direction "down" (its servers at the fixed host), at the fixed host for "up"."""
    test: str
    length_us: int
    step_us: int
    kind: str = "flent"

    KEYS = frozenset({"test", "length", "step"})
    PROFILE_KIND = None
    WORKLOAD_TYPE = None
    ANALYSIS = FLOW_KINDS["flent"]
    TITLE = "Flent"
    PROGRAM = ANALYSIS.tool or ""           # Debian's flent, on PATH
    ROLES = ("client", "server")
    ACTIVE_SENDS = False
    PORT_BASE = IRTT_PORT                   # irtt's, where Flent's irtt runner connects
    PORT_PER_FLOW = False
    METRICS_ROLE = "client"
    STARTS_ITSELF = False
    OPENS_TCP = False

    @classmethod
    def from_table(cls, table: Mapping[str, Any], where: str, workload: None,
                   common: dict[str, Any]) -> FlentFlow:
        test = table.get("test")
        if test not in FLENT_TESTS:
            runnable = ", ".join(f"{t} ({what})" for t, what in FLENT_TESTS.items())
            if not isinstance(test, str):
                raise ConfigError(f"{where}.test", f"missing or not a string: expected a Flent test: {runnable}")
            raise ConfigError(f"{where}.test", f"Flent's test {test!r} needs {NEEDS.get(test, 'netperf')}, which "
                              f"Debian main does not package, so squall cannot run it; tests it runs: {runnable}")
        length = parse_time_us(table.get("length", "10s"), f"{where}.length")
        if not 1_000_000 <= length <= 3_600_000_000 or length % 1_000_000:
            raise ConfigError(f"{where}.length", "expected whole seconds from 1s to 3600s (Flent's -l)")
        step = parse_time_us(table.get("step", DEFAULT_STEP), f"{where}.step")
        if not 10_000 <= step <= length:
            raise ConfigError(f"{where}.step", f"expected 10ms to the length ({format_time_us(length)})")
        return cls(**common, test=test, length_us=length, step_us=step)

    @property
    def workload(self) -> FlentWorkload:        # type: ignore[override]
        return FlentWorkload(self.test)

    def active_argv(self, program: Callable[[str], str], peer: str, *, offset_us: int, log: Path,
                    timeout_us: int, local: str = "") -> list[str]:
        # -D: the data file beside the replication's other files; -t: the flow's name in its name
        return [self.PROGRAM, self.test, *self._active_args(peer, timeout_us), "-D", str(log.parent),
                "-t", self.name]

    def _active_args(self, peer: str, timeout_us: int) -> list[str]:
        server = peer.rpartition(":")[0].strip("[]")
        return ["-H", server, "-l", str(self.length_us // 1_000_000), "-s", f"{self.step_us / 1e6:g}"]

    def passive_argv(self, program: Callable[[str], str], listen: str, log: Path, *,
                     peer: str = "", timeout_us: int = 0) -> list[str]:
        return ["irtt", "server", "-b", listen, "-i", "0"]

    def readiness(self) -> Readiness:
        return Readiness(line=None, listen=True)

    def log_files(self) -> list[tuple[str, str]]:
        return []       # the data file is named by Flent (its time in it): written beside them

    def summary(self, stdout: str) -> dict | None:
        return None     # Flent's summary on stdout is kept in <flow>.client.stdout

    def problem(self, role: str, code: int | None, summary: Mapping[str, Any] | None, *, stopped: bool,
                stderr: str) -> str | None:
        return third_party_problem(role == self.ROLES[1] and stopped, code, stderr)

    def link_packets(self, index: int) -> list[LinkPackets]:
        request, reply = ("down", "up") if self.direction == "up" else ("up", "down")
        return [LinkPackets(request, "requests", UDP, self.tos, None, IRTT_PORT),
                LinkPackets(reply, "replies", UDP, self.tos, IRTT_PORT, None)]

    def _planned_us(self, link: LinkConfig, timeout_us: int) -> int:
        return self.length_us + 5_000_000        # Flent's checks before its test, its pauses after

    def _what(self) -> str:
        return (f"Flent's {self.test} test ({FLENT_TESTS[self.test]}) for {format_time_us(self.length_us)}, "
                f"a sample every {format_time_us(self.step_us)}")

    @staticmethod
    def _metrics(summary: Mapping[str, Any]) -> dict[str, float]:
        return {}
