"""Issue 28's before/after check: one study cell run on the old and on the new tree.

    python compare.py OLD_RUN_DIR NEW_RUN_DIR > results.json

Per replication: emulator.conf byte for byte (but for the lines that name where this run
lives: `log` and `control`, a path of its own results directory and a socket under /tmp),
the channel timeline (the emulator log's `state` lines) byte for byte, and every numeric
column of summary/runs.csv: the new value must lie within the cell's spread, i.e. differ
from the old value of the same replication by no more than the old run's range over its
replications (real stacks do not replay packet for packet, so only the spread is a bar).
Exits 1 if anything differs beyond that.
"""
from __future__ import annotations

import csv
import gzip
import json
import sys
from pathlib import Path

WHERE_KEYS = ("log", "control")      # the run's own paths, never equal between two runs
PAGE_TIME = "web.response_time_s"  # the cell's main metric (squall status: "page time")


def conf_lines(path: Path) -> list[str]:
    """emulator.conf without the lines naming this run's own files."""
    return [line for line in path.read_text().splitlines()
            if line.split("=", 1)[0].strip() not in WHERE_KEYS]


def state_lines(path: Path) -> list[str]:
    """The channel timeline: the emulator log's `state` events, as written."""
    with gzip.open(path, "rt") as log:
        return [line for line in log if line.split("\t", 2)[1:2] == ["state"]]


def runs(run_dir: Path) -> dict[int, dict[str, float]]:
    """summary/runs.csv: replication -> its numeric columns."""
    rows: dict[int, dict[str, float]] = {}
    with open(run_dir / "summary" / "runs.csv", newline="") as f:
        for row in csv.DictReader(f):
            values = {}
            for key, text in row.items():
                try:
                    values[key] = float(text)
                except (TypeError, ValueError):
                    continue
            rows[int(row["replication"])] = values
    return rows


def rep_dirs(run_dir: Path) -> dict[str, Path]:
    """"<cell>/rep-NN" -> its directory."""
    return {f"{d.parent.name}/{d.name}": d for d in sorted((run_dir / "cells").glob("*/rep-*"))}


def compare(old: Path, new: Path) -> dict:
    old_reps, new_reps = rep_dirs(old), rep_dirs(new)
    if old_reps.keys() != new_reps.keys():
        raise SystemExit(f"the runs hold different replications: {sorted(old_reps)} vs {sorted(new_reps)}")
    timeline = {}
    for name, o in old_reps.items():
        n = new_reps[name]
        timeline[name] = {
            "emulator_conf_identical": conf_lines(o / "emulator.conf") == conf_lines(n / "emulator.conf"),
            "state_lines": len(state_lines(o / "emulator.log.gz")),
            "state_lines_identical": state_lines(o / "emulator.log.gz") == state_lines(n / "emulator.log.gz"),
        }
    old_runs, new_runs = runs(old), runs(new)
    columns = sorted(set.intersection(*(set(v) for v in [*old_runs.values(), *new_runs.values()])))
    outside, page_time = [], {}
    for column in columns:
        values = [old_runs[r][column] for r in old_runs]
        spread = max(values) - min(values)
        for r in old_runs:
            if abs(new_runs[r][column] - old_runs[r][column]) > spread + 1e-9:
                outside.append(f"{column} rep {r}: {old_runs[r][column]} -> {new_runs[r][column]} "
                               f"(spread {spread:g})")
    for r in old_runs:
        page_time[r] = {"old": old_runs[r].get(PAGE_TIME), "new": new_runs[r].get(PAGE_TIME)}
    return {"replications": timeline, "metrics_compared": len(columns),
            "metrics_outside_spread": outside, "page_time_s": page_time}


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    result = compare(Path(argv[1]), Path(argv[2]))
    json.dump(result, sys.stdout, indent=2)
    print()
    same = all(r["emulator_conf_identical"] and r["state_lines_identical"]
               for r in result["replications"].values())
    return 0 if same and not result["metrics_outside_spread"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
