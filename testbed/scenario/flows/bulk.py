"""The `bulk` flow kind: squall-bulk sends `count` buffers of `length` bytes over one TCP
connection (workloads.toml `bulk`, or the keys; the IIP report's 90 x 2096 B by default)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from testbed.errors import ConfigError
from testbed.scenario.flows.running import TCP, LinkPackets
from testbed.scenario.flows.sender_receiver import SenderReceiverFlow
from testbed.scenario.flows.values import exclusive, flag, whole
from testbed.scenario.link_section import LinkConfig
from testbed.units import format_size, parse_size_bytes
from testbed.scenario.workloads import BulkTransfer

DEFAULT_BULK = (90, 2096)       # IIP report 5.2: 90 buffers of 2096 B


@dataclass(frozen=True)
class BulkFlow(SenderReceiverFlow):
    """A bulk TCP transfer (squall-bulk)."""
    transfer: BulkTransfer
    nodelay: bool
    delayed_acks: bool = False          # the receiver re-arms TCP_QUICKACK = 0 after every read
    kind: str = "bulk"

    KEYS = frozenset({"count", "length", "nodelay", "delayed_acks"})
    PROFILE_KIND = "bulk"
    WORKLOAD_TYPE = BulkTransfer
    TITLE = "bulk"
    PORT_BASE = 5001
    METRICS_ROLE = "sender"
    SIZED_BY_BYTES = True

    @classmethod
    def from_table(cls, table: Mapping[str, Any], where: str, workload: BulkTransfer | None,
                   common: dict[str, Any]) -> BulkFlow:
        exclusive(table, where, ("count", "length"))
        if workload is None:
            count = whole(table.get("count", DEFAULT_BULK[0]), f"{where}.count", 1, 10**9)
            length = parse_size_bytes(table.get("length", f"{DEFAULT_BULK[1]}B"), f"{where}.length")
            if length <= 0:
                raise ConfigError(f"{where}.length", "must be a positive size")
            workload = BulkTransfer("custom", count, length)
        return cls(**common, transfer=workload, nodelay=flag(table, "nodelay", where),
                   delayed_acks=flag(table, "delayed_acks", where))

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

