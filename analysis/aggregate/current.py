"""A run's analysis, made now or reused: summary/analysis.json is reused while it is newer than
every replication's status.json (a resumed run makes it stale). `squall analyze | report |
plot`, the report at the end of `squall run` and `analysis.load_run` all get it here."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from analysis.aggregate.run_analysis import RunAnalysis, analyse_run
from analysis.aggregate.summary import ANALYSIS_JSON, TABLES, load_analysis, write_summary
from analysis.metrics.series import SERIES_INTERVAL_US
from analysis.metrics.tcp import RTO_FLOOR_US
from analysis.results.directory import CELLS_DIR, STATUS_FILE, SUMMARY_DIR


@dataclass(frozen=True)
class AnalysisOptions:
    """How the run's replications are analysed (the `squall analyze | report | plot` options)."""
    jobs: int | None = None                  # replications at once (None: analyse_run's default)
    rto_floor_us: int = RTO_FLOOR_US
    interval_us: int = SERIES_INTERVAL_US
    progress: TextIO | None = None           # a line per replication analysed here (None: quiet)


def stale(root: Path) -> bool:
    """No saved analysis, or a replication finished after it was written (a resumed run)."""
    saved = root / SUMMARY_DIR / ANALYSIS_JSON
    if not saved.exists() or any(not (root / SUMMARY_DIR / f"{t}.csv").exists() for t in TABLES):
        return True     # never analysed, or by a squall without some table
    written = saved.stat().st_mtime
    return any(p.stat().st_mtime > written for p in root.glob(f"{CELLS_DIR}/*/rep-*/{STATUS_FILE}"))


def analyse_and_summarise(root: Path, options: AnalysisOptions = AnalysisOptions()) -> RunAnalysis:
    """Every replication analysed, and the summary/ tables and analysis.json written."""
    analysis = analyse_run(root, jobs=options.jobs, progress=options.progress,
                           rto_floor_us=options.rto_floor_us, interval_us=options.interval_us)
    write_summary(analysis)
    return analysis


def current_analysis(root: Path, reanalyse: bool, options: AnalysisOptions = AnalysisOptions()
                     ) -> tuple[RunAnalysis, bool]:
    """The run's analysis, made again when asked or when the saved one is stale; and whether
    it was made now."""
    if reanalyse or stale(root):
        return analyse_and_summarise(root, options), True
    return load_analysis(root), False
