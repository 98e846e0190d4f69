"""The end-to-end timing error of a replication: how long a packet took between a host's
capture and the emulator's log, where the model says no time passes (status.json
`timing_error`, docs/runner.md).

- ingress, per sending host: its capture's time of a packet → the log's `in` time of it
  (the host's stack, the router host's forwarding, the TUN, the NPA, the UDP hop);
- egress, per receiving host: the log's scheduled `out` time → its capture's time (the
  emulator's lateness, the UDP hop, the NPA, the TUN, forwarding).

The captures carry CLOCK_REALTIME; the log's times are µs since t = 0, whose realtime the
log's header gives. Packets are matched by identity with the analysis package's join
(analysis/join/by_identity.py), never by time. Percentiles are Hyndman–Fan type 7 (numpy's default,
as in analysis/aggregate/statistics.py). A capture point is judged unless a tc router sits between it
and the emulator (the fixed host's ingress then holds the router's queueing, which is part of
the experiment); a judged one whose p99 is beyond the tolerance, or whose smallest delay is
below minus the tolerance (clocks that disagree), makes the replication `degraded`.

A stream sent on a schedule (a CBR flow, flows.PacedStream) is judged at its sender's capture
too: datagram k should leave at start + k × interval, and its lateness is its capture time
minus that, the start taken as the earliest the capture allows (the smallest capture time
minus k × interval), so only a sender that fell behind its own schedule counts. A sender
starved of CPU sends late and then in a burst, which changes what the link and the router
see; its p99 beyond the tolerance makes the replication `degraded` like the link's.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from analysis.metrics.capture_vs_log import NULL

SIDES = ("fixed", "mobile")


def delay_stats(delays_us: np.ndarray, threshold_us: int, at_us: np.ndarray | None = None) -> dict[str, Any]:
    """n, min, p50, p99, max (µs) and how many are beyond threshold_us; only n for none. With
    `at_us` (each packet's time in the log, µs since t = 0) also when the worst one was
    (`max_at_s`), to find it in a scheduling trace or the captures."""
    d = np.asarray(delays_us, dtype=np.int64)
    if d.size == 0:
        return {"n": 0}
    p50, p99 = np.percentile(d, [50, 99])
    stats = {"n": int(d.size), "min_us": int(d.min()), "p50_us": round(float(p50), 1),
             "p99_us": round(float(p99), 1), "max_us": int(d.max()),
             "over_tolerance": int(np.count_nonzero(d > threshold_us))}
    if at_us is not None:
        stats["max_at_s"] = round(int(np.asarray(at_us)[int(np.argmax(d))]) / 1e6, 6)
    return stats


def ingress_delays(t0_realtime_us: int, ts_us: np.ndarray, in_us: np.ndarray) -> np.ndarray:
    """Capture time → `in` time of the packets a host sent that entered the link (in_us of
    the others is NULL)."""
    seen = in_us != NULL
    return t0_realtime_us + in_us[seen] - ts_us[seen]


def egress_delays(t0_realtime_us: int, ts_us: np.ndarray, out_us: np.ndarray) -> np.ndarray:
    """Scheduled `out` time → capture time of the packets a host received from the link."""
    return ts_us - (t0_realtime_us + out_us)


def schedule_lateness(ts_us: np.ndarray, seq: np.ndarray, interval_us: float) -> np.ndarray:
    """How late each datagram left against its stream's schedule (module docstring), µs."""
    nominal = np.asarray(seq, dtype=np.float64) * interval_us
    behind = np.asarray(ts_us, dtype=np.float64) - nominal
    return np.rint(behind - behind.min()).astype(np.int64) if behind.size else np.zeros(0, np.int64)


def measure(points: dict[str, dict[str, np.ndarray]], t0_realtime_us: int, tolerance_us: int,
            router_between: bool, lateness: dict[str, int],
            schedules: dict[str, np.ndarray] | None = None) -> dict[str, Any]:
    """status.json's `timing_error` from each capture point's matched packets:
    points[side] = {"sent_ts", "sent_in", "received_ts", "received_out"} (µs arrays);
    schedules[flow]: its paced sender's lateness (schedule_lateness)."""
    result: dict[str, Any] = {"tolerance_us": tolerance_us, "ingress": {}, "egress": {}}
    for side, p in points.items():
        ingress = delay_stats(ingress_delays(t0_realtime_us, p["sent_ts"], p["sent_in"]), tolerance_us,
                              p["sent_in"][p["sent_in"] != NULL])
        ingress["judged"] = not (router_between and side == "fixed")
        if not ingress["judged"]:
            ingress["note"] = "includes the tc router's queueing between the capture and the emulator"
        egress = delay_stats(egress_delays(t0_realtime_us, p["received_ts"], p["received_out"]), tolerance_us,
                             p["received_out"])
        egress["judged"] = True
        result["ingress"][side], result["egress"][side] = ingress, egress
    if lateness:
        result["emulator_lateness_us"] = lateness
    if schedules:
        result["schedules"] = {flow: delay_stats(late, tolerance_us) for flow, late in schedules.items()}
    result["beyond_tolerance"] = beyond_tolerance(result)
    return result


def beyond_tolerance(timing: dict[str, Any]) -> list[str]:
    """One sentence per judged capture point and direction beyond the tolerance."""
    tolerance = timing["tolerance_us"]
    found = []
    for kind, where in (("ingress", "{side} capture → emulator in"), ("egress", "emulator out → {side} capture")):
        for side, s in timing[kind].items():
            if not s.get("judged") or not s["n"]:
                continue
            if s["p99_us"] > tolerance or s["min_us"] < -tolerance:
                found.append(f"{kind} at the {side} host ({where.format(side=side)}): p99 {s['p99_us']:g} us, "
                             f"min {s['min_us']} us, max {s['max_us']} us, {s['over_tolerance']} of {s['n']} "
                             f"packets beyond {tolerance} us")
    for flow, s in timing.get("schedules", {}).items():
        if s["n"] and s["p99_us"] > tolerance:
            found.append(f"the {flow} stream's sender behind its schedule (its capture): p99 {s['p99_us']:g} us, "
                         f"max {s['max_us']} us, {s['over_tolerance']} of {s['n']} datagrams beyond {tolerance} us")
    return found
