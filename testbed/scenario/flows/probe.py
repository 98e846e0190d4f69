"""The `probe` flow kind: a sparse latency probe (Debian's irtt) beside the other flows, the
question of Flent's RRUL tests (what does a bulk flow do to a sparse flow's delay). The irtt
server listens at the server host from before t = 0; the client sends a probe of `length` bytes
every `interval` for `duration` from the flow's start and prints its JSON (every probe's
round-trip and one-way delays) on stdout, kept as <flow>.client.stdout; the analysis joins it
with the emulator log's fate of each probe (analysis/metrics/probes.py)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from analysis.join.flows import FLOW_KINDS
from analysis.metrics.probes import IRTT_HEADER_BYTES, irtt_summary
from testbed.errors import ConfigError
from testbed.scenario.flows.base import FlowBase
from testbed.scenario.flows.running import UDP, LinkPackets, Readiness
from testbed.scenario.flows.third_party import third_party_problem
from testbed.scenario.link_section import LinkConfig
from testbed.units import format_size, format_time_us, parse_size_bytes, parse_time_us

DEFAULT_INTERVAL, DEFAULT_LENGTH = "20ms", "172B"
SHORTEST_INTERVAL_US = 1_000
LONGEST_PACKET_BYTES = 1472         # a 1500 B IP packet's UDP payload


@dataclass(frozen=True)
class ProbeWorkload:
    """workloads.json's `workload` of a probe: its tool, interval and packet length."""
    label: str


@dataclass(frozen=True)
class ProbeFlow(FlowBase):
    """irtt's probes: `interval`, `duration`, `length` (irtt's packet length: UDP payload
    including its header); the client at the mobile host for direction "down" (the server at
    the fixed host, as for http), at the fixed host for "up"."""
    interval_us: int
    duration_us: int
    length: int
    kind: str = "probe"

    KEYS = frozenset({"tool", "interval", "duration", "length"})
    PROFILE_KIND = None
    WORKLOAD_TYPE = None
    ANALYSIS = FLOW_KINDS["probe"]
    TITLE = "probe"
    PROGRAM = ANALYSIS.tool or ""           # Debian's irtt, on PATH (not a build/bin program)
    ROLES = ("client", "server")
    ACTIVE_SENDS = False
    PORT_BASE = 7301
    METRICS_ROLE = "client"
    STARTS_ITSELF = False
    OPENS_TCP = False

    @classmethod
    def from_table(cls, table: Mapping[str, Any], where: str, workload: None,
                   common: dict[str, Any]) -> ProbeFlow:
        tool = table.get("tool", cls.PROGRAM)
        if tool != cls.PROGRAM:
            raise ConfigError(f"{where}.tool", f"{tool!r} is not a probe tool; expected \"{cls.PROGRAM}\" "
                              "(ICMP ping is not joined with the emulator log, which the analysis needs)")
        interval = parse_time_us(table.get("interval", DEFAULT_INTERVAL), f"{where}.interval")
        if interval < SHORTEST_INTERVAL_US:
            raise ConfigError(f"{where}.interval", f"must be at least {format_time_us(SHORTEST_INTERVAL_US)}")
        if "duration" not in table:
            raise ConfigError(f"{where}.duration", "missing: a probe flow needs a duration, e.g. \"10s\"")
        duration = parse_time_us(table["duration"], f"{where}.duration")
        if duration < interval:
            raise ConfigError(f"{where}.duration", f"must be at least the interval ({format_time_us(interval)})")
        length = parse_size_bytes(table.get("length", DEFAULT_LENGTH), f"{where}.length")
        if not IRTT_HEADER_BYTES <= length <= LONGEST_PACKET_BYTES:
            raise ConfigError(f"{where}.length", f"{length} B: expected {IRTT_HEADER_BYTES} B (irtt's header with "
                              f"both timestamps) to {LONGEST_PACKET_BYTES} B")
        return cls(**common, interval_us=interval, duration_us=duration, length=length)

    @property
    def workload(self) -> ProbeWorkload:        # type: ignore[override]
        return ProbeWorkload(f"{self.PROGRAM} {format_time_us(self.interval_us)} {format_size(self.length)}")

    def active_argv(self, program: Callable[[str], str], peer: str, *, offset_us: int, log: Path,
                    timeout_us: int, local: str = "") -> list[str]:
        return [self.PROGRAM, *self._active_args(peer, timeout_us)]

    def _active_args(self, peer: str, timeout_us: int) -> list[str]:
        return ["client", "-i", f"{self.interval_us}us", "-d", f"{self.duration_us}us", "-l", str(self.length),
                f"--dscp={self.tos}", "-Q", "-o", "-", peer]

    def passive_argv(self, program: Callable[[str], str], listen: str, log: Path, *,
                     peer: str = "", timeout_us: int = 0) -> list[str]:
        # -i 0: no minimum interval (irtt's server refuses one below 10 ms by default)
        return [self.PROGRAM, "server", "-b", listen, "-i", "0"]

    def readiness(self) -> Readiness:
        return Readiness(line=None, listen=True)

    def log_files(self) -> list[tuple[str, str]]:
        return []           # the client's JSON on stdout is the record (<flow>.client.stdout)

    def summary(self, stdout: str) -> dict | None:
        """The client's JSON reduced to its counts and delays (analysis/metrics/probes.py)."""
        try:
            found = json.loads(stdout)
        except ValueError:
            return None
        return irtt_summary(found) if isinstance(found, dict) else None

    def problem(self, role: str, code: int | None, summary: Mapping[str, Any] | None, *, stopped: bool,
                stderr: str) -> str | None:
        found = third_party_problem(role == self.ROLES[1] and stopped, code, stderr)
        if found is None and role == self.ROLES[0] and summary is None:
            return f"exited with code {code} without its JSON on stdout: {stderr}"
        return found

    def link_packets(self, index: int) -> list[LinkPackets]:
        request, reply = ("down", "up") if self.direction == "up" else ("up", "down")
        return [LinkPackets(request, "requests", UDP, self.tos, None, self.port(index)),
                LinkPackets(reply, "replies", UDP, self.tos, self.port(index), None)]

    def _planned_us(self, link: LinkConfig, timeout_us: int) -> int:
        return self.duration_us

    def _what(self) -> str:
        return (f"{self.PROGRAM}: {format_size(self.length)} probes every {format_time_us(self.interval_us)} "
                f"for {format_time_us(self.duration_us)}")

    @staticmethod
    def _metrics(summary: Mapping[str, Any]) -> dict[str, float]:
        rtt = summary.get("rtt_median_ms")      # irtt's median; the status table's units are s
        return {"RTT": rtt / 1000} if isinstance(rtt, (int, float)) else {}
