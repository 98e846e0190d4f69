"""The analysis beside the kernel's own account of each host (README "The kernel's counters
beside the analysis"): the TCP MIB counters every replication records before and after
(`kernel-counters.json`, docs/runner.md) against the classes of the segments the analysis
saw the host send, connection by connection, in its own capture.

Run-level values (runs.csv, cells.csv): `host.<side>.<quantity>` is the analysis' count over
every TCP segment the host sent, `host.<side>.<quantity>.kernel` the growth of the kernel's
counters over the replication. `kernel_rows` makes summary/kernel.csv of them and
`kernel_table` the report's table."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analysis.errors import AnalysisInputError, read_json
from analysis.metrics.tcp import AFTER_RTO, FAST, PROBE, RTO, TcpMetrics
from analysis.results.directory import KERNEL_COUNTERS_FILE as COUNTERS_NAME

HOSTS = ("fixed", "mobile")
EQUAL, AT_MOST, RELATED = "equal", "at most", "related"


@dataclass(frozen=True)
class Quantity:
    name: str
    counters: tuple[str, ...]       # the kernel's counters, summed
    analysis: Callable[[TcpMetrics], int | None] | None  # None: the kernel's only
    relation: str                   # EQUAL, AT_MOST (the analysis' <= the kernel's), RELATED
    label: str                      # the report's column

    def holds(self, analysis: float | None, kernel: float | None) -> bool:
        """Whether the two agree as they must (always, for RELATED)."""
        if analysis is None or kernel is None or self.relation == RELATED:
            return True
        return analysis == kernel if self.relation == EQUAL else analysis <= kernel


def _kind(kind: str) -> Callable[[TcpMetrics], int | None]:
    return lambda m: m.retransmissions_by_kind.get(kind, 0)


QUANTITIES = (
    Quantity("retransmissions", ("TcpRetransSegs",), lambda m: m.retransmissions, EQUAL,
             "retransmissions"),
    # tcp_retransmit_timer and tcp_syn_ack_timeout count every expiry, SYNs' included
    Quantity("timeouts", ("TcpExtTCPTimeouts",), _kind(RTO), EQUAL, "timeouts"),
    # tcp_rtx_synack counts SYN-ACKs sent again on the timer and in reply to a duplicate SYN
    Quantity("syn_retransmissions", ("TcpExtTCPSynRetrans",), lambda m: m.syn_retransmissions,
             EQUAL, "SYN retx"),
    # segments sent again outside the Loss state (tcp_xmit_retransmit_queue)
    Quantity("fast_retransmissions", ("TcpExtTCPFastRetrans",), _kind(FAST), EQUAL,
             "fast retx"),
    # a recovery Linux enters and leaves without sending anything again is in no capture
    Quantity("fast_recoveries", ("TcpExtTCPSackRecovery", "TcpExtTCPRenoRecovery"),
             lambda m: m.fast_retransmits, AT_MOST, "recoveries"),
    # segments sent again in the Loss state, after the timeout's own
    Quantity("after_rto", ("TcpExtTCPSlowStartRetrans",), _kind(AFTER_RTO), EQUAL,
             "after RTO"),
    Quantity("loss_probes", ("TcpExtTCPLossProbes",), _kind(PROBE), EQUAL, "probes"),
    # timeouts the sender found spurious itself, on the ACK's echoed timestamp
    Quantity("loss_undos", ("TcpExtTCPLossUndo",), lambda m: m.loss_undos, EQUAL, "undos"),
    # the log's ground truth (the link had delivered what the timeout sent again) beside
    # what the sender could tell (timestamps: TCPLossUndo; F-RTO: TCPSpuriousRTOs)
    Quantity("spurious_rtos", ("TcpExtTCPLossUndo", "TcpExtTCPSpuriousRTOs"),
             lambda m: m.spurious_rtos, RELATED, "spurious RTOs"),
    # retransmissions the kernel held back because the original was still in the host's
    # queue: never on the wire, so never in a capture
    Quantity("held_back", ("TcpExtTCPSpuriousRtxHostQueues",), None, RELATED, "held back"),
)
BY_NAME = {q.name: q for q in QUANTITIES}


def read_kernel_deltas(rep_dir: Path) -> dict[str, dict[str, int]] | None:
    """Each host's counter deltas from kernel-counters.json; None without the file.
    A host whose counters could not be read (its `delta` is null) is left out."""
    path = rep_dir / COUNTERS_NAME
    if not path.exists():
        return None
    data = read_json(path)
    if not isinstance(data, dict):
        raise AnalysisInputError(f"{path}: expected an object of hosts")
    return {host: entry["delta"] for host, entry in data.items()
            if isinstance(entry, dict) and isinstance(entry.get("delta"), dict)}


def _total(ms: list[TcpMetrics], count: Callable[[TcpMetrics], int | None]) -> int | None:
    xs = [count(m) for m in ms]
    return None if any(x is None for x in xs) else sum(x for x in xs if x is not None)


def host_values(hosts: dict[str, list[TcpMetrics]],
                deltas: dict[str, dict[str, int]] | None) -> dict[str, float | None]:
    """`host.<side>.<quantity>` (the analysis) and `.kernel` (the counters' growth)."""
    values: dict[str, float | None] = {}
    for side in HOSTS:
        ms = hosts.get(side)
        delta = (deltas or {}).get(side)
        for q in QUANTITIES:
            if ms is not None and q.analysis is not None:
                values[f"host.{side}.{q.name}"] = _total(ms, q.analysis)
            if delta is not None:
                values[f"host.{side}.{q.name}.kernel"] = sum(delta.get(c, 0) for c in q.counters)
    return values


def kernel_rows(results: Iterable[Any]) -> list[dict[str, Any]]:
    """summary/kernel.csv: per replication, host and quantity the analysis' count, the
    kernel's, their difference, how they must relate and whether they do (ReplicationResults)."""
    rows = []
    for r in results:
        for side in HOSTS:
            for q in QUANTITIES:
                mine = r.values.get(f"host.{side}.{q.name}")
                kernel = r.values.get(f"host.{side}.{q.name}.kernel")
                if mine is None and kernel is None:
                    continue
                rows.append({
                    "cell": r.ref.cell, "replication": r.ref.rep, "status": r.ref.status,
                    "host": side, "quantity": q.name, "analysis": mine, "kernel": kernel,
                    "difference": None if mine is None or kernel is None else mine - kernel,
                    "relation": q.relation, "holds": q.holds(mine, kernel),
                    "counters": "+".join(q.counters)})
    return rows


KERNEL_FIELDS = ["cell", "replication", "status", "host", "quantity", "analysis", "kernel",
                 "difference", "relation", "holds", "counters"]
