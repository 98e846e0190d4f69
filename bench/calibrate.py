"""Calibration: the end-to-end timing error against the number of lanes run at once (`squall calibrate`).

`squall calibrate`'s standard load (a bulk transfer and a 32 kbit/s UDP stream over e0,
testbed/run/calibrate.py) on 1, 2 and 4 lanes at once, one replication per lane and a short
load, so that `make bench` keeps the curve of this machine beside the emulator's timing: per
number of lanes the worst ingress and egress p99 of the replications, the largest delay, how
many were beyond the tolerance, and the largest number of lanes within it. cyclictest is not
run here (the emulator benchmark measures the timers); the load average is recorded.
Lanes $SQUALL_BENCH_CALIBRATE_LANE_BASE (default 52, of the lanes kept for performance work,
below the emulator benchmark's) ... +3.
"""
from __future__ import annotations

import io
import json
import os
import tempfile
import time
from pathlib import Path

from bench.emulator import _write_json, machine
from testbed.run.calibrate import CalibrateOptions, calibrate_command

MAX_LANES = 4
DURATION_US = 2_000_000
TOLERANCE_US = 1_000        # the scenarios' default timing tolerance


def lane_base() -> int:
    return int(os.environ.get("SQUALL_BENCH_CALIBRATE_LANE_BASE", "52"))


def run(results_dir: Path) -> dict:
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="squall-bench-calibrate-") as tmp:
        out, err = io.StringIO(), io.StringIO()
        options = CalibrateOptions(max_lanes=MAX_LANES, lane_base=lane_base(), tolerance_us=TOLERANCE_US,
                                   duration_us=DURATION_US, results=Path(tmp), json=True)
        status = calibrate_command(options, out=out, err=err)
        curve = json.loads(out.getvalue())
    for row in curve["lanes"]:
        row.pop("run_dir", None)       # a temporary directory, gone now
    curve.pop("directory", None)
    numbers = {"benchmark": "calibrate", "machine": machine(), "command": "python -m bench.run calibrate",
               "exit_status": status, **curve, "loadavg_1min_after": round(os.getloadavg()[0], 2),
               "seconds": round(time.time() - started, 1)}
    _write_json(Path(results_dir) / "calibrate.json", numbers)
    return numbers


def summary(numbers: dict) -> list[str]:
    lines = [f"tolerance {numbers['tolerance_us']} µs, load {numbers['duration_us'] / 1e6:g} s per replication"]
    for r in numbers["lanes"]:
        lines.append(f"{r['lanes']} lane(s): ingress p99 {r['ingress_p99_us']} µs, egress p99 {r['egress_p99_us']} µs, "
                     f"UDP sender p99 {r.get('sender_p99_us')} µs, "
                     f"max {r['max_us']} µs, {r['beyond_tolerance']} of {r['replications']} beyond, "
                     f"statuses {r['statuses']}")
    lines.append(f"largest number of lanes within the tolerance: {numbers['largest_within']}")
    return lines
