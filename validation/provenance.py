"""Which squall revision produced each counted row of a study's committed data.

Row (cell, k) is round k's (study.json `rounds`, each with its revision), except in the cells
whose TCP profile keeps the metrics cache (expanded.json.gz: `flush_metrics` false): once the
study's CBI chains are finished (study.json `chains`), every row of those cells is the chains'
run's (validation/README.md, "The full validation, over several sittings").
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path

from analysis.aggregate.run_analysis import CellResult

from .data import DataError


def chained_cells(directory: Path) -> set[str]:
    """The cells run as CBI chains, from the first recorded round's expansion."""
    path = directory / "expanded.json.gz"
    try:
        cells = json.loads(gzip.decompress(path.read_bytes()))["cells"]
    except (OSError, ValueError, KeyError) as e:
        raise DataError(f"{path}: cannot read the expanded cells ({e})") from None
    return {c["cell"] for c in cells if c.get("tcp") and not c["tcp"].get("flush_metrics", True)}


def row_revisions(directory: Path, record: dict, cells: list[CellResult]) -> dict[str, int]:
    """Revision (12 hex digits) -> counted rows it produced; "unknown" for a row whose round is
    not recorded."""
    rounds = record.get("rounds") or {}
    chains = record.get("chains") or {}
    chained = chained_cells(directory) if chains.get("squall_revision") else set()
    out: dict[str, int] = {}
    for cell in cells:
        for r in cell.replications:
            if not r.counts:
                continue
            if cell.cell in chained:
                revision = chains["squall_revision"]
            else:
                revision = (rounds.get(str(r.ref.rep)) or {}).get("squall_revision", "unknown")
            out[revision[:12]] = out.get(revision[:12], 0) + 1
    return out


def provenance_text(study: str, revisions: dict[str, int], chain_revision: str | None) -> str:
    """`iip-http: 8209e5812032 480 rows (CBI chains), a5dd61d3ee0f 96, …`, most rows first."""
    parts = [f"{rev} {n} rows" + (" (CBI chains)" if chain_revision and rev == chain_revision[:12] else "")
             for rev, n in sorted(revisions.items(), key=lambda kv: (-kv[1], kv[0]))]
    return f"{study} ({sum(revisions.values())} counted rows): " + ", ".join(parts)
