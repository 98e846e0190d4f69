"""Does the end-to-end timing tail come from softirq work deferred to ksoftirqd?

    python -m bench.softirq_ab [--rounds 6] [--rate 10000] [--lanes 1] [--priority 5] \\
        [--load 0] --out bench/results/softirq-ab.json

Not part of `make bench`: an experiment for the timing issue. A packet's way out of the link
crosses two softirqs (the emulator's UDP send over the veth pair to the mobile NPA, the NPA's
write into its TUN); the kernel runs them in the sending thread when it can, but once a CPU's
softirq work is handed to its ksoftirqd thread (SCHED_OTHER), every later packet waits for that
thread's turn among the CPU's ordinary tasks. The experiment alternates rounds with the
ksoftirqd threads at their normal policy and at SCHED_FIFO `--priority` (below the NPAs', so
that they never preempt the link's programs), each round the bench's timing round
(bench/emulator.py: a UDP stream through `--lanes` lanes, captures at both hosts,
cyclictest beside), optionally with `--load N` busy processes at normal priority (what
replications on other lanes, builds or the analysis put on the machine). The ksoftirqd
threads' policies are restored at the end, also on errors and Ctrl-C.

Per round: the emulator's lateness and the end-to-end ingress and egress (p50, p99, max, µs),
cyclictest's, and the CPU time of the ksoftirqd threads during the round.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import tempfile
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Iterator

from bench.emulator import _write_json, bench_lane, machine, timing
from testbed.lanes import lane as lanes


def ksoftirqd_pids() -> list[int]:
    return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()
            and _comm(p).startswith("ksoftirqd/")]


def _comm(proc: Path) -> str:
    try:
        return (proc / "comm").read_text().strip()
    except OSError:
        return ""


def _policy(pid: int) -> tuple[int, int]:
    return os.sched_getscheduler(pid), os.sched_getparam(pid).sched_priority


def _cpu_s(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            total += int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total / 1e9


@contextmanager
def ksoftirqd_policy(priority: int | None) -> Iterator[None]:
    """The ksoftirqd threads at SCHED_FIFO `priority` (None: as they are) while inside."""
    pids = ksoftirqd_pids()
    before = {pid: _policy(pid) for pid in pids}
    try:
        if priority is not None:
            for pid in pids:
                os.sched_setscheduler(pid, os.SCHED_FIFO, os.sched_param(priority))
        yield
    finally:
        for pid, (policy, prio) in before.items():
            try:
                os.sched_setscheduler(pid, policy, os.sched_param(prio))
            except OSError:
                pass


def _spin() -> None:
    while True:
        pass


@contextmanager
def busy(n: int) -> Iterator[None]:
    """n processes spinning at normal priority."""
    workers = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(n)]
    for w in workers:
        w.start()
    try:
        yield
    finally:
        for w in workers:
            w.kill()
            w.join()


def one_round(addrs: list, workdir: Path, rate: int, priority: int | None, load: int) -> dict:
    pids = ksoftirqd_pids()
    with ksoftirqd_policy(priority), busy(load):
        cpu_before = _cpu_s(pids)
        measured = timing(addrs, workdir, rate)
        cpu = _cpu_s(pids) - cpu_before
    return {"ksoftirqd": "normal" if priority is None else f"SCHED_FIFO {priority}",
            "ksoftirqd_cpu_s": round(cpu, 3),
            "lateness_us": measured["lateness_us"], "end_to_end_us": measured["end_to_end_us"],
            "cyclictest_us": {k: measured["cyclictest_us"].get(k) for k in ("p50", "p99", "max")},
            "loadavg_1min_after": measured["loadavg_1min_after"]}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=6, help="rounds per setting (default 6)")
    p.add_argument("--rate", type=int, default=10_000, help="packets/s per lane (default 10000)")
    p.add_argument("--lanes", type=int, default=1, help="lanes at once (default 1)")
    p.add_argument("--priority", type=int, default=5, help="ksoftirqd's SCHED_FIFO priority (default 5)")
    p.add_argument("--load", type=int, default=0, help="busy processes beside (default 0)")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    first = bench_lane()
    lanes.cleanup_leftovers()
    rounds = []
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="squall-softirq-ab-") as tmp, ExitStack() as stack:
        addrs = [stack.enter_context(lanes.lane_up(first - i)) for i in range(args.lanes)]
        for k in range(args.rounds):
            for priority in ((None, args.priority) if k % 2 == 0 else (args.priority, None)):
                rounds.append(one_round(addrs, Path(tmp) / f"r{k}-{priority}", args.rate, priority, args.load))
                print(json.dumps(rounds[-1]), flush=True)
    summary = {}
    for setting in ("normal", f"SCHED_FIFO {args.priority}"):
        mine = [r for r in rounds if r["ksoftirqd"] == setting]
        summary[setting] = {f"{kind}_p99_us": sorted(r["end_to_end_us"][kind]["p99"] for r in mine)
                            for kind in ("ingress", "egress")}
        summary[setting]["lateness_p99_us"] = sorted(r["lateness_us"]["p99"] for r in mine)
        summary[setting]["cyclictest_p99_us"] = sorted(r["cyclictest_us"]["p99"] for r in mine)
    _write_json(args.out, {"benchmark": "softirq-ab", "machine": machine(),
                           "command": "python -m bench.softirq_ab " + " ".join(argv if argv is not None else sys.argv[1:]),
                           "rate_pps": args.rate, "lanes": args.lanes, "load": args.load,
                           "rounds": rounds, "summary": summary, "seconds": round(time.time() - started, 1)})
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
