"""Cluster engine and replication overhead: the same 12 replications through --slurm on a
single-node cluster vs --parallel on as many lanes, and where a replication's wall time goes.

- Engine cost: wall time of `squall run --parallel 2` / wall time of `squall run --slurm
  --lanes-per-node 2 --wait` on a single-node Slurm cluster with 2 CPUs (bench/slurm_cluster.py),
  in one benchmark run, with one unit per array task and with 6 (`--units-per-task 6`, one
  task per lane). Target (cluster issue): >= 0.9.
- Replication overhead: per replication of the --parallel run, (lane_s + total_s) / flows_s from
  its status.json timings, i.e. wall time over the emulated flow time; and for the study, the
  run's wall time x lanes / the sum of its replications' flows_s, without and with
  --prepare-ahead (one spare lane sets up the next replication while the others run their
  flows, docs/runner.md). Target: <= 1.15, judged on the study with --prepare-ahead.
- Engine time of each run (`engine_time`): before its first replication began, after its last
  ended, and the lanes' idle time between replications, from the replications' own times.
Lanes $SQUALL_BENCH_CLUSTER_LANE_BASE (default 36) ... +3 (the Slurm run with --prepare-ahead: a spare per lane).
"""
from __future__ import annotations

import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.emulator import machine
from bench.runner import SCENARIO, response_times_s, spread
from bench.slurm_cluster import Cluster, missing_programs, single_node_cluster
from testbed.paths import REPO_ROOT
from testbed.run.runner import RunOptions, run_command

