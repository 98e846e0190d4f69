"""The link model's cost per packet, alone: every feature on against every feature off (squall-model-cost).

No namespaces, no sockets, no log: build/bin/squall-model-cost (bench/model_cost/model_cost.c)
feeds one fixed stream of packets (1500 B down every 1.3 ms, a 60 B packet up after every
second one, ports across the router's classes, a third ECN-capable) through the model's public
interface, sq_model_arrive / sq_model_advance (emulator/src/model/link_model.h), and drains it.
Two configurations, in alternating rounds so that the machine's drift hits both:

- every feature on: a two-state channel (exponential 2 s good, 300 ms bad) with frame errors
  (1 % good, 30 % bad) and ARQ (3 retries, 50 ms apart), the downlink over a mahimahi trace
  (two 1500 B opportunities of every three ms), link-wide outages (every exponential 20 s,
  1-3 s long), the netem stage (Gilbert-Elliott loss, normal jitter with correlation,
  reordering, duplication, corruption) and a router stage with one class per discipline
  (pfifo, bfifo, head_drop, RED with ECN, CoDel, FQ-CoDel, PIE and DualPI2 with ECN; weighted
  scheduler, a filter each) and a device queue of 10, in both directions;
- every feature off: one good state for ever, constant rates (10 / 2 Mbit/s), no errors, ARQ,
  router, netem or outages.

Reported: CPU ns per packet per round (the thread's CPU clock, so a busy machine's waiting is
not counted; its caches still are) and their median for each, the ratio on / off, the events
each caused (the stream's work: drops, retransmissions, marks), and the machine
(bench/emulator.py's machine()). The issue's target: at most 2 µs per packet with every
feature on. A discipline joins the bench with one row of CLASSES in model_cost.c
(tests/test_bench_model_cost.py fails while a discipline of router_table.def has none).
$SQUALL_BENCH_MODEL_PACKETS (300 000) and $SQUALL_BENCH_MODEL_ROUNDS (9) change the size.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
from pathlib import Path

from bench.emulator import machine
from testbed.paths import program_path

RESULT_FILE = "model-cost.json"
TARGET_NS = 2000
PACKETS = int(os.environ.get("SQUALL_BENCH_MODEL_PACKETS", "300000"))
ROUNDS = int(os.environ.get("SQUALL_BENCH_MODEL_ROUNDS", "9"))
ROWS = ("every_feature_on", "every_feature_off")


def measure(packets: int | None = None, rounds: int | None = None) -> dict:
    """squall-model-cost's rounds (by default PACKETS, ROUNDS) with each row's median ns per
    packet and the ratio."""
    packets, rounds = packets or PACKETS, rounds or ROUNDS
    done = subprocess.run([str(program_path("squall-model-cost")), "--packets", str(packets),
                           "--rounds", str(rounds)], capture_output=True, text=True, check=True)
    raw = json.loads(done.stdout)
    for row in ROWS:
        if raw[row]["pending_after_drain"]:
            raise RuntimeError(f"squall-model-cost: {row}: {raw[row]['pending_after_drain']} packets "
                               "still in the model after the drain; the stream did not end")
        raw[row]["median_ns_per_packet"] = round(statistics.median(raw[row]["ns_per_packet"]), 1)
    on, off = (raw[row]["median_ns_per_packet"] for row in ROWS)
    return {**raw, "ratio_on_over_off": round(on / off, 2), "target_ns_per_packet": TARGET_NS,
            "target_met": on <= TARGET_NS}


def run(results_dir: str | Path) -> dict:
    """The bench registry's entry point: measures and writes model-cost.json."""
    numbers = {"machine": machine(), **measure()}
    results = Path(results_dir)
    results.mkdir(parents=True, exist_ok=True)
    (results / RESULT_FILE).write_text(json.dumps(numbers, indent=2) + "\n")
    return numbers


def summary(numbers: dict) -> list[str]:
    on, off = (numbers[row]["median_ns_per_packet"] for row in ROWS)
    return [f"every feature on: {on:.0f} ns per packet (median of {numbers['rounds']} rounds of "
            f"{numbers['packets']:,} packets; target <= {TARGET_NS} ns: "
            f"{'met' if numbers['target_met'] else 'NOT met'})",
            f"every feature off: {off:.0f} ns per packet; on / off = {numbers['ratio_on_over_off']:.2f}"]
