"""Where the end-to-end timing error goes, hop by hop: one timing round of bench/emulator.py
(lanes at once, a UDP stream each, captures at both hosts, cyclictest beside them) with the
kernel's scheduler and system-call tracepoints recorded for the lanes' NPAs and emulators.

    python -m bench.hop_trace --lanes 4 --rate 1000 --out bench/results/timing-hops/NAME.json

Not part of `make bench` (no run()). Needs root and tracefs; it records into a trace instance
of its own (`instances/squall-hops`, removed at the end) with `trace_clock mono`, so trace
times are the programs' CLOCK_MONOTONIC. The captures (CLOCK_REALTIME) and the log (µs since
t = 0, whose realtime the log's header gives) are put on that clock with the realtime −
monotonic offset read at the round's start.

Per packet and lane, ingress (fixed host's capture → the log's `in`):
  capture → router NPA woken (the router host's forwarding, the TUN's queueing)
  → router NPA running (its scheduling latency) → its TUN read returns
  → its send to the emulator returns → the emulator's receive returns → `in`;
egress (scheduled `out` → mobile host's capture):
  `out` → the emulator's send starts (its lateness) → mobile NPA woken
  → mobile NPA running → its receive returns → its TUN write starts → mobile capture.
For every wait of an NPA longer than WAIT_US between its wakeup and its running, the commands
that held its CPU meanwhile are summed (every sched_switch is recorded, not only the programs').
Each packet's events are the first of their kind after the previous hop's (packets are 1 ms
apart at 1 000 packets/s, the hops tens of µs); a hop whose event is missing (the program was
awake, so no wakeup) counts as 0 for that packet and the count of those is reported.
"""
from __future__ import annotations

import argparse
import os
import re
import tempfile
import threading
import time
from bisect import bisect_left
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from analysis.read.emulog import read_emulator_log
from bench.cyclictest import Cyclictest
from bench.emulator import (BIG_BUFFER, CYCLICTEST_LIMIT_S, TIMING_DELAY_US, TIMING_PACKET, TIMING_SECONDS, _write_json, bench_lane,
                            end_to_end, host_captures, machine, steal_ms, udp_streams)
from testbed.lanes import lane as lanes
from testbed.link.session import LinkSession
from testbed.link.simple import error_free
from analysis.metrics.capture_vs_log import matched, read_capture_file

TRACEFS = Path("/sys/kernel/tracing")
INSTANCE = TRACEFS / "instances" / "squall-hops"
# x86-64 system call numbers of the relaying calls
NR = {"read": 0, "write": 1, "recvmmsg": 299, "sendmmsg": 307}
WAIT_US = 20.0          # an NPA's wait for its CPU longer than this is looked into
LINE = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+(\d+\.\d+): (\w+): (.*)$")


def _w(path: Path, text: str) -> None:
    path.write_text(text)


def trace_start(pids: list[int]) -> None:
    if not (TRACEFS / "instances").is_dir():
        raise SystemExit(f"hop_trace: tracefs is not mounted at {TRACEFS} "
                         f"(as root: mount -t tracefs nodev {TRACEFS})")
    INSTANCE.mkdir(exist_ok=True)
    _w(INSTANCE / "tracing_on", "0")
    _w(INSTANCE / "trace_clock", "mono")
    _w(INSTANCE / "buffer_size_kb", "16384")
    _w(INSTANCE / "trace", "")
    any_pid = lambda field: " || ".join(f"{field} == {p}" for p in pids)
    calls = " || ".join(f"id == {n}" for n in NR.values())
    _w(INSTANCE / "events/sched/sched_wakeup/filter", any_pid("pid"))
    # every switch (not only to these programs): what ran on a CPU while an NPA waited for it
    _w(INSTANCE / "events/raw_syscalls/sys_enter/filter", f"({any_pid('common_pid')}) && ({calls})")
    _w(INSTANCE / "events/raw_syscalls/sys_exit/filter", f"({any_pid('common_pid')}) && ({calls})")
    for e in ("sched/sched_wakeup", "sched/sched_switch", "raw_syscalls/sys_enter", "raw_syscalls/sys_exit"):
        _w(INSTANCE / "events" / e / "enable", "1")
    _w(INSTANCE / "tracing_on", "1")


def trace_stop(dest: Path) -> None:
    _w(INSTANCE / "tracing_on", "0")
    dest.write_text((INSTANCE / "trace").read_text(errors="replace"))
    for e in ("sched/sched_wakeup", "sched/sched_switch", "raw_syscalls/sys_enter", "raw_syscalls/sys_exit"):
        _w(INSTANCE / "events" / e / "enable", "0")
        _w(INSTANCE / "events" / e / "filter", "0")
    INSTANCE.rmdir()


