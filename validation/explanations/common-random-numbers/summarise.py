"""results.json of the common-random-numbers experiment (crn.toml): per link, per comparison
(IW4 - baseline, HTTP/1.0 - HTTP/1.1) and per error-draw mode, the paired differences of the
page response time over the replications both cells have, and the width of the 95 % bootstrap
interval of their mean.

    PYTHONPATH=. python validation/explanations/common-random-numbers/summarise.py RUN_DIR... > results.json

Replication k of two cells is a pair: the same good/bad timeline, and with draws by time the
same frame error for attempts starting at the same moment. A narrower interval by time than per
frame is what common random numbers buy; the ratio of the widths says how many times more
replications per-frame draws would need for the same width (its square).
"""
from __future__ import annotations

import argparse
import csv
import json
import random
import statistics
import sys
from pathlib import Path

RESAMPLES, SEED = 10_000, 31
METRIC = "web.response_time_s"
# (name, axis, value of the first cell, value of the second): first - second
COMPARISONS = (("iw4-baseline", "tcp", "iw4", "baseline"), ("http1.0-http1.1", "http", "1.0", "1.1"))


def cell_axes(cell: str) -> dict[str, str]:
    """link-r0_tcp-iw4_draws-by-time_http-1.0 -> {link: r0, tcp: iw4, draws: by-time, http: 1.0}."""
    return dict(part.split("-", 1) for part in cell.split("_"))


def page_times(runs: list[Path]) -> dict[tuple[str, ...], dict[int, float]]:
    """(link, tcp, draws, http) -> replication -> page time, of the ok, analysed replications."""
    times: dict[tuple[str, ...], dict[int, float]] = {}
    for run in runs:
        with (run / "summary" / "runs.csv").open() as f:
            for row in csv.DictReader(f):
                if row["status"] != "ok" or row["analysed"] != "True" or row.get(METRIC, "") in ("", "inf"):
                    continue
                a = cell_axes(row["cell"])
                times.setdefault((a["link"], a["tcp"], a["draws"], a["http"]), {})[int(row["replication"])] = \
                    float(row[METRIC])
    return times


def bootstrap_width(diffs: list[float]) -> float | None:
    """Width of the percentile bootstrap's 95 % interval of the mean difference."""
    if len(diffs) < 2:
        return None
    rng = random.Random(SEED)
    means = sorted(statistics.fmean(rng.choices(diffs, k=len(diffs))) for _ in range(RESAMPLES))
    return means[int(0.975 * RESAMPLES) - 1] - means[int(0.025 * RESAMPLES)]


def pairs(times: dict[tuple[str, ...], dict[int, float]], link: str, draws: str, axis: str, first: str,
          second: str) -> list[float]:
    """Per replication both cells have, first - second, over the other axis' values pooled."""
    out = []
    others = ("baseline",) if axis == "http" else ("1.0", "1.1")
    for other in others:
        key = {"tcp": lambda v: (link, v, draws, other), "http": lambda v: (link, other, draws, v)}[axis]
        a, b = times.get(key(first), {}), times.get(key(second), {})
        out += [a[k] - b[k] for k in sorted(set(a) & set(b))]
    return out


def summarise(runs: list[Path]) -> dict:
    times = page_times(runs)
    links = sorted({k[0] for k in times})
    result: dict = {"metric": METRIC, "resamples": RESAMPLES, "comparisons": {}}
    for name, axis, first, second in COMPARISONS:
        for link in links:
            entry = {}
            for draws in ("per-frame", "by-time"):
                d = pairs(times, link, draws, axis, first, second)
                entry[draws] = {"pairs": len(d), "mean_difference_s": statistics.fmean(d) if d else None,
                                "sd_difference_s": statistics.stdev(d) if len(d) > 1 else None,
                                "bootstrap_95_width_s": bootstrap_width(d)}
            widths = [entry[m]["bootstrap_95_width_s"] for m in ("per-frame", "by-time")]
            entry["width_ratio_per_frame_to_by_time"] = widths[0] / widths[1] if None not in widths and widths[1] else None
            result["comparisons"][f"{link} {name}"] = entry
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    args = parser.parse_args()
    json.dump(summarise(args.runs), sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
