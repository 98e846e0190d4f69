"""The `udp` flow kind: squall-udp sends a constant-bit-rate stream of datagrams
(workloads.toml `cbr`, or size and rate) for a duration or a count; the receiver measures it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from testbed.errors import ConfigError
from testbed.scenario.flows.running import UDP, LinkPackets, PacedStream
from testbed.scenario.flows.sender_receiver import SenderReceiverFlow
from testbed.scenario.flows.values import exclusive, whole
from testbed.scenario.link_section import LinkConfig
from testbed.units import format_rate_bps, format_size, format_time_us, parse_time_us
from testbed.scenario.workloads import CbrStream, from_table


@dataclass(frozen=True)
class UdpFlow(SenderReceiverFlow):
    """A constant-bit-rate UDP stream (squall-udp)."""
    stream: CbrStream
    duration_us: int | None
    count: int | None
    kind: str = "udp"

    KEYS = frozenset({"size", "rate", "rate_counts", "duration", "count"})
    PROFILE_KIND = "cbr"            # workloads.toml calls a UDP stream "cbr"
    WORKLOAD_TYPE = CbrStream
    TITLE = "UDP"
    PORT_BASE = 6001
    METRICS_ROLE = "receiver"
    OPENS_TCP = False
    FIXED_RATE = True

    @classmethod
    def from_table(cls, table: Mapping[str, Any], where: str, workload: CbrStream | None,
                   common: dict[str, Any]) -> UdpFlow:
        exclusive(table, where, ("size", "rate", "rate_counts"))
        if workload is None:
            missing = [k for k in ("size", "rate") if k not in table]
            if missing:
                raise ConfigError(f"{where}.{missing[0]}", "missing: a udp flow needs size and rate (or a cbr "
                                  "workload)")
            own = {k: table[k] for k in ("size", "rate", "rate_counts") if k in table}
            workload = from_table("custom", {"kind": "cbr", **own}, where)
        duration = table.get("duration")
        duration_us = None if duration is None else parse_time_us(duration, f"{where}.duration")
        if duration_us is not None and duration_us <= 0:
            raise ConfigError(f"{where}.duration", "must be greater than zero")
        count = None if "count" not in table else whole(table["count"], f"{where}.count", 1, 10**9)
        if duration_us is None and count is None:
            raise ConfigError(f"{where}.duration", "missing: a udp flow needs a duration (\"60s\") or a count")
        return cls(**common, stream=workload, duration_us=duration_us, count=count)

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
        """None from squall-udp's own summary: a stream's throughput, jitter and loss are the
        analysis' (testbed/run/status.py), one source of truth for every UDP program."""
        return {}