@dataclass
class Trace:
    events: dict[int, dict[str, list[float]]]      # per thread id, per kind: sorted times (µs)
    run_cpu: dict[tuple[int, float], int]          # (thread id, time it was switched in) -> CPU
    switches: dict[int, list[tuple[float, str]]]   # per CPU: (time, the command switched in)


def parse_trace(path: Path) -> Trace:
    """Per thread id: sorted times (µs, CLOCK_MONOTONIC) of wakeup, run (switched in), and
    <call>_enter / <call>_exit (exits only with a positive return); per CPU every switch."""
    names = {v: k for k, v in NR.items()}
    out: dict[int, dict[str, list[float]]] = {}
    run_cpu: dict[tuple[int, float], int] = {}
    switches: dict[int, list[tuple[float, str]]] = {}
    for line in path.read_text(errors="replace").splitlines():
        m = LINE.match(line)
        if not m:
            continue
        pid, t, event, rest = int(m[2]), float(m[4]) * 1e6, m[5], m[6]
        if event == "sched_wakeup":
            who, kind = int(re.search(r"\bpid=(\d+)", rest)[1]), "wakeup"
        elif event == "sched_switch":
            sw = re.search(r"next_comm=(.*) next_pid=(\d+)", rest)
            who, kind = int(sw[2]), "run"
            run_cpu[(who, t)] = int(m[3])
            switches.setdefault(int(m[3]), []).append((t, re.sub(r"\d+$", "N", sw[1].strip())))
        elif event == "sys_enter":
            who, kind = pid, names.get(int(re.match(r"NR (\d+)", rest)[1]), "?") + "_enter"
        elif event == "sys_exit":
            nr, ret = re.match(r"NR (\d+) = (-?\d+)", rest).groups()
            if int(ret) <= 0:
                continue
            who, kind = pid, names.get(int(nr), "?") + "_exit"
        else:
            continue
        out.setdefault(who, {}).setdefault(kind, []).append(t)
    for kinds in out.values():
        for v in kinds.values():
            v.sort()
    for v in switches.values():
        v.sort()
    return Trace(out, run_cpu, switches)


def occupancy(trace: Trace, cpu: int, start: float, end: float) -> dict[str, float]:
    """µs each command held the CPU between start and end (from its switches)."""
    timeline = trace.switches.get(cpu, [])
    i = max(0, bisect_left(timeline, (start, "")) - 1)
    held: dict[str, float] = {}
    while i < len(timeline) and timeline[i][0] < end:
        t, comm = timeline[i]
        until = timeline[i + 1][0] if i + 1 < len(timeline) else end
        span = min(until, end) - max(t, start)
        if span > 0:
            held[comm] = held.get(comm, 0.0) + span
        i += 1
    return held


def waits(trace: Trace, chains: list[dict], tids: list[int], woken: str, runs: str, over_us: float) -> dict:
    """For the waits from wakeup to running longer than over_us: how many, and which commands
    held the CPU meanwhile (µs summed over them, largest first)."""
    held: dict[str, float] = {}
    n = 0
    for c in chains:
        if c.get(woken) is None or c.get(runs) is None or c[runs] - c[woken] <= over_us:
            continue
        cpu = next((trace.run_cpu[(tid, c[runs])] for tid in tids if (tid, c[runs]) in trace.run_cpu), None)
        if cpu is None:
            continue
        n += 1
        for comm, us in occupancy(trace, cpu, c[woken], c[runs]).items():
            held[comm] = held.get(comm, 0.0) + us
    return {"over_us": over_us, "waits": n,
            "held_by_us": {k: round(v) for k, v in sorted(held.items(), key=lambda kv: -kv[1])[:10]}}


def merged(trace: Trace, tids: list[int], kind: str) -> list[float]:
    return sorted(t for tid in tids for t in trace.events.get(tid, {}).get(kind, []))


def first_after(times: list[float], t: float, limit: float) -> float | None:
    i = bisect_left(times, t)
    return times[i] if i < len(times) and times[i] <= limit else None


def last_before(times: list[float], t: float, floor: float) -> float | None:
    i = bisect_left(times, t + 1e-9) - 1
    return times[i] if i >= 0 and times[i] >= floor else None


