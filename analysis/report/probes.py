"""The report's table of probe flows (analysis/metrics/probes.py): per cell and probe flow the
medians over the replications of irtt's RTTs and one-way delays and the link's share."""
from __future__ import annotations

import re

from analysis.aggregate.run_analysis import CellResult
from analysis.report.metric_names import matching
from analysis.report.table import Cell, Table, count

_PROBES = re.compile(r"^(?P<flow>[^.]+)\.probes$")     # flow names have no dots


def probe_table(cells: list[CellResult]) -> Table | None:
    """None when no cell has a probe flow."""
    rows: list[list[Cell]] = []
    for c, m in matching(cells, _PROBES):
        f = m["flow"]
        rows.append([c.cell, f, *(count(c.median(f"{f}.{k}")) for k in ("probes", "probes_lost_up", "probes_lost_down")),
                     *(c.median(f"{f}.{k}_ms") for k in ("rtt_min", "rtt_median", "rtt_p95", "rtt_link_median",
                                                          "owd_up_median", "owd_down_median"))])
    if not rows:
        return None
    return Table("Probes (latency under load)",
                 ["cell", "flow", "probes", "lost up", "lost down", "RTT min (ms)", "RTT median (ms)",
                  "RTT 95th percentile (ms)", "link RTT median (ms)", "one-way up median (ms)",
                  "one-way down median (ms)"], rows,
                 "irtt's own round-trip and one-way delays of a probe flow's probes; losses per direction "
                 "from the emulator log's fate of each probe and its reply; the link RTT is the log's `in` "
                 "-> `out` of request and reply. Medians over replications of each one's value. Per "
                 "probe: summary/probes.csv.")
