"""The report's table of the analysis beside the kernel's counters (analysis.metrics.kernel_truth):
per cell and host, over the replications that recorded them, the sums of each quantity as
the analysis classified the host's segments and as the host's kernel counted them, and how
many replications disagree on a quantity that must agree."""

from __future__ import annotations

from analysis.metrics.kernel_truth import HOSTS, QUANTITIES
from analysis.report.table import Table
from analysis.aggregate.run_analysis import CellResult, RunAnalysis


def _sum(values: list[float | None]) -> int | None:
    return None if any(v is None for v in values) else int(sum(v for v in values if v is not None))


def _pair(a: int | None, k: int | None) -> str:
    return f"{'–' if a is None else a} / {'–' if k is None else k}"


def _rows(cell: CellResult) -> list[list[object]]:
    rows = []
    for side in HOSTS:
        reps = [r for r in cell.replications
                if r.analysed and f"host.{side}.timeouts.kernel" in r.values]
        if not reps:
            continue
        row: list[object] = [cell.cell, side, len(reps)]
        for q in QUANTITIES:
            row.append(_pair(_sum([r.values.get(f"host.{side}.{q.name}") for r in reps]),
                             _sum([r.values.get(f"host.{side}.{q.name}.kernel") for r in reps])))
        differing = sum(not all(q.holds(r.values.get(f"host.{side}.{q.name}"),
                                        r.values.get(f"host.{side}.{q.name}.kernel"))
                                for q in QUANTITIES) for r in reps)
        row.append(f"{differing} of {len(reps)}")
        rows.append(row)
    return rows


def kernel_table(analysis: RunAnalysis) -> Table | None:
    rows = [row for cell in analysis.cells for row in _rows(cell)]
    if not rows:
        return None
    return Table(
        "The analysis beside the kernel's counters (analysis / kernel)",
        ["cell", "host", "replications", *(q.label for q in QUANTITIES), "disagree"], rows,
        "Sums over the analysed replications that recorded the hosts' counters "
        "(kernel-counters.json): each host's TCP segments as the analysis classified them in "
        "its own capture / the growth of its kernel's counters (TCPTimeouts, TCPSynRetrans, "
        "TCPFastRetrans, TCPSackRecovery, TCPSlowStartRetrans, TCPLossProbes, TCPLossUndo, "
        "TcpRetransSegs). Spurious RTOs are the log's ground truth beside the timeouts the "
        "sender itself undid (TCPLossUndo + TCPSpuriousRTOs): related, not equal; held back "
        "(TCPSpuriousRtxHostQueues) is the kernel's only; recoveries: the kernel also counts one "
        "it entered and left without sending anything again, so the analysis' may be fewer. "
        "`disagree`: replications where a quantity does not relate as it must; per replication "
        "in summary/kernel.csv.")
