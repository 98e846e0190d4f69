"""The comparison's report: compare.md and the self-contained compare.html (tables and the
plots embedded as PNG), like the run report (analysis/report/html.py)."""

from __future__ import annotations

import base64
import html
from pathlib import Path

from analysis.aggregate.statistics import BOOTSTRAP_RESAMPLES
from analysis.compare.comparisons import ALPHA, Comparison, unit
from analysis.compare.effect import COMPARE_SEED, MIN_FOR_INTERVAL
from analysis.compare.plots import CAPTION
from analysis.compare.rank_test import EXACT_UP_TO
from analysis.compare.sides import Pair, Run
from analysis.report.html import STYLE, anchor, table_html
from analysis.report.table import Table, fmt, markdown_table

METHOD = (
    "Effect = B against A. Difference = median B − median A and ratio = median B / median A "
    f"(medians over the replications in the statistics). Their 95 % intervals: percentile "
    f"bootstrap, {BOOTSTRAP_RESAMPLES} resamples of each side with replacement, independently, "
    f"seeded with numpy.random.default_rng([{COMPARE_SEED}, n_A, n_B]) (the same values give "
    f"the same interval everywhere); none with fewer than {MIN_FOR_INTERVAL} replications on a "
    "side. p: two-sided Mann-Whitney U test (exact without ties up to "
    f"{EXACT_UP_TO} values, else the normal approximation with tie and continuity "
    "corrections). p (Holm): adjusted for the number of comparisons in this report by "
    f"Holm's step-down method (family-wise error rate). A difference is shown at "
    f"p (Holm) < {ALPHA} with an interval of the difference that excludes 0.")


def _interval(low: float | None, high: float | None) -> str:
    return "–" if low is None else f"[{fmt(low)}, {fmt(high)}]"


def _p(p: float | None) -> str:
    return "–" if p is None else f"{p:.2g}"


def effects_table(comparisons: list[Comparison]) -> Table:
    rows = []
    for c in comparisons:
        e = c.effect
        rows.append([c.pair.what, c.metric, unit(c.metric), e.n_a, e.n_b, e.median_a,
                     e.median_b, e.difference, _interval(e.difference_low, e.difference_high),
                     e.ratio, _interval(e.ratio_low, e.ratio_high), _p(c.p),
                     _p(c.p_adjusted), c.verdict])
    return Table("Effects", ["compared", "metric", "unit", "n A", "n B", "median A",
                             "median B", "B − A", "95 % interval", "B / A", "95 % interval",
                             "p", "p (Holm)", "verdict"], rows, METHOD)


def sides_table(pairs: list[Pair]) -> Table:
    rows = [[p.what, p.a_run.name, p.a_cell, p.b_run.name, p.b_cell] for p in pairs]
    return Table("What is compared", ["compared", "A run", "A cell", "B run", "B cell"], rows)


def runs_table(runs: list[Run]) -> Table:
    """Each run and where it came from (its meta.json)."""
    def given(run: Run, key: str) -> str:
        return str(run.meta.get(key) or "–")

    return Table("Runs", ["run", "directory", "description", "title", "note", "squall revision",
                          "scenario SHA-256"],
                 [[r.name, r.root.name, r.description, given(r, "title"), given(r, "note"),
                   given(r, "squall_revision"), given(r, "scenario_sha256")] for r in runs])


def overview(comparisons: list[Comparison]) -> list[str]:
    few = sum(not c.effect.has_interval for c in comparisons)
    lines = [f"{len(comparisons)} comparisons, {sum(c.verdict.startswith('B ') for c in comparisons)} "
             "with a difference shown."]
    if few:
        lines.append(f"{few} of them have too few replications for an interval (needs "
                     f"{MIN_FOR_INTERVAL} a side): their medians and p-values are shown, "
                     "no interval and no verdict.")
    if not comparisons:
        lines.append("No metric has values on both sides: nothing to compare.")
    return lines


def render_markdown(title: str, lines: list[str], tables: list[Table],
                    plots: list[Path]) -> str:
    out = [f"# {title}", "", *lines, ""]
    for t in tables:
        out += [f"## {t.title}", "", *markdown_table(t.header, [[fmt(v) for v in row]
                                                                for row in t.rows])]
        out += ["", t.note, ""] if t.note else [""]
    if plots:
        out += ["## Plots", ""] + [f"![{p.stem}](plots/{p.name})" for p in plots] + [""]
    return "\n".join(out)


def _figure(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    metric = path.stem.removeprefix("compare_")
    return (f'<figure><img alt="{html.escape(path.stem)}" src="data:image/png;base64,{data}">'
            f"<figcaption><b>{html.escape(path.name)}</b> (also as plots/"
            f"{html.escape(path.with_suffix('.svg').name)}): "
            f"{html.escape(CAPTION.format(metric=metric))}</figcaption></figure>")


def render_html(title: str, lines: list[str], tables: list[Table], plots: list[Path]) -> str:
    parts = [f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{html.escape(title)}'
             f"</title><style>{STYLE}</style></head><body>", f"<h1>{html.escape(title)}</h1>"]
    parts += [f"<p>{html.escape(line)}</p>" for line in lines]
    parts += [table_html(t, anchor(t.title)) for t in tables]
    if plots:
        parts.append('<h2 id="plots">Plots</h2>')
        parts += [_figure(p) for p in plots]
    parts.append("</body></html>\n")
    return "\n".join(parts)
