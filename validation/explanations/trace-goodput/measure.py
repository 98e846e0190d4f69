"""Goodput over a mahimahi trace, recomputed from the mobile host's capture with tshark, beside
the capacity the trace offered in the same window (docs/links.md "Recorded capacity traces").

    PYTHONPATH=. python validation/explanations/trace-goodput/measure.py TRACE RUN_DIR... > results.json

Per replication: tshark lists the downlink data segments the mobile host received (the flow with
the most payload). The window runs from the first to the last data segment's arrival; the trace's
time of an arrival is its capture time minus the log's `start_realtime_us` (t = 0, when the
trace starts) minus the link's one-way delay, so the opportunities that carried the window's
packets are those in (first, last] of the trace (repeating with its period). Each opportunity
carries one 1500 B packet: 1448 B of TCP payload with timestamps. Reported: the new bytes
after the first segment (highest sequence end minus the first segment's end: the goodput) over
the window's capacity.
Only squall's log header (t = 0) and scenario (delay) are read; the rest is tshark and the trace.
"""
from __future__ import annotations

import bisect
import gzip
import json
import statistics
import subprocess
import sys
import tomllib
from pathlib import Path

PAYLOAD_PER_OPPORTUNITY = 1448


def trace_times_ms(path: Path) -> list[int]:
    return [int(line) for line in path.read_text().split()]


def opportunities(trace: list[int], start_us: float, end_us: float) -> int:
    """Opportunities in (start, end] µs of trace time, the trace repeating with its last time."""
    period_us = trace[-1] * 1000
    times = [t * 1000 for t in trace]

    def upto(t_us: float) -> int:     # opportunities in [0, t]
        whole, rest = divmod(t_us, period_us)
        return int(whole) * len(times) + bisect.bisect_right(times, rest)
    return upto(end_us) - upto(start_us)


def start_realtime_us(log: Path) -> int:
    with gzip.open(log, "rt") as f:
        for line in f:
            if line.startswith("# start_realtime_us "):
                return int(line.split()[2])
            if not line.startswith("#"):
                break
    raise ValueError(f"{log}: no '# start_realtime_us' line in the header")


def data_segments(capture: Path) -> list[tuple[float, int, int]]:
    """(epoch s, relative seq, payload) of the received flow with the most payload."""
    out = subprocess.run(["tshark", "-r", str(capture), "-Y", "tcp.len > 0", "-T", "fields",
                          "-e", "frame.time_epoch", "-e", "tcp.stream", "-e", "tcp.seq", "-e", "tcp.len"],
                         capture_output=True, text=True, check=True).stdout
    by_stream: dict[str, list[tuple[float, int, int]]] = {}
    for line in out.splitlines():
        t, stream, seq, length = line.split("\t")
        by_stream.setdefault(stream, []).append((float(t), int(seq), int(length)))
    return max(by_stream.values(), key=lambda s: sum(p[2] for p in s))


def replication(rep: Path, trace: list[int], delay_us: float) -> dict:
    segments = data_segments(rep / "mobile.pcap.gz")
    t0 = start_realtime_us(rep / "emulator.log.gz")
    first, last = segments[0], segments[-1]
    window_s = last[0] - first[0]
    trace_us = lambda epoch: epoch * 1e6 - t0 - delay_us      # noqa: E731
    capacity = opportunities(trace, trace_us(first[0]), trace_us(last[0])) * PAYLOAD_PER_OPPORTUNITY
    new = max(p[1] + p[2] for p in segments) - (first[1] + first[2])
    return {"replication": rep.name, "window_s": round(window_s, 6),
            "goodput_Mbps": round(new * 8 / window_s / 1e6, 4),
            "capacity_Mbps": round(capacity * 8 / window_s / 1e6, 4),
            "goodput_over_capacity": round(new / capacity, 4)}


def main(argv: list[str]) -> int:
    trace = trace_times_ms(Path(argv[0]))
    rows = []
    for run in map(Path, argv[1:]):
        scenario = tomllib.loads((run / "scenario.toml").read_text())
        delay_us = float(scenario["link"]["delay"].removesuffix("ms")) * 1000
        for status in sorted(run.glob("cells/*/rep-*/status.json")):
            if json.loads(status.read_text()).get("status") == "ok":
                rows.append({"run": run.name, **replication(status.parent, trace, delay_us)})
    ratios = [r["goodput_over_capacity"] for r in rows]
    json.dump({"trace": Path(argv[0]).name, "tool": "tshark",
               "median_goodput_over_capacity": statistics.median(ratios) if ratios else None,
               "replications": rows}, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
