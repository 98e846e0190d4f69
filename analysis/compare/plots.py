"""One plot per metric: for each pair of cells, A's and B's replications side by side, each
as a box (25th to 75th percentile, line at the median, whiskers at the minimum and maximum)
with every replication's value drawn over it as a point (spread sideways by a seeded jitter,
so points of equal value stay visible). PNG (150 dpi) and SVG."""

from __future__ import annotations

import math
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from analysis.compare.comparisons import Comparison, unit  # noqa: E402

PNG_DPI = 150
COLOURS = ("#4c72b0", "#dd8452")      # A, B
CAPTION = ("{metric}: each pair's A (blue, left) and B (orange, right) over the replications "
           "in the statistics; box from the 25th to the 75th percentile, line at the median, "
           "whiskers at the minimum and maximum, one point per replication.")


def file_stem(metric: str) -> str:
    return "compare_" + re.sub(r"[^A-Za-z0-9_.-]+", "-", metric)


def _finite(values: list[float]) -> list[float]:
    return [v for v in values if math.isfinite(v)]


def _draw(ax, comparisons: list[Comparison]) -> None:
    jitter = np.random.default_rng(2004)
    for i, c in enumerate(comparisons):
        for side, values in enumerate((_finite(c.a), _finite(c.b))):
            x = 3 * i + side
            if values:
                ax.boxplot([values], positions=[x], widths=0.7, whis=(0, 100),
                           showfliers=False, medianprops={"color": COLOURS[side]})
                ax.scatter(x + jitter.uniform(-0.2, 0.2, len(values)), values, s=12,
                           color=COLOURS[side], alpha=0.8, zorder=3)
    ax.set_xticks([3 * i + 0.5 for i in range(len(comparisons))])
    many = len(comparisons) > 2
    ax.set_xticklabels([c.pair.short.replace(" ", "\n") for c in comparisons],
                       rotation=20 if many else 0, ha="right" if many else "center", fontsize=7)
    ax.set_xlim(-1, 3 * len(comparisons) - 1)


def plot_metric(metric: str, comparisons: list[Comparison], out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(max(5.0, 1.4 * len(comparisons) + 2), 4.2))
    _draw(ax, comparisons)
    sides = {c.pair.sides for c in comparisons}
    a, b = sides.pop() if len(sides) == 1 else ("A", "B")
    ax.legend(handles=[plt.Line2D([], [], marker="o", ls="", color=colour, label=f"{side}: {name}")
                       for side, name, colour in (("A", a, COLOURS[0]), ("B", b, COLOURS[1]))],
              fontsize=7, loc="best")
    ax.set_title(metric, fontsize=9)
    ax.set_ylabel(f"{metric} ({unit(metric)})" if unit(metric) else metric)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    png = out / f"{file_stem(metric)}.png"
    fig.savefig(png, dpi=PNG_DPI)
    fig.savefig(png.with_suffix(".svg"))
    plt.close(fig)
    return png


def plot_all(comparisons: list[Comparison], out: Path) -> list[Path]:
    by_metric: dict[str, list[Comparison]] = {}
    for c in comparisons:
        by_metric.setdefault(c.metric, []).append(c)
    return [plot_metric(m, cs, out) for m, cs in by_metric.items()]
