"""Which replications `squall plot` and the report draw one by one: by default the first of
each cell in the statistics; a cell with none there (all degraded, say) the first analysed
one, and its plots' titles say so."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from analysis.aggregate.replication_values import ReplicationResult
from analysis.aggregate.run_analysis import CellResult, RunAnalysis


@dataclass(frozen=True)
class ChosenReplication:
    cell: str
    rep: int
    directory: Path
    status: str              # status.json's: ok, degraded, timeout
    counts: bool             # in the statistics
    fallback: bool = False   # the default of a cell with no replication in the statistics

    @property
    def name(self) -> str:
        """The plots' file name part: `<cell>_rep-NN`."""
        return f"{self.cell}_rep-{self.rep:02d}"

    @property
    def what(self) -> str:
        """`cell C, replication N`, and why it is not in the statistics when it is not."""
        text = f"cell {self.cell}, replication {self.rep}"
        if self.counts:
            return text
        why = "; the cell has no replication in the statistics" if self.fallback else ""
        return f"{text} ({self.status}: not in the statistics{why})"


def _chosen(cell: CellResult, r: ReplicationResult, fallback: bool = False) -> ChosenReplication:
    return ChosenReplication(cell.cell, r.ref.rep, r.ref.directory, r.ref.status, r.counts,
                             fallback)


def default_replications(analysis: RunAnalysis) -> list[ChosenReplication]:
    """Of each cell the first replication in the statistics, else its first analysed one."""
    chosen = []
    for cell in analysis.cells:
        r = next((r for r in cell.replications if r.counts), None)
        if r is not None:
            chosen.append(_chosen(cell, r))
        elif (r := next((r for r in cell.replications if r.analysed), None)) is not None:
            chosen.append(_chosen(cell, r, fallback=True))
    return chosen


def chosen_replications(analysis: RunAnalysis, cell: str | None = None,
                        replication: int | str | None = None) -> list[ChosenReplication]:
    """The replications to plot: `replication` None the default of each cell, "all" every
    analysed one, N replication N; of one cell or of all."""
    cells = [c for c in analysis.cells if cell is None or c.cell == cell]
    if cell is not None and not cells:
        raise ValueError(f"{analysis.layout.root}: no cell {cell} (cells: "
                         f"{', '.join(c.cell for c in analysis.cells)})")
    if replication is None:
        targets = [t for t in default_replications(analysis) if cell is None or t.cell == cell]
    else:
        targets = [_chosen(c, r) for c in cells for r in c.replications
                   if r.analysed and (replication == "all" or r.ref.rep == replication)]
    if not targets:
        what = "no analysed replication" if replication in (None, "all") else \
            f"no analysed replication {replication}"
        raise ValueError(f"{analysis.layout.root}: {what}"
                         + (f" in cell {cell}" if cell else ""))
    return targets