def chain(start: float, end: float, steps: list[tuple[str, list[float], str]],
          slack: float = 0.0) -> dict[str, float] | None:
    """Times of each step between start and end, each the first of its kind after the one before
    ('first') or the last before the next found one ('last', for wakeups of a program that may
    have been awake already: None then). None if a required step is missing. Steps may fall up
    to `slack` after end (with the shared clock, `in` is the TUN read: the emulator's receive
    comes after it)."""
    found = {"start": start}
    t = start
    for name, times, how in steps:
        if how == "first":
            x = first_after(times, t, end + slack)
            if x is None:
                return None
            found[name], t = x, x
        else:
            found[name] = None
    # the optional ones: the last of their kind between start and the next required step
    names = [s[0] for s in steps]
    for i, (name, times, how) in enumerate(steps):
        if how == "last":
            nxt = next((found[n] for n in names[i + 1:] if found[n] is not None), end + slack)
            prev = next((found[n] for n in reversed(names[:i]) if found[n] is not None), start)
            found[name] = last_before(times, nxt, prev)
    found["end"] = end
    return found


def split(chains: list[dict], order: list[str]) -> dict:
    """Per hop (from one step to the next found one): p50/p99/max µs over the packets."""
    hops: dict[str, list[float]] = {}
    missing: dict[str, int] = {}
    for c in chains:
        prev_name, prev_t = order[0], c[order[0]]
        for name in order[1:]:
            if c.get(name) is None:
                missing[name] = missing.get(name, 0) + 1
                hops.setdefault(f"{prev_name} -> {name}", []).append(0.0)
                continue
            hops.setdefault(f"{prev_name} -> {name}", []).append(c[name] - prev_t)
            prev_name, prev_t = name, c[name]
    totals = [c[order[-1]] - c[order[0]] for c in chains]
    stat = lambda v: ({"p50": round(float(np.percentile(v, 50)), 1), "mean": round(float(np.mean(v)), 1),
                       "p99": round(float(np.percentile(v, 99)), 1), "max": round(float(np.max(v)), 1)}
                      if len(v) else {})
    return {"packets": len(chains), "total": stat(totals), "hops": {k: stat(v) for k, v in hops.items()},
            "no_event": missing}


def lane_split(trace: Trace, pids: dict[str, list[int]], points: dict, t0_mono_us: float) -> dict:
    router, emu, mobile = pids["npa-router"], pids["emulator"], pids["npa-mobile"]
    ing_steps = [("router_npa_woken", merged(trace, router, "wakeup"), "last"),
                 ("router_npa_runs", merged(trace, router, "run"), "last"),
                 ("tun_read", merged(trace, router, "read_exit"), "first"),
                 ("udp_sent", merged(trace, router, "sendmmsg_exit"), "first"),
                 ("emulator_received", merged(trace, emu, "recvmmsg_exit"), "first")]
    eg_steps = [("emulator_sends", merged(trace, emu, "sendmmsg_enter"), "first"),
                ("mobile_npa_woken", merged(trace, mobile, "wakeup"), "last"),
                ("mobile_npa_runs", merged(trace, mobile, "run"), "last"),
                ("udp_received", merged(trace, mobile, "recvmmsg_exit"), "first"),
                ("tun_write", merged(trace, mobile, "write_enter"), "first")]
    fixed, mob = points["fixed"], points["mobile"]
    lo = min((v[0] for s in ing_steps + eg_steps for v in [s[1]] if v), default=0)
    hi = max((v[-1] for s in ing_steps + eg_steps for v in [s[1]] if v), default=0)
    ing, eg = [], []
    for ts, in_us in zip(fixed["sent_ts"].tolist(), fixed["sent_in"].tolist()):
        cap, t_in = ts - t0_mono_us, in_us   # both in µs since t = 0 on the monotonic clock
        if lo + 2000 < cap + t0_mono_us < hi - 2000:
            c = chain(cap + t0_mono_us, t_in + t0_mono_us, ing_steps, slack=500)
            if c is not None:
                ing.append(c)
    for ts, out_us in zip(mob["received_ts"].tolist(), mob["received_out"].tolist()):
        t_out, cap = out_us + t0_mono_us, ts - t0_mono_us + t0_mono_us
        if lo + 2000 < t_out < hi - 2000:
            c = chain(t_out - 200, cap, eg_steps)   # the send may start before `out` (the lateness is >= 0)
            if c is not None:
                c["start"] = t_out
                eg.append(c)
    return {"ingress": {**split(ing, ["start"] + [s[0] for s in ing_steps] + ["end"]),
                        "npa_waits": waits(trace, ing, router, "router_npa_woken", "router_npa_runs", WAIT_US)},
            "egress": {**split(eg, ["start"] + [s[0] for s in eg_steps] + ["end"]),
                       "npa_waits": waits(trace, eg, mobile, "mobile_npa_woken", "mobile_npa_runs", WAIT_US)}}


