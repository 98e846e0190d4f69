"""How much of a cell's spread is the channel, how much the hosts (validation/PROTOCOL.md, 8).

Replication k of a cell always meets the same channel timeline (seed, replication number), so
re-running replication k shows what the hosts' timing alone changes (real stacks, real timers
on a shared CPU), while the cell's replications 1 … n in the committed data show what the
channel adds on top. Per metric:

    channel spread: SD of ln(value) over the cell's counted replications (validation/data)
    hosts' spread:  SD of ln(value) over the re-runs of one replication
    hosts' share:   hosts' variance / channel variance

(ln(value + 1) for counts; an unfinished page (∞, a timeout) is counted, not averaged: the
SDs are over the finite values and the counts of ∞ are reported beside them.)

    # re-run replication K of CELL N times on one lane (sequentially), each into its own run
    PYTHONPATH=. python validation/explanations/reproducibility/reproducibility.py run \\
        scenarios/iip-http.toml --cell CELL --replication K --times N --lane-base L --results DIR
    # the spreads, as JSON
    PYTHONPATH=. python validation/explanations/reproducibility/reproducibility.py summarise \\
        DIR/rerun-* --data validation/data/iip-http/replications.csv --cell CELL --replication K
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import statistics
import subprocess
import sys
import time
from pathlib import Path

SQUALL = Path(sys.executable).parent / "squall"
COUNTS = ("drops", "retransmissions")
# per flow kind, the runs.csv metrics compared (those the studies' tables rest on)
METRICS = {
    "http": ("web.response_time_s", "web.main.response_throughput_Bps", "web.congestion_drops",
             "web.error_drops", "run.retransmissions"),
    "bulk": ("tcp.fastest.elapsed_s", "tcp.slowest.elapsed_s", "tcp.fastest.throughput_Bps",
             "run.congestion_drops", "run.error_drops", "run.retransmissions"),
}


def run(args: argparse.Namespace) -> int:
    """N runs of the one replication, one after the other on one lane."""
    results = Path(args.results)
    for i in range(1, args.times + 1):
        target = results / f"rerun-{i:02d}"
        if target.exists() and any(target.iterdir()):
            print(f"reproducibility: {target} exists, skipped (remove it to run it again)", file=sys.stderr)
            continue
        started = time.monotonic()
        code = subprocess.run([str(SQUALL), "run", args.scenario, "--cells", args.cell,
                               "--first-replication", str(args.replication), "--replications",
                               str(args.replication), "--lane-base", str(args.lane_base),
                               "--results", str(target)]).returncode
        print(f"reproducibility: re-run {i} of {args.times}: exit {code}, "
              f"{time.monotonic() - started:.0f} s", file=sys.stderr)
        if code not in (0, 1):        # 1: a replication degraded or failed, still recorded
            return code
    return 0


def _value(text: str | None) -> float | None:
    return None if text in (None, "") else float(text)


def _is_count(metric: str) -> bool:
    return any(word in metric for word in COUNTS)


def _log(metric: str, x: float) -> float:
    return math.log(x + 1) if _is_count(metric) else math.log(x) if x > 0 else -math.inf


def spread(metric: str, values: list[float]) -> dict:
    """SD of the logs over the finite values, with the values and how many were ∞."""
    finite = [x for x in values if math.isfinite(x)]
    logs = [_log(metric, x) for x in finite if math.isfinite(_log(metric, x))]
    return {"n": len(values), "unfinished": len(values) - len(finite),
            "median": statistics.median(values) if values else None,
            "sd_ln": statistics.stdev(logs) if len(logs) > 1 else None,
            "values": sorted(values)}


def rerun_rows(runs: list[Path], cell: str, replication: int) -> list[dict]:
    """The re-runs' runs.csv rows of the replication (counted: ok, or timed out)."""
    rows = []
    for run_dir in runs:
        for path in sorted(run_dir.glob("*/summary/runs.csv")) or sorted(run_dir.glob("summary/runs.csv")):
            with path.open() as f:
                rows += [r for r in csv.DictReader(f) if r["cell"] == cell
                         and int(r["replication"]) == replication and r["status"] in ("ok", "timeout")]
    return rows


def data_rows(path: Path, cell: str) -> list[dict]:
    with path.open() as f:
        return [r for r in csv.DictReader(f) if r["cell"] == cell and r["status"] in ("ok", "timeout")]


def summarise(args: argparse.Namespace) -> int:
    reruns = rerun_rows([Path(p) for p in args.runs], args.cell, args.replication)
    channel = data_rows(Path(args.data), args.cell)
    if not reruns or not channel:
        print(f"reproducibility: no counted rows of {args.cell} (re-runs {len(reruns)}, data {len(channel)})",
              file=sys.stderr)
        return 2
    kind = "http" if any(k.startswith("web.") for k in reruns[0]) else "bulk"
    out = {"cell": args.cell, "replication": args.replication, "reruns": len(reruns),
           "replications_in_data": len(channel), "metrics": {}}
    for metric in METRICS[kind]:
        hosts = spread(metric, [v for r in reruns if (v := _value(r.get(metric))) is not None])
        chan = spread(metric, [v for r in channel if (v := _value(r.get(metric))) is not None])
        share = (hosts["sd_ln"] ** 2 / chan["sd_ln"] ** 2
                 if hosts["sd_ln"] is not None and chan["sd_ln"] else None)
        out["metrics"][metric] = {"hosts": hosts, "channel": chan, "hosts_share_of_variance": share}
    json.dump(out, sys.stdout, indent=1)
    print()
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="re-run one replication of one cell N times")
    r.add_argument("scenario")
    r.add_argument("--cell", required=True)
    r.add_argument("--replication", type=int, required=True)
    r.add_argument("--times", type=int, default=10)
    r.add_argument("--lane-base", type=int, required=True)
    r.add_argument("--results", required=True)
    s = sub.add_parser("summarise", help="the channel's and the hosts' spread per metric, as JSON")
    s.add_argument("runs", nargs="+")
    s.add_argument("--data", required=True, help="the study's committed replications.csv")
    s.add_argument("--cell", required=True)
    s.add_argument("--replication", type=int, required=True)
    args = p.parse_args(argv)
    return run(args) if args.command == "run" else summarise(args)


if __name__ == "__main__":
    sys.exit(main())
