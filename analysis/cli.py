"""`squall analyze | report | plot RUN_DIR` (registered into testbed/cli.py's parser).

- analyze: every replication -> summary/connections, runs, cells, throughput, delays,
  tcpinfo, kernel (.csv and .parquet; + analysis.json); progress on stderr; exit 1 when some
  replication was unanalysable.
- report: summary/report.md (also printed) and the self-contained summary/report.html:
  what was run, then the results (the studies' layouts for the studies' scenarios, plain
  tables with units for any other);
  analyses the run first unless summary/analysis.json is newer than every replication's
  status.json (--reanalyse to redo anyway).
- plot: PNG and SVG into summary/plots/ (box plots, CDFs, throughput over time and the
  channel timeline of the run; per chosen replication, --replication N|all, the
  time-sequence diagram, the throughput and link delay series, the kernel's cwnd and RTT
  (tcp_info) and the queue plot; by default the first replication of each cell in the
  statistics).
- compare: the effect of B against A (analysis/compare/command.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from analysis.aggregate.current import AnalysisOptions, analyse_and_summarise, current_analysis
from analysis.aggregate.run_analysis import RunAnalysis
from analysis.errors import AnalysisInputError
from analysis.metrics.series import SERIES_INTERVAL_US
from analysis.metrics.tcp import RTO_FLOOR_US
from analysis.results.directory import SUMMARY_DIR


def _options(args: argparse.Namespace) -> AnalysisOptions:
    return AnalysisOptions(jobs=args.jobs, rto_floor_us=args.rto_floor_us,
                           interval_us=round(args.interval_ms * 1000), progress=sys.stderr)


def _wrote_summary(root: Path) -> None:
    print(f"squall analyze: wrote {root / SUMMARY_DIR}/connections, runs, cells, throughput, "
          "delays, tcpinfo, kernel (.csv and .parquet)", file=sys.stderr)


def _analyse(args: argparse.Namespace) -> RunAnalysis:
    analysis = analyse_and_summarise(Path(args.run_dir), _options(args))
    _wrote_summary(Path(args.run_dir))
    return analysis


def _analysis(args: argparse.Namespace) -> RunAnalysis:
    analysis, analysed = current_analysis(Path(args.run_dir), args.reanalyse, _options(args))
    if analysed:
        _wrote_summary(Path(args.run_dir))
    return analysis


def _unanalysable(analysis: RunAnalysis) -> int:
    bad = [r for r in analysis.replications if r.error]
    for r in bad:
        print(f"squall: {r.ref.cell} rep {r.ref.rep} unanalysable: {r.error}", file=sys.stderr)
    return 1 if bad else 0


def analyze_command(args: argparse.Namespace) -> int:
    return _unanalysable(_analyse(args))


def report_command(args: argparse.Namespace) -> int:
    from analysis.report.run_report import write_report

    report = write_report(Path(args.run_dir), args.reanalyse, not args.no_plots, _options(args))
    if report.analysed:
        _wrote_summary(Path(args.run_dir))
    print(report.markdown)
    print(f"squall report: wrote {report.summary}/report.md and report.html", file=sys.stderr)
    return 0


def plot_command(args: argparse.Namespace) -> int:
    from analysis.report.plots import plot_run

    if args.rep is not None and args.cell is None:
        print("squall plot: --rep needs --cell", file=sys.stderr)
        return 2
    analysis = _analysis(args)
    try:
        written = plot_run(analysis, Path(args.run_dir) / SUMMARY_DIR / "plots", args.cell,
                           args.rep, args.connection, args.replication)
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
    p.add_argument("--interval-ms", type=_positive_ms, default=SERIES_INTERVAL_US / 1000,
                   metavar="MS", help="bin of the throughput time series (default %(default)g)")


def _replication(text: str) -> int | str:
    if text == "all":
        return text
    if text.isdigit() and int(text) > 0:
        return int(text)
    raise argparse.ArgumentTypeError(f"{text!r}: expected a replication number or 'all'")


def _positive_ms(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of milliseconds") from None
    if not 0.001 <= value <= 3_600_000:
        raise argparse.ArgumentTypeError(f"{text} ms: expected 0.001 to 3600000")
    return value


def add_commands(sub: argparse._SubParsersAction) -> None:
    analyze = sub.add_parser("analyze", help="metrics of every replication of a run -> "
                             "summary/ connections, runs, cells, throughput, delays, tcpinfo, "
                             "kernel (.csv, .parquet)")
    _common(analyze)
    analyze.set_defaults(func=_guarded(analyze_command))

    report = sub.add_parser("report", help="what was run and its results in tables and plots "
                            "-> summary/report.md, report.html")
    _common(report)
    report.add_argument("--reanalyse", action="store_true",
                        help="analyse again even if summary/analysis.json exists")
    report.add_argument("--no-plots", action="store_true", help="tables only in report.html")
    report.set_defaults(func=_guarded(report_command))

    plot = sub.add_parser("plot", help="plots (PNG and SVG) -> summary/plots/")
    _common(plot)
    plot.add_argument("--reanalyse", action="store_true",
                      help="analyse again even if summary/analysis.json exists")
    plot.add_argument("--cell", help="only this cell (default: every cell)")
    plot.add_argument("--rep", type=int, metavar="N", help="this replication (needs --cell)")
    plot.add_argument("--replication", type=_replication, metavar="N|all",
                      help="the replication(s) whose time-sequence, time-series and queue "
                           "plots are drawn, of every cell or of --cell (default: the first "
                           "analysed one of each cell)")
    plot.add_argument("--connection", type=int, metavar="K",
                      help="only TCP connection K (1-based, by first SYN) in the time-sequence "
                           "diagram")
    plot.set_defaults(func=_guarded(plot_command))

    from analysis.compare.command import add_arguments, compare_command
    compare = sub.add_parser("compare", help="the effect of B against A per cell and metric "
                             "(two runs, or two sets of cells of one run) -> compare.md, "
                             "compare.html")
    add_arguments(compare)
    compare.set_defaults(func=_guarded(compare_command))


def _guarded(command):
    def run(args: argparse.Namespace) -> int:
        try:
            return command(args)
        except (AnalysisInputError, ValueError, FileNotFoundError) as e:
            print(f"squall {args.command}: {e}", file=sys.stderr)
            return 2
    return run