def threads(pid: int) -> list[int]:
    try:
        return [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return [pid]


def one_round(addrs: list, rate_pps: int, workdir: Path, trace_seconds: float) -> dict:
    link = error_free(None, TIMING_DELAY_US, 1500, send_buffer=BIG_BUFFER, recv_buffer=BIG_BUFFER)
    steal_before = steal_ms()
    trace_file = workdir / "trace.txt"
    workdir.mkdir(parents=True, exist_ok=True)
    with ExitStack() as stack:
        sessions = [stack.enter_context(LinkSession(a, link, workdir / f"link-{a.lane}")) for a in addrs]
        captures = [stack.enter_context(host_captures(a, workdir / f"capture-{a.lane}")) for a in addrs]
        pids = [{name: threads(s.programs.programs[name].proc.pid) for name in ("emulator", "npa-router", "npa-mobile")}
                for s in sessions]
        trace_start([t for p in pids for ts in p.values() for t in ts])
        tracer = threading.Timer(1.0 + trace_seconds, trace_stop, (trace_file,))
        offset_us = (time.clock_gettime(time.CLOCK_REALTIME) - time.clock_gettime(time.CLOCK_MONOTONIC)) * 1e6
        with Cyclictest(max(s.top_priority for s in sessions), CYCLICTEST_LIMIT_S, workdir / "cyclictest",
                        interval_us=1_000_000 // rate_pps) as ct:
            time.sleep(0.2)
            tracer.start()
            streams = udp_streams(addrs, workdir / "udp", TIMING_PACKET, f"{rate_pps}pps", TIMING_SECONDS)
        tracer.join()
    cyclic = ct.result()
    trace = parse_trace(trace_file)
    per_lane = []
    for a, s, p, caps, stream in zip(addrs, sessions, pids, captures, streams):
        log = read_emulator_log(s.result.log_path)
        points = {side: matched(read_capture_file(c.path, side), log) for side, c in caps.items()}
        t0_mono_us = log.start_realtime_us - offset_us
        # The log's times are µs since t = 0 and the captures' realtime µs: both onto monotonic µs.
        points = {side: {"sent_ts": v["sent_ts"] - log.start_realtime_us, "sent_in": v["sent_in"],
                         "received_ts": v["received_ts"] - log.start_realtime_us, "received_out": v["received_out"]}
                  for side, v in points.items()}
        points = {side: {**v, "sent_ts": v["sent_ts"] + t0_mono_us, "received_ts": v["received_ts"] + t0_mono_us}
                  for side, v in points.items()}
        per_lane.append({"lane": a.lane, "end_to_end": end_to_end(log, caps),
                         "lateness_us": log.counts("lateness_us"),
                         "split": lane_split(trace, p, points, t0_mono_us), **stream})
    return {"lanes": len(addrs), "rate_pps": rate_pps, "cyclictest_us": cyclic,
            "steal_ms_per_cpu": [b - a for a, b in zip(steal_before, steal_ms())],
            "loadavg_1min_after": round(os.getloadavg()[0], 2), "trace_seconds": trace_seconds,
            "per_lane": per_lane}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.hop_trace", description=__doc__.splitlines()[0])
    p.add_argument("--lanes", type=int, default=4)
    p.add_argument("--rate", type=int, default=1000)
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--trace-seconds", type=float, default=3.0)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--note", default="")
    args = p.parse_args(argv)
    first = bench_lane()
    numbers = {"benchmark": "hop_trace", "note": args.note, "machine": machine(),
               "command": f"python -m bench.hop_trace --lanes {args.lanes} --rate {args.rate} --rounds {args.rounds}",
               "rounds": []}
    lanes.cleanup_leftovers()
    with ExitStack() as stack, tempfile.TemporaryDirectory(prefix="squall-hop-trace-") as tmp:
        addrs = [stack.enter_context(lanes.lane_up(first - i)) for i in range(args.lanes)]
        for r in range(args.rounds):
            numbers["rounds"].append(one_round(addrs, args.rate, Path(tmp) / f"round-{r}", args.trace_seconds))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    _write_json(args.out, numbers)
    for r in numbers["rounds"]:
        print(f"cyclictest {r['cyclictest_us']}")
        for lane in r["per_lane"]:
            print(f"lane {lane['lane']}: e2e ingress {lane['end_to_end']['ingress']} egress {lane['end_to_end']['egress']}")
            for kind in ("ingress", "egress"):
                s = lane["split"][kind]
                print(f"  {kind}: {s['packets']} packets, total {s['total']}, no event {s['no_event']}")
                print(f"    NPA waits > {s['npa_waits']['over_us']} us: {s['npa_waits']['waits']}, CPU held by "
                      f"{s['npa_waits']['held_by_us']}")
                for hop, v in s["hops"].items():
                    print(f"    {hop:45} {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
