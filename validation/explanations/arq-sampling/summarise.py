"""results.json of the ARQ sampling experiment (validation/README.md, "Saarto's IW4 s+2m ARQ
case: more replications").

    PYTHONPATH=. python validation/explanations/arq-sampling/summarise.py RUN_DIR... \\
        --rounds validation/data/saarto/replications.csv > results.json

The ARQ conclusion's one unexplained case compares Saarto's IW4 s+2m page at the low and at the
high ARQ persistency by the timeouts that fired too early per run (validation/rto_causes.py);
the full validation's rounds give 3 such timeouts over 9 replications at either link.
Replication k of the two cells meets the same good and bad periods (one seed; the losses
within them part once one link retries what the other drops), so the cells are compared replication by
replication as well as by their means. RUN_DIRs hold further replications of the same two
cells (`squall run --first-replication`); the rounds' values come from the committed data.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import statistics
import sys
from collections import Counter
from pathlib import Path

from validation.rto_causes import CAUSES, TOO_EARLY, replication_causes

LOW, HIGH = "link-arq-low_tcp-iw4_workload-s+2m", "link-arq-high_tcp-iw4_workload-s+2m"


def _number(text: str) -> float | None:
    return float(text) if text != "" else None


def _ok_rows(run: Path) -> dict[tuple[str, int], dict]:
    """summary/runs.csv's analysed ok replications of the two cells, by (cell, replication)."""
    with (run / "summary" / "runs.csv").open() as f:
        return {(r["cell"], int(r["replication"])): r for r in csv.DictReader(f)
                if r["cell"] in (LOW, HIGH) and r["status"] == "ok" and r["analysed"] == "True"}


def experiment_rows(runs: list[Path]) -> dict[tuple[str, int], dict]:
    """Per (cell, replication) of the experiment's runs: too-early timeouts, causes, error drops."""
    rows: dict[tuple[str, int], dict] = {}
    for run in runs:
        for (cell, k), row in sorted(_ok_rows(run).items()):
            if (cell, k) in rows:
                raise ValueError(f"{run}: {cell} replication {k} is in another of the runs too")
            causes = replication_causes(run / "cells" / cell / f"rep-{k:02d}")
            rows[(cell, k)] = {"too_early": sum(causes.get(c, 0) for c in TOO_EARLY),
                               "causes": {c: causes.get(c, 0) for c in CAUSES},
                               "error_drops": _number(row["run.error_drops"])}
    return rows


def round_rows(path: Path) -> dict[tuple[str, int], dict]:
    with path.open() as f:
        return {(r["cell"], int(r["replication"])): {"too_early": float(r["conn.rto_too_early"]),
                                                      "error_drops": _number(r["run.error_drops"])}
                for r in csv.DictReader(f) if r["cell"] in (LOW, HIGH) and r["conn.rto_too_early"] != ""}


def sign_test(more: int, fewer: int) -> float:
    """Two-sided exact sign test of replications where the high link had more too-early
    timeouts than the low one against those where it had fewer (ties left out)."""
    n = more + fewer
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(more, fewer) + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def cell_summary(rows: dict[tuple[str, int], dict], cell: str) -> dict:
    values = [v for (c, _), v in sorted(rows.items()) if c == cell]
    early = [v["too_early"] for v in values]
    drops = [v["error_drops"] for v in values if v["error_drops"] is not None]
    causes = Counter()
    for v in values:
        causes.update(v.get("causes", {}))
    return {"replications": len(values), "too_early_per_run": round(statistics.fmean(early), 3) if early else None,
            "replications_with_too_early": sum(1 for e in early if e > 0),
            "error_drops_median": statistics.median(drops) if drops else None,
            "causes_in_experiment": dict(causes)}


def paired(rows: dict[tuple[str, int], dict]) -> dict:
    reps = sorted({k for c, k in rows if (LOW, k) in rows and (HIGH, k) in rows})
    more = sum(1 for k in reps if rows[(HIGH, k)]["too_early"] > rows[(LOW, k)]["too_early"])
    fewer = sum(1 for k in reps if rows[(HIGH, k)]["too_early"] < rows[(LOW, k)]["too_early"])
    return {"replications": len(reps), "high_more": more, "high_fewer": fewer, "equal": len(reps) - more - fewer,
            "sign_test_p": round(sign_test(more, fewer), 4)}


def summarise(runs: list[Path], rounds: Path) -> dict:
    from_rounds = round_rows(rounds)
    from_runs = experiment_rows(runs)
    overlap = sorted(from_rounds.keys() & from_runs.keys())
    if overlap:
        raise ValueError(f"replications in both the rounds and the runs: {overlap[:3]}")
    both = {**from_rounds, **from_runs}
    return {"cells": {"low": LOW, "high": HIGH},
            "rounds": {"low": cell_summary(from_rounds, LOW), "high": cell_summary(from_rounds, HIGH),
                       "paired": paired(from_rounds)},
            "experiment": {"runs": [r.name for r in runs],
                           "low": cell_summary(from_runs, LOW), "high": cell_summary(from_runs, HIGH),
                           "paired": paired(from_runs)},
            "all": {"low": cell_summary(both, LOW), "high": cell_summary(both, HIGH), "paired": paired(both)},
            "per_replication": {f"{'low' if c == LOW else 'high'} {k}": v["too_early"]
                                for (c, k), v in sorted(both.items())}}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("runs", type=Path, nargs="+")
    p.add_argument("--rounds", type=Path, required=True, help="validation/data/saarto/replications.csv")
    args = p.parse_args(argv)
    json.dump(summarise(args.runs, args.rounds), sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
