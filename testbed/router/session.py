"""The router during one replication: what the runner calls, and the files it leaves.

    with RouterRun(host, routers, rep_dir) as router:                   # applies; writes router.tc
        ...start the emulator, get start_realtime_us...
        router.start_monitor(t0_realtime_us=start_realtime_us)          # router-queue.tsv
        ...run the flows...                 # (close the link first if router.finishes_after_link)
        router.finish()                     # stops the monitor, writes the final statistics
    # on leaving (also on an exception): whatever the engine set up is torn down

`host` is the emulation host (testbed/hosts.py): a lane's namespace or the lab's host over
SSH. `routers` are the replication's routers by direction (directions.py; a RouterConfig alone
is the downlink's); each runs on its engine (an uplink router in the emulator). With a tc router
on the downlink and one in the emulator on the uplink, router.tc holds the tc batch, then the
emulator's note, and the replication calls `finish_on_link()` (the tc router's statistics, read
from the running link) before closing the link and `finish()` (the emulator's, from its log).
What each step does is the engine's (engines.py: the tc engine, tc_engine.py; the emulator's
router stage, emulator_engine.py). Every file is complete or absent.
"""
from __future__ import annotations

from pathlib import Path
from types import TracebackType

from testbed.hosts import Host
from testbed.router.directions import Routers, as_routers
from testbed.router.engine import RouterEngine, RouterPlace
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
        self.routers, self.rep_dir = as_routers(routers), rep_dir
        self.batch: str | None = None
        place = RouterPlace(host, rep_dir, dev, interval_us, log, probe_kernel)
        by_engine: dict[type[RouterEngine], dict[str, RouterConfig]] = {}
        for direction, config in self.routers.items():
            by_engine.setdefault(engine_of(config), {})[direction] = config
        # one engine runs each direction's router; the downlink's engine first
        self._engines = [engine(Routers(**directions), place) for engine, directions in by_engine.items()]
        self._unfinished = list(self._engines)

    @property
    def finishes_after_link(self) -> bool:
        """finish() needs the link closed first (it reads what the emulator writes when it stops)."""
        return any(e.finishes_after_link for e in self._engines)

    def __enter__(self) -> RouterRun:
        texts: list[str] = []
        try:
            for engine in self._engines:
                texts.append(engine.apply())
            self.batch = "\n".join(texts)
            write_complete(self.rep_dir / BATCH_FILE, self.batch)
        except BaseException:
            self._tear_down()
            raise
        return self

    def start_monitor(self, t0_realtime_us: int | None = None) -> None:
        """Samples the queues into router-queue.tsv, where the engine has queues to sample."""
        for engine in self._engines:
            engine.start_monitor(t0_realtime_us)

    def finish_on_link(self) -> None:
        """Finishes the engines that read the running link (the tc router's qdiscs on its TUN):
        before the link closes when finish() must come after it."""
        for engine in [e for e in self._unfinished if not e.finishes_after_link]:
            engine.finish()
            self._unfinished.remove(engine)

    def finish(self) -> dict:
        """Stops the monitors and stores the final statistics (tc-stats.json, router-stats.json) of
        every engine not finished yet; returns the statistics (with two engines, by engine name)."""
        done = {}
        for engine in list(self._unfinished):     # one that fails stays unfinished: ask again
            done[engine.name] = engine.finish()
            self._unfinished.remove(engine)
        return done.popitem()[1] if len(self._engines) == 1 and done else done

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._tear_down()

    def _tear_down(self) -> None:
        """Every engine's, also when one of them fails."""
        errors = []
        for engine in self._engines:
            try:
                engine.tear_down()
            except Exception as e:      # the others still tear down
                errors.append(e)
        if errors:
            raise errors[0]
