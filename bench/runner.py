"""Runner: wall time of 12 replications serially vs on 6 parallel lanes, and whether the lanes disturb the results.

The same short HTTP scenario (s+2s over HTTP/1.0 on a 64 kbit/s, 300 ms link) runs with
--parallel 1 and --parallel 6 in one benchmark run. Parallel lanes are only useful if
they leave each replication's result alone: the page response times of both runs are
reported side by side (median and spread). Target (issue 5): >= 4x faster, medians equal
within noise. Lanes $SQUALL_BENCH_RUNNER_LANE_BASE (default 30) ... +5.
"""
from __future__ import annotations

import io
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from bench.emulator import machine
from testbed.run.runner import RunOptions, run_command

REPLICATIONS = 12
PARALLEL = (1, 6)
SPEEDUP_TARGET = 4.0
SCENARIO = """
name = "bench-runner"
description = "s+2s over HTTP/1.0, e0 link: the runner benchmark's scenario"
seed = 21
replications = {replications}
timeout = "60s"
link = "e0"
router = "saarto"
tcp = "baseline"

[flows.web]
kind = "http"
workload = "s+2s"
http = "1.0"
"""


def lane_base() -> int:
    return int(os.environ.get("SQUALL_BENCH_RUNNER_LANE_BASE", "30"))


def response_times_s(run_dir: Path) -> list[float]:
    """Each ok replication's page response time, from the HTTP client's own summary."""
    times = []
    for workloads in sorted(run_dir.glob("cells/*/rep-*/workloads.json")):
        status = json.loads((workloads.parent / "status.json").read_text())
        if status["status"] == "ok":
            summary = json.loads(workloads.read_text())["web"]["client"]["summary"]
            times.append(summary["response_time_us"] / 1e6)
    return times


def spread(values: list[float]) -> dict:
    if not values:
        return {"n": 0}
    q = statistics.quantiles(values, n=4, method="inclusive") if len(values) > 1 else [values[0]] * 3
    return {"n": len(values), "min": min(values), "p25": q[0], "median": statistics.median(values),
            "p75": q[2], "max": max(values)}


def one_run(scenario: Path, results: Path, parallel: int) -> dict:
    out, err = io.StringIO(), io.StringIO()
    options = RunOptions(parallel=parallel, results=results / f"parallel-{parallel}",
                         lane_base=lane_base(), analyse=False)
    started = time.monotonic()
    code = run_command(scenario, options, None, out, err)
    wall = time.monotonic() - started
    if code != 0:
        raise RuntimeError(f"squall run --parallel {parallel} exited {code}: {err.getvalue()[-2000:]}")
    (run_dir,) = (results / f"parallel-{parallel}").iterdir()
    return {"parallel": parallel, "wall_s": round(wall, 2),
            "response_time_s": spread(response_times_s(run_dir))}


def run(results_dir: Path) -> dict:
    results_dir = Path(results_dir)
    with tempfile.TemporaryDirectory(prefix="squall-bench-runner-") as tmp:
        scenario = Path(tmp) / "bench-runner.toml"
        scenario.write_text(SCENARIO.format(replications=REPLICATIONS))
        runs = [one_run(scenario, Path(tmp), p) for p in PARALLEL]
    serial, parallel = runs
    speedup = serial["wall_s"] / parallel["wall_s"]
    medians = [r["response_time_s"].get("median") for r in runs]
    numbers = {
        "benchmark": "runner", "machine": machine(), "command": "python -m bench.run runner",
        "replications": REPLICATIONS, "runs": runs, "speedup": round(speedup, 2),
        "median_response_time_change": (round(medians[1] / medians[0] - 1, 4)
                                        if all(medians) else None),
        "target": {"speedup": SPEEDUP_TARGET, "met": speedup >= SPEEDUP_TARGET},
    }
    (results_dir / "runner.json").write_text(json.dumps(numbers, indent=2) + "\n")
    return numbers


def summary(numbers: dict) -> list[str]:
    lines = []
    for r in numbers["runs"]:
        s = r["response_time_s"]
        lines.append(f"--parallel {r['parallel']}: {numbers['replications']} replications in {r['wall_s']} s; "
                     f"page response time median {s.get('median', float('nan')):.3f} s "
                     f"[{s.get('min', float('nan')):.3f} .. {s.get('max', float('nan')):.3f}] over {s['n']}")
    change = numbers["median_response_time_change"]
    lines.append(f"speedup {numbers['speedup']}x (target >= {numbers['target']['speedup']}x: "
                 f"{'met' if numbers['target']['met'] else 'NOT met'}); median response time changed by "
                 f"{change * 100:+.2f} %" if change is not None else "median response time: n/a")
    return lines
