"""The tc engine: Linux HTB and the disciplines' qdiscs on the emulation host's router-side TUN,
sampled by squall-queue-monitor (router-queue.tsv), final statistics in tc-stats.json."""
from __future__ import annotations

import json
import os
from typing import ClassVar

from testbed.router.directions import Routers
from testbed.router.engine import LinkDirection, RouterPlace
from testbed.router.files import PARTIAL, SAMPLES_FILE, STATS_FILE, write_complete
from testbed.router.monitor import QueueMonitor
from testbed.router.plan import RouterConfig
from testbed.router.tc_apply import apply_router, collect_stats, teardown_router
from testbed.router.tc_render import TC_ENGINE


class TcEngine:
    name: ClassVar[str] = TC_ENGINE
    summary: ClassVar[str] = "Linux HTB on the router-side TUN"
    in_emulator: ClassVar[bool] = False
    on_host_path: ClassVar[bool] = True
    needs_tc: ClassVar[bool] = True
    finishes_after_link: ClassVar[bool] = False
    device_queue_refusal: ClassVar[str] = (
        "is the emulator engine's (engine = \"emulator\"); with engine = \"tc\" the device queue is the "
        "router-side TUN's own ring, which on current kernels drops at a full ring instead of holding "
        "the router's queue (docs/router.md)")

    @classmethod
    def check(cls, config: RouterConfig, link: LinkDirection, where: str, direction: str = "down") -> None:
        """Whatever the plan says, HTB and the qdiscs express; the kernel is asked in apply().
        It sits on the downlink only (the scenario's uplink router refuses it, router_section.py)."""
        if direction != "down":
            raise ValueError(f"{where}: the tc engine runs the downlink's router only")

    def __init__(self, routers: Routers, place: RouterPlace) -> None:
        if routers.down is None or routers.up is not None:
            raise ValueError("the tc engine runs the downlink's router only")
        self.config, self.place = routers.down, place
        self._monitor: QueueMonitor | None = None

    def apply(self) -> str:
        return apply_router(self.place.host, self.config, self.place.dev, probe_kernel=self.place.probe_kernel)

    def start_monitor(self, t0_realtime_us: int | None) -> None:
        partial = self.place.rep_dir / (SAMPLES_FILE + PARTIAL)
        self._monitor = QueueMonitor.start(self.place.host, partial, dev=self.place.dev,
                                           interval_us=self.place.interval_us, t0_realtime_us=t0_realtime_us)

    def finish(self) -> dict:
        if self._monitor is not None:
            monitor, self._monitor = self._monitor, None
            monitor.stop()
            os.replace(monitor.output, self.place.rep_dir / SAMPLES_FILE)
        stats = collect_stats(self.place.host, self.place.dev)
        write_complete(self.place.rep_dir / STATS_FILE, json.dumps(stats, indent=1) + "\n")
        return stats

    def tear_down(self) -> None:
        try:
            if self._monitor is not None:
                self._monitor.kill()
                self._monitor.output.unlink(missing_ok=True)
                self._monitor = None
        finally:
            teardown_router(self.place.host, self.place.dev)
