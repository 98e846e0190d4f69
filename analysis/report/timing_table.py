"""The report's table of the end-to-end timing error: how far the host captures and the
emulator log disagree about when packets passed (status.json `timing_error`, measured by
`squall run`: testbed/run/timing.py, docs/runner.md).

Per cell and capture point (ingress: a host's capture → the emulator's `in`; egress: the
emulator's scheduled `out` → the receiving host's capture), over the ok and degraded
replications: the median of their p50 and p99, the largest p99, the smallest and the largest
delay, how many packets were beyond the tolerance (of all measured there) and how many
replications were (their p99 beyond it, or clocks that disagree)."""

from __future__ import annotations

import json
import statistics
from typing import Any

from analysis.aggregate.run_analysis import CellResult, RunAnalysis
from analysis.report.table import Table
from analysis.results.directory import STATUS_FILE

POINTS = (("ingress", "fixed"), ("ingress", "mobile"), ("egress", "fixed"), ("egress", "mobile"))


def replication_timing(directory: Any) -> dict[str, Any] | None:
    """status.json's `timing_error` of a replication directory; None when it has none."""
    try:
        status = json.loads((directory / STATUS_FILE).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(status, dict) or status.get("status") not in ("ok", "degraded"):
        return None
    timing = status.get("details", {}).get("timing_error")
    return timing if isinstance(timing, dict) else None


def _beyond(group: dict[str, Any], tolerance: int) -> bool:
    return bool(group.get("judged")) and bool(group.get("n")) and \
        (group["p99_us"] > tolerance or group["min_us"] < -tolerance)


def _rows(cell: CellResult) -> list[list[Any]]:
    timings = [t for t in (replication_timing(r.ref.directory) for r in cell.replications) if t]
    rows = []
    for kind, side in POINTS:
        groups = [(t[kind][side], t["tolerance_us"]) for t in timings
                  if isinstance(t.get(kind), dict) and t[kind].get(side, {}).get("n")]
        if not groups:
            continue
        judged = all(g.get("judged", True) for g, _ in groups)
        rows.append([cell.cell, f"{kind} {side}", "yes" if judged else "no (tc router)",
                     round(statistics.median(g["p50_us"] for g, _ in groups)),
                     round(statistics.median(g["p99_us"] for g, _ in groups)),
                     round(max(g["p99_us"] for g, _ in groups)), min(g["min_us"] for g, _ in groups),
                     max(g["max_us"] for g, _ in groups),
                     f"{sum(g.get('over_tolerance', 0) for g, _ in groups)} of {sum(g['n'] for g, _ in groups)}",
                     f"{sum(_beyond(g, tol) for g, tol in groups)} of {len(groups)}"])
    return rows


def timing_table(analysis: RunAnalysis) -> Table | None:
    rows = [row for cell in analysis.cells for row in _rows(cell)]
    if not rows:
        return None
    return Table("End-to-end timing error (µs)",
                 ["cell", "capture point", "judged", "p50 (median)", "p99 (median)", "p99 (max)", "min", "max",
                  "packets beyond tolerance", "replications beyond tolerance"], rows,
                 "Ingress: a host's capture → the emulator's `in`; egress: the emulator's scheduled `out` → "
                 "the receiving host's capture (packets matched by identity). Over the ok and degraded "
                 "replications; a degraded one (p99 beyond the scenario's timing_tolerance) is listed "
                 "with its numbers among the replications not in the statistics.")
