"""The report's degraded replications, apart from the statistics: why each one is degraded
(what waited, how long, the limit) and what to do (analysis/results/degraded.py), and the
values each one measured beside the median and n of the replications in the statistics, so
that a cell with n = 1 still shows what the others measured."""

from __future__ import annotations

from collections.abc import Callable

from analysis.aggregate.replication_values import ReplicationResult
from analysis.aggregate.run_analysis import CellResult, RunAnalysis
from analysis.report.bulk_roles import bulk_roles
from analysis.report.table import Cell, Table, kbit
from analysis.results.degraded import Degraded, busy_advice, degraded_of
from analysis.results.directory import STATUS_FILE, read_run_json

Scale = Callable[[float | None], float | None]


def _same(value: float | None) -> float | None:
    return value


def headline_metrics(cell: CellResult) -> list[tuple[str, str, Scale]]:
    """(what, metric, scale) of each flow's main measures, in the plain tables' units."""
    out: list[tuple[str, str, Scale]] = []
    for f in cell.flows_of("http"):
        out.append((f"{f.name} page response time (s)", f"{f.name}.response_time_s", _same))
    for role, prefix in bulk_roles(cell):
        out += [(f"{role} elapsed time (s)", f"{prefix}.elapsed_s", _same),
                (f"{role} throughput (kbit/s)", f"{prefix}.throughput_Bps", kbit)]
    for f in cell.flows_of("command"):
        out += [(f"{f.name} elapsed time (s)", f"{f.name}.elapsed_s", _same),
                (f"{f.name} throughput (kbit/s)", f"{f.name}.throughput_Bps", kbit),
                (f"{f.name} UDP throughput (kbit/s)", f"{f.name}.udp.throughput_Bps", kbit)]
    for f in cell.flows_of("udp"):
        out += [(f"{f.name} throughput (kbit/s)", f"{f.name}.throughput_Bps", kbit),
                (f"{f.name} loss (%)", f"{f.name}.loss_pct", _same),
                (f"{f.name} mean jitter (ms)", f"{f.name}.jitter_mean_ms", _same)]
    return out


def _degraded(analysis: RunAnalysis) -> list[tuple[CellResult, ReplicationResult]]:
    return [(c, r) for c in analysis.cells for r in c.replications if r.ref.status == "degraded"]


def cause_of(r: ReplicationResult) -> Degraded:
    status = read_run_json(r.ref.directory / STATUS_FILE)
    details = status.get("details")
    return degraded_of(r.ref.reason, details if isinstance(details, dict) else None)


def degraded_tables(analysis: RunAnalysis) -> list[Table]:
    """Why (and what to do), then the values; none without a degraded replication."""
    degraded = _degraded(analysis)
    if not degraded:
        return []
    causes = [(c, r, cause_of(r)) for c, r in degraded]
    why = Table("Degraded replications: why, and what to do", ["cell", "rep", "cause"],
                [[c.cell, r.ref.rep, d.cause] for c, r, d in causes],
                "Analysed, but not in the statistics: the machine was too busy for them; "
                + busy_advice(d.tolerance_key for _, _, d in causes) + ".")
    rows: list[list[Cell]] = []
    for c, r in degraded:
        for what, metric, scale in headline_metrics(c):
            value = r.values.get(metric)
            if value is not None:
                s = c.summaries.get(metric)
                rows.append([c.cell, r.ref.rep, what, scale(value), scale(c.median(metric)),
                             s.n if s else 0])
    values = Table("Degraded replications: their values (not in the statistics)",
                   ["cell", "rep", "measure", "value", "median in the statistics", "n"], rows,
                   "Each degraded replication's main measures, beside the median of the cell's "
                   "replications in the statistics and their number n (– when there are none).")
    return [why] + ([values] if rows else [])
