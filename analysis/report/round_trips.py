"""The report's table of probes' round trips by the link's state (analysis/metrics/round_trips.py):
per cell, flow and state the medians over the replications of each one's values."""
from __future__ import annotations

import re

from analysis.aggregate.run_analysis import CellResult
from analysis.report.metric_names import matching
from analysis.report.table import Cell, Table, count

_PROBES = re.compile(r"^(?P<flow>.+)\.rtt\.(?P<state>[^.]+)\.probes$")


def round_trip_table(cells: list[CellResult]) -> Table | None:
    """None when no flow had requests and replies."""
    rows: list[list[Cell]] = []
    for c, m in matching(cells, _PROBES):
        prefix = f"{m['flow']}.rtt.{m['state']}"
        rows.append([c.cell, m["flow"], m["state"], count(c.median(f"{prefix}.probes")),
                     count(c.median(f"{prefix}.answered")), c.median(f"{prefix}.median_ms"),
                     c.median(f"{prefix}.p95_ms")])
    if not rows:
        return None
    return Table("Round trips of requests and replies by the link's state",
                 ["cell", "flow", "link state", "requests median", "answered median",
                  "RTT median (ms)", "RTT 95th percentile (ms)"], rows,
                 "A flow's UDP requests (from the endpoint that sent first) and the replies matched "
                 "to them in the emulator log (a reply entering the link within 100 ms of the "
                 "latest request's delivery), grouped by the link's state when the request entered it; "
                 "RTT in the client's capture; medians over replications of each one's median and "
                 "95th percentile. Per request: summary/round_trips.csv.")
