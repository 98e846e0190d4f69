"""The roles of a cell's bulk transfers in the report: ranked when they start together, else
named by their flow."""

from __future__ import annotations

from analysis.aggregate.replication_values import role_names
from analysis.aggregate.run_analysis import CellResult


def bulk_roles(cell: CellResult) -> list[tuple[str, str]]:
    """(role, metric prefix) of the cell's bulk transfers: two or more starting together
    ranked (`fastest` … `slowest`, `tcp.<role>`), then each other transfer (one alone, or
    one starting later) under its flow name (`<flow>`)."""
    bulk = cell.flows_of("bulk")
    first = min((f.start_us or 0 for f in bulk), default=0)
    together = [f for f in bulk if (f.start_us or 0) == first]
    n = max((int(r.values.get("tcp.transfers") or 0) for r in cell.replications
             if r.counts), default=len(together))
    ranked = [(r, f"tcp.{r}") for r in role_names(n)
              if f"tcp.{r}.elapsed_s" in cell.summaries] if n > 1 else []
    alone = [f for f in bulk if f not in together or not ranked]
    return ranked + [(f.name, f.name) for f in alone]
