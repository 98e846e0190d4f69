"""The analysis' warnings as a table of the report: for each analysed replication what it could
not know and why (a value left empty, e.g. a UDP flow's loss without its sender's capture), and
what disagreed (squall-udp's own counts against the captures, a page time against the
client's). The same texts are in analysis.json (`warnings`); the empty cells of
`connections` say theirs in `na_reason`."""
from __future__ import annotations

from analysis.aggregate.run_analysis import RunAnalysis
from analysis.report.table import Table


def warnings_table(analysis: RunAnalysis) -> Table | None:
    """One row per replication and warning, in cell and replication order; None without any."""
    rows: list[list[str | int | float | None]] = [
        [c.cell, r.ref.rep, text] for c in analysis.cells for r in c.replications
        for text in r.warnings]
    if not rows:
        return None
    return Table("What the analysis could not know or found disagreeing",
                 ["cell", "replication", "warning"], rows,
                 "Empty values (–, an empty CSV cell, a Parquet null) are unknown, never 0: the "
                 "reason is here, and in `na_reason` of summary/connections.csv.")
