"""The machine's own timer latency, measured beside a benchmark: cyclictest (Debian rt-tests).

    with Cyclictest(priority=10, seconds=7, workdir=tmp) as ct:
        ...                                   # the measurement it runs beside
    ct.result()                               # {"n", "p50", "p99", "max", ...} in µs

cyclictest wakes every `interval_us` (100 µs: 10 000 wakeups/s, the emulator's rate at
10 000 packets/s) with an absolute clock_nanosleep on CLOCK_MONOTONIC under SCHED_FIFO at
the given priority (SCHED_OTHER for 0), memory locked, and histograms how late each
wakeup was. It runs one thread on each usable CPU (`-S`), as the lanes' emulators spread
over all of them: a CPU the host stops for milliseconds stalls whatever real-time thread
it holds, and a single unpinned thread saw only the stops of the CPU it happened to be on.
The merged percentiles are the floor for anything else that sleeps on this machine at that
priority at the same time (the emulator's lateness is reported as a ratio to them);
`per_cpu` keeps each CPU's own.
"""
from __future__ import annotations

import math
import shutil
import signal
import subprocess
from pathlib import Path

HISTOGRAM_US = 20_000       # 1 µs buckets up to 20 ms; later wakeups are counted as overflows
INTERVAL_US = 100


class CyclictestMissing(RuntimeError):
    """cyclictest is not installed (Debian package rt-tests, scripts/install-deps)."""


def command(priority: int, seconds: int, interval_us: int = INTERVAL_US) -> list[str]:
    exe = shutil.which("cyclictest")
    if exe is None:
        raise CyclictestMissing("cyclictest is not installed: apt-get install rt-tests (scripts/install-deps)")
    policy = ["-p", str(priority)] if priority > 0 else ["--policy", "other"]
    return [exe, "-m", "-S", *policy, "-i", str(interval_us), "-D", str(seconds), "-q", "-h", str(HISTOGRAM_US)]


def parse(text: str) -> dict:
    """cyclictest -q -h N output (one histogram column per thread) -> the threads' samples
    merged, {"n", "p50", "p99", "p999", "max", "overflows", "avg"} (µs), and `per_cpu`: the
    same for each thread."""
    columns: list[dict[int, int]] = []
    fields: dict[str, list[int]] = {}
    for line in text.splitlines():
        if line[:1].isdigit():
            bucket, *counts = (int(word) for word in line.split())
            columns += [{} for _ in range(len(counts) - len(columns))]
            for column, count in zip(columns, counts):
                if count:
                    column[bucket] = count
        elif line.startswith("# ") and ":" in line:
            key, _, value = line[2:].partition(":")
            words = value.split()
            if words and all(word.isdigit() for word in words):
                fields[key.strip()] = [int(word) for word in words]
    threads = len(fields.get("Max Latencies", [])) or len(columns) or 1
    columns += [{} for _ in range(threads - len(columns))]
    per_cpu = [_summary(column, *(_field(fields, key, i) for key in ("Histogram Overflows", "Max Latencies",
                                                                      "Avg Latencies")))
               for i, column in enumerate(columns)]
    merged: dict[int, int] = {}
    for column in columns:
        for bucket, count in column.items():
            merged[bucket] = merged.get(bucket, 0) + count
    maxima = [c["max"] for c in per_cpu if c["max"] is not None]
    n = sum(c["n"] for c in per_cpu)
    avg = round(sum(c["avg"] * c["n"] for c in per_cpu) / n) if n and all(c["avg"] is not None for c in per_cpu) else None
    out = _summary(merged, sum(c["overflows"] for c in per_cpu), max(maxima) if maxima else None, avg)
    return {**out, "per_cpu": per_cpu}


def _field(fields: dict[str, list[int]], key: str, thread: int) -> int | None:
    values = fields.get(key, [])
    return values[thread] if thread < len(values) else None


def _summary(hist: dict[int, int], overflows: int | None, maximum: int | None, avg: int | None) -> dict:
    overflows = overflows or 0
    out = {"n": sum(hist.values()) + overflows, "max": maximum, "avg": avg, "overflows": overflows}
    for name, q in (("p50", 0.50), ("p99", 0.99), ("p999", 0.999)):
        out[name] = quantile(hist, overflows, q, maximum)
    return out


def quantile(hist: dict[int, int], overflows: int, q: float, maximum: int | None) -> int | None:
    """The smallest bucket with at least ceil(q * n) samples at or below it (as the emulator's)."""
    n = sum(hist.values()) + overflows
    if n == 0:
        return None
    rank = max(1, math.ceil(q * n))
    seen = 0
    for bucket in sorted(hist):
        seen += hist[bucket]
        if seen >= rank:
            return bucket
    return maximum


class Cyclictest:
    """cyclictest running while the context lasts: stopped with SIGINT (it then prints its
    histogram) when the context ends, or by itself after `seconds` at the latest. Measured over
    the whole of what it runs beside, however long that takes (4 lanes' senders, starved by the
    real-time threads, took 17-21 s for a 5 s stream)."""

    def __init__(self, priority: int, seconds: int, workdir: Path, interval_us: int = INTERVAL_US):
        self.argv = command(priority, seconds, interval_us)
        self.priority, self.seconds, self.interval_us = priority, seconds, interval_us
        self.workdir = Path(workdir)
        self.proc: subprocess.Popen | None = None
        self.output = self.workdir / "cyclictest.out"

    def __enter__(self) -> "Cyclictest":
        self.workdir.mkdir(parents=True, exist_ok=True)
        with open(self.output, "wb") as out:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def result(self) -> dict:
        text = self.output.read_text(errors="replace")
        if self.proc is None or self.proc.returncode != 0:
            raise RuntimeError(f"`{' '.join(self.argv)}` failed ({self.proc and self.proc.returncode}): {text[-500:]}")
        return {"command": " ".join(["cyclictest", *self.argv[1:]]), **parse(text)}