REPLICATIONS = 12
LANES = 2
RATIO_TARGET = 0.9
OVERHEAD_TARGET = 1.15
PER_TASK = (1, REPLICATIONS // LANES)
PHASES = ("lane_s", "setup_s", "slot_wait_s", "flows_s", "drain_s", "stop_s", "checks_s")


def lane_base() -> int:
    return int(os.environ.get("SQUALL_BENCH_CLUSTER_LANE_BASE", "36"))


def scenario_text() -> str:
    # The machine may be shared: the timing judgement must not turn this benchmark's runs degraded.
    return SCENARIO.format(replications=REPLICATIONS).replace('timeout = "60s"\n',
                                                              'timeout = "60s"\ntiming_tolerance = "1s"\n')


def parallel_run(scenario: Path, results: Path, prepare_ahead: bool = False) -> tuple[float, Path, dict]:
    options = RunOptions(parallel=LANES, results=results, lane_base=lane_base(), analyse=False,
                         prepare_ahead=prepare_ahead)
    err = io.StringIO()
    started, started_us = time.monotonic(), time.time_ns() // 1000
    code = run_command(scenario, options, None, io.StringIO(), err)
    wall = time.monotonic() - started
    if code != 0:
        raise RuntimeError(f"squall run --parallel {LANES} exited {code}: {err.getvalue()[-2000:]}")
    (run_dir,) = results.iterdir()
    return wall, run_dir, engine_time(run_dir, started_us, time.time_ns() // 1000, options.lanes)


def slurm_run(cluster: Cluster, scenario: Path, results: Path, per_task: int,
              prepare_ahead: bool = False) -> tuple[float, Path, dict]:
    started, started_us = time.monotonic(), time.time_ns() // 1000
    ahead = ["--prepare-ahead"] if prepare_ahead else []
    proc = subprocess.run([sys.executable, "-m", "testbed.cli", "run", str(scenario), "--slurm", "--wait",
                           "--no-analysis", "--lanes-per-node", str(LANES), "--lane-base", str(lane_base()),
                           "--units-per-task", str(per_task), *ahead, "--results", str(results)],
                          cwd=REPO_ROOT, env=cluster.env, capture_output=True, text=True, timeout=1800)
    wall = time.monotonic() - started
    if proc.returncode != 0:
        raise RuntimeError(f"squall run --slurm exited {proc.returncode}: {proc.stderr[-2000:]}")
    (run_dir,) = results.iterdir()
    lanes = LANES * (2 if prepare_ahead else 1)
    return wall, run_dir, engine_time(run_dir, started_us, time.time_ns() // 1000, lanes)


def engine_time(run_dir: Path, started_us: int, ended_us: int, lanes: int = LANES) -> dict:
    """Where a run's wall time went besides its replications (realtime µs from the replications'
    t = 0 and phases): before the first replication began (submitting, a task starting), after
    the last ended (a task ending, --wait noticing), and the lanes' idle time in between (one
    replication ended, the next not yet begun: dispatching)."""
    spans = []
    for p in run_dir.glob("cells/*/rep-*/status.json"):
        d = json.loads(p.read_text())["details"]
        t = d["timings"]
        t0 = d["t0_realtime_us"] / 1e6
        begin = t0 - t.get("slot_wait_s", 0) - t.get("setup_s", 0) - t.get("lane_s", 0)
        spans.append((begin, t0 + t["flows_s"] + t.get("drain_s", 0) + t.get("stop_s", 0) + t.get("checks_s", 0)))
    first, last = min(b for b, _ in spans), max(e for _, e in spans)
    busy = sum(e - b for b, e in spans)
    return {"before_first_s": round(first - started_us / 1e6, 2), "after_last_s": round(ended_us / 1e6 - last, 2),
            "lanes_idle_between_s": round(lanes * (last - first) - busy, 2)}


def overhead(run_dir: Path) -> dict:
    """A replication's wall time (lane to checks) over its flows' time (START to the last flow's
    end: the target's measure) and over the link's time (START to the drain's end, when the
    last FIN's ACK is out of the link: the emulated time, which the closing of the
    connections belongs to)."""
    timings = [json.loads(p.read_text())["details"]["timings"] for p in run_dir.glob("cells/*/rep-*/status.json")]
    def busy(t: dict) -> float:     # waiting for a flow slot (--prepare-ahead) is not the replication's work
        return t.get("lane_s", 0) + t["total_s"] - t.get("slot_wait_s", 0)
    ratios = [busy(t) / t["flows_s"] for t in timings if t.get("flows_s")]
    emulated = [busy(t) / (t["flows_s"] + t.get("drain_s", 0)) for t in timings if t.get("flows_s")]
    return {"wall_over_flow_time": spread(ratios), "wall_over_emulated_time": spread(emulated),
            "median_phase_s": {k: round(statistics.median(t.get(k, 0.0) for t in timings), 3) for k in PHASES}}


def study_overhead(wall_s: float, run_dir: Path) -> float:
    """The run's wall time over the emulated flow time it delivered per lane: 1.0 would be
    every lane in its flows from the first second to the last."""
    flows = sum(json.loads(p.read_text())["details"].get("timings", {}).get("flows_s", 0.0)
                for p in run_dir.glob("cells/*/rep-*/status.json"))
    return round(wall_s * LANES / flows, 3) if flows else float("inf")


def timing_p99_us(run_dir: Path) -> dict:
    """Each replication's worst judged end-to-end p99 (status.json's timing_error), spread over
    the run: what the overlap costs the timing, beside the runs without it."""
    worst = []
    for p in run_dir.glob("cells/*/rep-*/status.json"):
        timing = json.loads(p.read_text())["details"].get("timing_error", {})
        p99s = [s["p99_us"] for kind in ("ingress", "egress") for s in timing.get(kind, {}).values()
                if s.get("judged") and s.get("n")]
        if p99s:
            worst.append(max(p99s))
    return spread(worst)


def statuses(run_dir: Path) -> dict[str, int]:
    """How many replications ended in each status (the timing judgement included)."""
    found: dict[str, int] = {}
    for p in run_dir.glob("cells/*/rep-*/status.json"):
        st = json.loads(p.read_text())["status"]
        found[st] = found.get(st, 0) + 1
    return found


def run(results_dir: Path) -> dict:
    missing = missing_programs()
    if missing:
        raise RuntimeError(f"Slurm is not installed ({', '.join(missing)}); scripts/install-deps installs it")
    with tempfile.TemporaryDirectory(prefix="squall-bench-cluster-") as tmp:
        tmp_path = Path(tmp)
        scenario = tmp_path / "bench-cluster.toml"
        scenario.write_text(scenario_text())
        wall_parallel, parallel_dir, parallel_engine = parallel_run(scenario, tmp_path / "parallel")
        wall_ahead, ahead_dir, ahead_engine = parallel_run(scenario, tmp_path / "ahead", prepare_ahead=True)
        slurm = {}
        with single_node_cluster(tmp_path / "cluster", cpus=LANES) as cluster:
            for per_task in PER_TASK:
                wall, run_dir, engine = slurm_run(cluster, scenario, tmp_path / f"slurm-{per_task}", per_task)
                slurm[f"units_per_task_{per_task}"] = {
                    "wall_s": round(wall, 2), "ratio_parallel_over_slurm": round(wall_parallel / wall, 3),
                    "engine_time": engine,
                    "response_time_s": spread(response_times_s(run_dir))}
            # both engines with --prepare-ahead: a spare lane beside each of the 2 lanes or tasks
            wall, run_dir, engine = slurm_run(cluster, scenario, tmp_path / "slurm-ahead", PER_TASK[-1],
                                              prepare_ahead=True)
            slurm[f"units_per_task_{PER_TASK[-1]}_prepare_ahead"] = {
                "wall_s": round(wall, 2), "ratio_parallel_over_slurm": round(wall_ahead / wall, 3),
                "compared_with": "--parallel 2 --prepare-ahead", "engine_time": engine,
                "response_time_s": spread(response_times_s(run_dir)), "statuses": statuses(run_dir)}
        numbers = {
            "benchmark": "cluster", "machine": machine(), "command": "python -m bench.run cluster",
            "replications": REPLICATIONS, "lanes": LANES,
            "parallel": {"wall_s": round(wall_parallel, 2), "engine_time": parallel_engine,
                         "response_time_s": spread(response_times_s(parallel_dir)),
                         **overhead(parallel_dir),
                         "study_wall_over_flow_time": study_overhead(wall_parallel, parallel_dir),
                         "timing_worst_p99_us": timing_p99_us(parallel_dir)},
            "prepare_ahead": {"wall_s": round(wall_ahead, 2), "lanes_used": LANES + 1,
                              "response_time_s": spread(response_times_s(ahead_dir)),
                              **overhead(ahead_dir),
                              "study_wall_over_flow_time": study_overhead(wall_ahead, ahead_dir),
                              "timing_worst_p99_us": timing_p99_us(ahead_dir),
                              "statuses": statuses(ahead_dir)},
            "slurm": slurm,
        }
    best = max(r["ratio_parallel_over_slurm"] for k, r in slurm.items() if not k.endswith("prepare_ahead"))
    median_overhead = numbers["prepare_ahead"]["study_wall_over_flow_time"]
    numbers["target"] = {"ratio": RATIO_TARGET, "ratio_met": best >= RATIO_TARGET,
                         "overhead": OVERHEAD_TARGET, "overhead_met": median_overhead <= OVERHEAD_TARGET}
    (Path(results_dir) / "cluster.json").write_text(json.dumps(numbers, indent=2) + "\n")
    return numbers


def summary(numbers: dict) -> list[str]:
    p, t = numbers["parallel"], numbers["target"]
    o = p["wall_over_flow_time"]
    slurm = "; ".join(f"{k.replace('_', ' ')} {r['wall_s']} s (ratio {r['ratio_parallel_over_slurm']}; "
                      f"engine time {r['engine_time']})" for k, r in numbers["slurm"].items())
    return [
        f"{numbers['replications']} replications: --parallel {numbers['lanes']} {p['wall_s']} s "
        f"(engine time {p['engine_time']}); --slurm on one "
        f"node with {numbers['lanes']} CPUs: {slurm} (target >= {t['ratio']}: {'met' if t['ratio_met'] else 'NOT met'})",
        f"study wall time x lanes / flow time: {p['study_wall_over_flow_time']:.3f}, with --prepare-ahead "
        f"{numbers['prepare_ahead']['study_wall_over_flow_time']:.3f} in {numbers['prepare_ahead']['wall_s']} s "
        f"(target <= {t['overhead']}: {'met' if t['overhead_met'] else 'NOT met'}; statuses "
        f"{numbers['prepare_ahead']['statuses']})",
        f"replication wall time / flow time: median {o.get('median', float('nan')):.2f}; over the emulated time "
        f"(START to the drain's end): median {p.get('wall_over_emulated_time', {}).get('median', float('nan')):.2f}; "
        f"median phases {p['median_phase_s']}",
    ]
