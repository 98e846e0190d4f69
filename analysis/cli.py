"""`squall analyze | report | plot RUN_DIR` (registered into testbed/cli.py's parser).

- analyze: every replication -> summary/connections.csv, runs.csv, cells.csv (+
  analysis.json); progress on stderr; exit 1 when some replication was unanalysable.
- report: summary/report.md (also printed) and the self-contained summary/report.html;
  analyses the run first unless summary/analysis.json is newer than every replication's
  status.json (--reanalyse to redo anyway).
- plot: PNGs into summary/plots/ (box plots and channel timeline of the run, and per
  replication the time-sequence diagram and the queue plot)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from analysis.errors import AnalysisInputError
from analysis.run import RunAnalysis, analyse_run
from analysis.summary import ANALYSIS_JSON, SUMMARY_DIR, load_analysis, write_summary
from analysis.tcp_metrics import RTO_FLOOR_US


def _analyse(args: argparse.Namespace) -> RunAnalysis:
    analysis = analyse_run(Path(args.run_dir), jobs=args.jobs, rto_floor_us=args.rto_floor_us)
    out = write_summary(analysis)
    print(f"squall analyze: wrote {out}/connections.csv, runs.csv, cells.csv", file=sys.stderr)
    return analysis


def _stale(root: Path) -> bool:
    """No saved analysis, or a replication finished after it was written (a resumed run)."""
    saved = root / SUMMARY_DIR / ANALYSIS_JSON
    if not saved.exists():
        return True
    written = saved.stat().st_mtime
    return any(p.stat().st_mtime > written for p in root.glob("cells/*/rep-*/status.json"))


def _analysis(args: argparse.Namespace) -> RunAnalysis:
    root = Path(args.run_dir)
    if args.reanalyse or _stale(root):
        return _analyse(args)
    return load_analysis(root)


def _unanalysable(analysis: RunAnalysis) -> int:
    bad = [r for r in analysis.replications if r.error]
    for r in bad:
        print(f"squall: {r.ref.cell} rep {r.ref.rep} unanalysable: {r.error}", file=sys.stderr)
    return 1 if bad else 0


def analyze_command(args: argparse.Namespace) -> int:
    return _unanalysable(_analyse(args))


def report_command(args: argparse.Namespace) -> int:
    from analysis.plots import plot_run
    from analysis.report import build_tables, render_markdown
    from analysis.report_html import render_html

    analysis = _analysis(args)
    out = Path(args.run_dir) / SUMMARY_DIR
    tables = build_tables(analysis)
    markdown = render_markdown(analysis, tables)
    (out / "report.md").write_text(markdown)
    print(markdown)
    plots = plot_run(analysis, out / "plots") if not args.no_plots else []
    (out / "report.html").write_text(render_html(analysis, tables, plots))
    print(f"squall report: wrote {out}/report.md and report.html", file=sys.stderr)
    return 0


def plot_command(args: argparse.Namespace) -> int:
    from analysis.plots import plot_run

    if args.rep is not None and args.cell is None:
        print("squall plot: --rep needs --cell", file=sys.stderr)
        return 2
    analysis = _analysis(args)
    try:
        written = plot_run(analysis, Path(args.run_dir) / SUMMARY_DIR / "plots", args.cell,
                           args.rep, args.connection)
    except ValueError as e:
        print(f"squall plot: {e}", file=sys.stderr)
        return 2
    for path in written:
        print(path)
    return 0


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dir", help="a results/<scenario>-<stamp> directory")
    p.add_argument("--jobs", type=int, metavar="N",
                   help="replications analysed at once (default: 2 or the number of CPUs)")
    p.add_argument("--rto-floor-us", type=int, default=RTO_FLOOR_US, metavar="US",
                   help="minimum RTO for the retransmission classes (default %(default)s)")


def add_commands(sub: argparse._SubParsersAction) -> None:
    analyze = sub.add_parser("analyze", help="metrics of every replication of a run -> "
                             "summary/connections.csv, runs.csv, cells.csv")
    _common(analyze)
    analyze.set_defaults(func=_guarded(analyze_command))

    report = sub.add_parser("report", help="the studies' tables -> summary/report.md, report.html")
    _common(report)
    report.add_argument("--reanalyse", action="store_true",
                        help="analyse again even if summary/analysis.json exists")
    report.add_argument("--no-plots", action="store_true", help="tables only in report.html")
    report.set_defaults(func=_guarded(report_command))

    plot = sub.add_parser("plot", help="PNG plots -> summary/plots/")
    _common(plot)
    plot.add_argument("--reanalyse", action="store_true",
                      help="analyse again even if summary/analysis.json exists")
    plot.add_argument("--cell", help="only this cell (default: every cell)")
    plot.add_argument("--rep", type=int, metavar="N", help="this replication (needs --cell)")
    plot.add_argument("--connection", type=int, metavar="K",
                      help="only TCP connection K (1-based, by first SYN) in the time-sequence "
                           "diagram")
    plot.set_defaults(func=_guarded(plot_command))


def _guarded(command):
    def run(args: argparse.Namespace) -> int:
        try:
            return command(args)
        except (AnalysisInputError, ValueError, FileNotFoundError) as e:
            print(f"squall {args.command}: {e}", file=sys.stderr)
            return 2
    return run
