"""A run's summary and report, made in one place: analyse (or reuse a fresh analysis) ->
summary/ tables -> report tables -> report.md -> plots -> report.html.

`squall run` calls it at its end and `squall report` for an existing run, so both reports are
the same file with the same plots."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from analysis.aggregate.current import AnalysisOptions, current_analysis
from analysis.aggregate.run_analysis import RunAnalysis
from analysis.report.contents import build_tables, render_markdown
from analysis.report.html import render_html
from analysis.results.atomic_file import write_text_atomically
from analysis.results.directory import SUMMARY_DIR


@dataclass(frozen=True)
class RunReport:
    analysis: RunAnalysis
    summary: Path            # the run's summary/ directory, where every file below is
    analysed: bool           # the replications were analysed now (False: analysis.json reused)
    markdown: str            # report.md's text
    plots: list[Path]        # the plots report.html embeds (PNG; their SVG beside them)


def write_report(root: Path, reanalyse: bool = True, plots: bool = True,
                 options: AnalysisOptions = AnalysisOptions()) -> RunReport:
    """The run's summary/ tables, report.md, plots and report.html (tables only when `plots` is
    false), all under RUN_DIR/summary/."""
    from analysis.report.plots import plot_run    # matplotlib only when a report is made

    analysis, analysed = current_analysis(root, reanalyse, options)
    out = root / SUMMARY_DIR
    tables = build_tables(analysis)
    markdown = render_markdown(analysis, tables)
    write_text_atomically(out / "report.md", markdown)
    drawn = plot_run(analysis, out / "plots") if plots else []
    write_text_atomically(out / "report.html", render_html(analysis, tables, drawn))
    return RunReport(analysis, out, analysed, markdown, drawn)
