"""The router during one replication: what the runner calls, and the files it leaves.

    with RouterRun(host, routers, rep_dir) as router:                   # applies; writes router.tc
        ...start the emulator, get start_realtime_us...
        router.start_monitor(t0_realtime_us=start_realtime_us)          # router-queue.tsv
        ...run the flows...                 # (close the link first if router.finishes_after_link)
        router.finish()                     # stops the monitor, writes the final statistics
    # on leaving (also on an exception): whatever the engine set up is torn down

`host` is the emulation host (testbed/hosts.py): a lane's namespace or the lab's host over
SSH. `routers` are the replication's routers by direction (directions.py; a RouterConfig alone
is the downlink's); one engine runs them all (an uplink router runs in the emulator, and then
so does the downlink's, testbed/scenario/router_section.py). What each step does is the
engine's (engines.py: the tc engine, tc_engine.py; the emulator's router stage,
emulator_engine.py). Every file is complete or absent.
"""
from __future__ import annotations

from pathlib import Path
from types import TracebackType

from testbed.hosts import Host
from testbed.router.directions import Routers, as_routers
from testbed.router.engine import RouterPlace
from testbed.router.engines import engine_of
from testbed.router.files import BATCH_FILE, EMULATOR_LOG_FILE, write_complete
from testbed.router.plan import RouterConfig
from testbed.router.tc_apply import DEFAULT_DEVICE


class RouterRun:
    def __init__(self, host: Host, routers: Routers | RouterConfig, rep_dir: Path, *, dev: str = DEFAULT_DEVICE,
                 interval_us: int = 10_000, emulator_log: Path | None = None, probe_kernel: bool = True):
        """`emulator_log` (emulator engine): the run's emulator log, by default rep_dir/emulator.log,
        where LinkSession writes it. `probe_kernel`: see tc_apply.apply_router (a lab host gets no
        scratch devices)."""
        rep_dir = Path(rep_dir)
        log = Path(emulator_log) if emulator_log is not None else rep_dir / EMULATOR_LOG_FILE
        routers = as_routers(routers)
        engines = {engine_of(config) for _, config in routers.items()}
        if len(engines) != 1:
            raise ValueError(f"RouterRun needs routers of one engine, got {len(engines)}: {routers}")
        self.routers, self.rep_dir = routers, rep_dir
        self.batch: str | None = None
        self._engine = engines.pop()(routers, RouterPlace(host, rep_dir, dev, interval_us, log, probe_kernel))

    @property
    def finishes_after_link(self) -> bool:
        """finish() needs the link closed first (it reads what the emulator writes when it stops)."""
        return self._engine.finishes_after_link

    def __enter__(self) -> RouterRun:
        self.batch = self._engine.apply()
        try:
            write_complete(self.rep_dir / BATCH_FILE, self.batch)
        except BaseException:
            self._engine.tear_down()
            raise
        return self

    def start_monitor(self, t0_realtime_us: int | None = None) -> None:
        """Samples the queues into router-queue.tsv, where the engine has queues to sample."""
        self._engine.start_monitor(t0_realtime_us)

    def finish(self) -> dict:
        """Stops the monitor and stores the final statistics (tc-stats.json or router-stats.json)."""
        return self._engine.finish()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._engine.tear_down()
