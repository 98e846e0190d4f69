"""The end of a run: the analysis of its results (summary tables, report), the status table,
and what is left to do (resume, redo the degraded or timed-out replications kept as results)."""
from __future__ import annotations

from pathlib import Path
from typing import TextIO

from analysis.results.degraded import busy_advice, degraded_of
from testbed.run.local_runner import RunResult
from testbed.run.results import RunDir, Status
from testbed.run.status import print_report
from testbed.scenario.cell import ResolvedCell


def finish(run_dir: RunDir, cells: list[ResolvedCell], reps: range, result: RunResult, analyse_at_end: bool,
           out: TextIO, err: TextIO) -> int:
    """The end of a run whose replications ran here: the analysis (`analyse_at_end`, unless it was
    interrupted), the status table, what went wrong and how to resume; the exit code."""
    if analyse_at_end and result.interrupted_by is None:
        analyse(run_dir.root, out, err, run_dir.incomplete([c.cell_id for c in cells], reps))
    print_report(run_dir, cells, reps, out)
    for error in result.errors:
        print(f"squall run: {error}", file=err)
    if result.interrupted_by is not None or result.errors:
        print(f"squall run: stopped; every lane is torn down. Resume with:\n"
              f"  squall run --resume {run_dir.root}", file=err)
    elif any(s == "failed" for s in result.statuses.values()):
        print(f"squall run: some replications failed (reasons in their status.json); redo them with:\n"
              f"  squall run --resume {run_dir.root}", file=err)
    if result.interrupted_by is not None:
        return result.exit_code
    # Degraded and timed-out ones a resume kept count too: the run is not all ok.
    kept = say_kept(run_dir, cells, reps, err)
    return max(result.exit_code, 1 if kept else 0)


KEPT_NOT_OK = {
    "degraded": ("degraded (timing error or CPU wait beyond the scenario's timing_tolerance or "
                 "cpu_wait_tolerance): analysed, but not in the statistics; the report lists their values "
                 "apart", "--redo-degraded"),
    "timeout": ("timed out with flows unfinished: kept as results, their unfinished times counted "
                "as longer than the timeout (analysis/README.md)", "--redo-timeouts"),
}
CAUSES_SHOWN = 10


def say_kept(run_dir: RunDir, cells: list[ResolvedCell], reps: range, err: TextIO,
              engine: str = "") -> int:
    """How many of the selected replications are results that are not ok (degraded, timed
    out), why the degraded ones are (what waited, the tolerance), what to do, and how to run
    them again."""
    kept = [(c.cell_id, r, s) for c in cells for r in reps
            if (s := run_dir.status(c.cell_id, r)) is not None and s.status in KEPT_NOT_OK]
    for status, (what, flag) in KEPT_NOT_OK.items():
        mine = [(cell, r, s) for cell, r, s in kept if s.status == status]
        if not mine:
            continue
        print(f"squall run: {len(mine)} replication(s) {what}", file=err)
        if status == "degraded":
            say_degraded(run_dir, mine, err)
        print(f"squall run: to run them again:\n  squall run --resume {run_dir.root} {flag}{engine}", file=err)
    return len(kept)


def say_degraded(run_dir: RunDir, degraded: list[tuple[str, int, Status]], err: TextIO) -> None:
    """Each degraded replication's cause (the first CAUSES_SHOWN), then the remedy once."""
    causes = [(cell, r, degraded_of(s.reason, s.details)) for cell, r, s in degraded]
    for cell, r, d in causes[:CAUSES_SHOWN]:
        print(f"  {cell} rep-{r:02d}: {d.cause}", file=err)
    if len(causes) > CAUSES_SHOWN:
        print(f"  and {len(causes) - CAUSES_SHOWN} more (`squall status {run_dir.root}`)", file=err)
    print(f"squall run: the machine was too busy for them: "
          f"{busy_advice(d.tolerance_key for _, _, d in causes)}", file=err)


# --- the report ------------------------------------------------------------------------------

def analyse(root: Path, out: TextIO, err: TextIO, incomplete: list[str] | None = None) -> None:
    """The analysis package's report of the run (summary/*.csv, report.md, report.html, plots/).

    Its failure is reported, never the run's: the replications are recorded either way and
    `squall report RUN_DIR` can be run again. `incomplete`: the replications without an ok
    result (RunDir.incomplete), named either way."""
    incomplete = incomplete or []
    if incomplete:
        shown = "; ".join(incomplete[:20]) + (f"; and {len(incomplete) - 20} more" if len(incomplete) > 20 else "")
        recorded = f"{len(incomplete)} replication(s) are missing, partial or failed ({shown})"
        print(f"squall run: {recorded}; the analysis counts them as failed", file=err)
    else:
        recorded = "every replication is recorded ok"
    try:
        from analysis.report.run_report import AnalysisOptions, write_report

        report = write_report(root, options=AnalysisOptions(progress=err))
        print(report.markdown, file=out)
        print(f"squall run: analysis in {report.summary} (report.md, report.html with its plots, "
              f"connections.csv, runs.csv, cells.csv; the plots in plots/)", file=err)
    except Exception as e:   # noqa: BLE001 — another package's failure must not lose the run
        print(f"squall run: the analysis failed ({type(e).__name__}: {e}); {recorded}; "
              f"retry with `squall report {root}`", file=err)
