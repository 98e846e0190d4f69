"""`squall compare RUN_A [RUN_B …] [--cells GLOB] [--vs GLOB] [--metric GLOB …] [--out DIR]`
-> DIR/compare.md (also printed), DIR/compare.html and DIR/plots/. Exit 0 whenever the
comparison could be made, also when some have too few replications for an interval (the
report says so)."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from analysis.aggregate.summary import SUMMARY_DIR
from analysis.compare.comparisons import compare
from analysis.compare.plots import plot_all
from analysis.compare.report import (effects_table, overview, render_html, render_markdown,
                                     runs_table, sides_table)
from analysis.compare.sides import load, metrics, pairs_in_run, pairs_of_runs
from analysis.results.atomic_file import write_text_atomically


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.+-]+", "-", text).strip("-") or "all"


def default_out(run_dirs: list[Path], cells: str, vs: str | None) -> Path:
    """Beside the first run's report: summary/compare-<what>/."""
    what = f"{cells}-vs-{vs}" if vs else "vs-" + "+".join(d.name for d in run_dirs[1:])
    return run_dirs[0] / SUMMARY_DIR / f"compare-{_slug(what)}"


def compare_command(args: argparse.Namespace) -> int:
    dirs = [Path(d) for d in args.run_dirs]
    if (len(dirs) == 1) == (args.vs is None):
        print("squall compare: give two or more runs, or one run with --cells A_GLOB --vs "
              "B_GLOB", file=sys.stderr)
        return 2
    runs = [load(d) for d in dirs]
    pairs = (pairs_in_run(runs[0], args.cells, args.vs) if args.vs
             else pairs_of_runs(runs, args.cells))
    comparisons = compare(pairs, metrics(pairs, args.metric or []))
    out = Path(args.out) if args.out else default_out(dirs, args.cells, args.vs)
    out.mkdir(parents=True, exist_ok=True)
    plots = plot_all(comparisons, out / "plots") if not args.no_plots else []
    title = "squall compare: " + (f"{args.vs} against {args.cells} in {runs[0].name}" if args.vs
                                  else ", ".join(r.root.name for r in runs[1:])
                                  + f" against {runs[0].root.name}")
    lines, tables = overview(comparisons), [runs_table(runs), sides_table(pairs),
                                            effects_table(comparisons)]
    markdown = render_markdown(title, lines, tables, plots)
    write_text_atomically(out / "compare.md", markdown)
    write_text_atomically(out / "compare.html", render_html(title, lines, tables, plots))
    print(markdown)
    print(f"squall compare: wrote {out}/compare.md and compare.html", file=sys.stderr)
    return 0


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dirs", nargs="+", metavar="RUN_DIR",
                   help="runs (results/<scenario>-<stamp>): the first is A, each other one B; "
                        "or one run with --vs")
    p.add_argument("--cells", default="*", metavar="GLOB",
                   help="the cells compared (A's with --vs; default every cell)")
    p.add_argument("--vs", metavar="GLOB",
                   help="one run: B is the cells matching this, each compared with the A cell "
                        "that shares the most axis labels")
    p.add_argument("--metric", action="append", metavar="GLOB",
                   help="a runs-table column to compare (glob; repeatable; default the flows' "
                        "response_time_s, elapsed_s, throughput_Bps, loss_pct, jitter_mean_ms)")
    p.add_argument("--out", metavar="DIR",
                   help="where compare.md, compare.html and plots/ go (default RUN_A/summary/"
                        "compare-<what>/)")
    p.add_argument("--no-plots", action="store_true", help="tables only")
