"""The router during one replication: what the runner calls, and the files it leaves.

    with RouterRun(ns, config, rep_dir, bin_dir=bin_dir()) as router:   # applies; writes router.tc
        ...start the emulator, get start_realtime_us...
        router.start_monitor(t0_realtime_us=start_realtime_us)          # router-queue.tsv
        ...run the flows...
        router.finish()             # stops the monitor, writes tc-stats.json
    # on leaving (also on an exception): monitor killed if still running, root qdisc removed

Every file is complete or absent: each is written under a temporary name and renamed
when complete; after a failure the unfinished queue samples are removed.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from types import TracebackType

from .router import DEFAULT_DEVICE, apply_router, collect_stats, teardown_router
from .router_config import RouterConfig
from .router_monitor import QueueMonitor

BATCH_FILE = "router.tc"
SAMPLES_FILE = "router-queue.tsv"
STATS_FILE = "tc-stats.json"
_PARTIAL = ".partial"


def write_complete(path: Path, text: str) -> None:
    """Writes text to path so that path is either absent or complete."""
    partial = path.with_name(path.name + _PARTIAL)
    partial.write_text(text)
    os.replace(partial, path)


class RouterRun:
    def __init__(self, ns: str, config: RouterConfig, rep_dir: Path, *, bin_dir: Path,
                 dev: str = DEFAULT_DEVICE, interval_us: int = 10_000):
        if config.engine != "tc":
            raise ValueError(f"router engine is {config.engine!r}: RouterRun drives the tc router only")
        self.ns, self.config, self.rep_dir, self.dev = ns, config, Path(rep_dir), dev
        self.bin_dir, self.interval_us = bin_dir, interval_us
        self.batch: str | None = None
        self._monitor: QueueMonitor | None = None

    def __enter__(self) -> RouterRun:
        self.batch = apply_router(self.ns, self.config, self.dev)
        try:
            write_complete(self.rep_dir / BATCH_FILE, self.batch)
        except BaseException:
            teardown_router(self.ns, self.dev)
            raise
        return self

    def start_monitor(self, t0_realtime_us: int | None = None) -> None:
        partial = self.rep_dir / (SAMPLES_FILE + _PARTIAL)
        self._monitor = QueueMonitor.start(self.ns, partial, bin_dir=self.bin_dir, dev=self.dev,
                                           interval_us=self.interval_us, t0_realtime_us=t0_realtime_us)

    def finish(self) -> dict:
        """Stops the monitor (its file becomes router-queue.tsv) and stores the final statistics."""
        if self._monitor is not None:
            monitor, self._monitor = self._monitor, None
            monitor.stop()
            os.replace(monitor.output, self.rep_dir / SAMPLES_FILE)
        stats = collect_stats(self.ns, self.dev)
        write_complete(self.rep_dir / STATS_FILE, json.dumps(stats, indent=1) + "\n")
        return stats

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            if self._monitor is not None:
                self._monitor.kill()
                self._monitor.output.unlink(missing_ok=True)
                self._monitor = None
        finally:
            teardown_router(self.ns, self.dev)
