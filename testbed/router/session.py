"""The router during one replication: what the runner calls, and the files it leaves.

    with RouterRun(host, config, rep_dir) as router:                    # applies; writes router.tc
        ...start the emulator, get start_realtime_us...
        router.start_monitor(t0_realtime_us=start_realtime_us)          # router-queue.tsv
        ...run the flows...
        router.finish()             # stops the monitor, writes tc-stats.json
    # on leaving (also on an exception): monitor killed if still running, root qdisc removed

`host` is the emulation host (testbed/hosts.py): a lane's namespace or the lab's host over
SSH, the same steps on both (testbed/router/tc_apply.py, testbed/router/monitor.py).
Every file is complete or absent: each is written under a temporary name and renamed
when complete; after a failure the unfinished queue samples are removed.

With `engine = "emulator"` the router is the emulator's router stage (the link session
wrote it into the emulator's configuration): nothing is applied with tc, router.tc says so
and holds the rendered sections, start_monitor() samples nothing, and finish() reads the
per-class `# router` trailer lines of the emulator log into router-stats.json. The trailer
is written when the emulator stops, so close the link before finish() with this engine.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from types import TracebackType

from analysis.read.emulog import read_emulator_log
from analysis.errors import LogFormatError

from testbed.hosts import Host
from testbed.router.emulator_stage import emulator_router
from testbed.router.tc_apply import DEFAULT_DEVICE, apply_router, collect_stats, teardown_router
from testbed.router.plan import RouterConfig
from testbed.router.monitor import QueueMonitor

BATCH_FILE = "router.tc"
SAMPLES_FILE = "router-queue.tsv"
STATS_FILE = "tc-stats.json"
EMULATOR_STATS_FILE = "router-stats.json"
EMULATOR_LOG_FILE = "emulator.log"      # LinkSession's log, in the same replication directory
_PARTIAL = ".partial"
_ROUTER_COUNTERS = ("arrivals", "enqueued", "drops", "tail_drops", "red_drops", "marks",
                    "backlog_pkts", "backlog_bytes")


class RouterStatsError(RuntimeError):
    """The emulator log does not (yet) hold the router stage's statistics."""


def write_complete(path: Path, text: str) -> None:
    """Writes text to path so that path is either absent or complete."""
    partial = path.with_name(path.name + _PARTIAL)
    partial.write_text(text)
    os.replace(partial, path)


def emulator_note(config: RouterConfig) -> str:
    """router.tc of an emulator-engine run: no tc commands, the router stage's sections instead."""
    router = emulator_router(config)
    return ("# router engine = \"emulator\": nothing was applied with tc; the emulator's router stage\n"
            f"# on the {router.direction}link ran this router (these sections are in emulator.conf,\n"
            "# with the notes on what the emulator engine ignores):\n" + router.sections)


def read_router_stats(log_path: Path) -> dict:
    """The router stage's per-class counters from the trailer of an emulator log
    (`# router DIR CLASS arrivals N ...`), with the log's `drop_router`/`ecn_mark` totals."""
    # A log still being written (or cut by a kill) ends mid-line: say what that means
    # before the full reader calls it malformed.
    if not _has_trailer(Path(log_path)):
        raise RouterStatsError(f"{log_path} has no trailer (`# end ...`): the emulator has not stopped yet "
                               "(close the link before RouterRun.finish with engine = \"emulator\") or was killed")
    try:
        log = read_emulator_log(log_path)
    except (LogFormatError, OSError) as e:
        raise RouterStatsError(f"reading the router stage's counters: {e}") from e
    classes = [_router_line(key, log.counts(key), log_path) for key in log.trailer if key.startswith("router ")]
    events = {}
    for direction in sorted({c["direction"] for c in classes}):
        counters = log.counts(f"counters {direction}")
        events[direction] = {k: counters[k] for k in ("drop_router", "ecn_mark") if k in counters}
    return {"engine": "emulator", "source": Path(log_path).name, "class": classes, "events": events}


def _has_trailer(log_path: Path, tail_bytes: int = 1 << 16) -> bool:
    try:
        with open(log_path, "rb") as f:
            f.seek(max(0, f.seek(0, os.SEEK_END) - tail_bytes))
            return b"\n# end time_us " in f.read()
    except OSError as e:
        raise RouterStatsError(f"reading the router stage's counters: {log_path}: {e}") from e


def _router_line(key: str, counts: dict[str, int], log_path: Path) -> dict:
    _, direction, name = key.split(" ", 2)
    missing = [k for k in _ROUTER_COUNTERS if k not in counts]
    if missing:
        raise RouterStatsError(f"{log_path}: trailer line `# {key} ...` lacks {', '.join(missing)}")
    return {"direction": direction, "class": name, **{k: counts[k] for k in _ROUTER_COUNTERS}}


class RouterRun:
    def __init__(self, host: Host, config: RouterConfig, rep_dir: Path, *, dev: str = DEFAULT_DEVICE,
                 interval_us: int = 10_000, emulator_log: Path | None = None, probe_kernel: bool = True):
        """`emulator_log` (engine "emulator" only): the run's emulator log, by default
        rep_dir/emulator.log, where LinkSession writes it. `probe_kernel`: see
        tc_apply.apply_router (a lab host gets no scratch devices)."""
        self.host, self.config, self.rep_dir, self.dev = host, config, Path(rep_dir), dev
        self.interval_us, self.probe_kernel = interval_us, probe_kernel
        self.emulator_log = Path(emulator_log) if emulator_log is not None else self.rep_dir / EMULATOR_LOG_FILE
        self.batch: str | None = None
        self._monitor: QueueMonitor | None = None

    @property
    def engine(self) -> str:
        return self.config.engine

    def __enter__(self) -> RouterRun:
        if self.engine == "emulator":
            self.batch = emulator_note(self.config)
            write_complete(self.rep_dir / BATCH_FILE, self.batch)
            return self
        self.batch = apply_router(self.host, self.config, self.dev, probe_kernel=self.probe_kernel)
        try:
            write_complete(self.rep_dir / BATCH_FILE, self.batch)
        except BaseException:
            teardown_router(self.host, self.dev)
            raise
        return self

    def start_monitor(self, t0_realtime_us: int | None = None) -> None:
        """Samples the qdiscs into router-queue.tsv; with the emulator engine there are none
        (the emulator log has every router event) and nothing is started."""
        if self.engine == "emulator":
            return
        partial = self.rep_dir / (SAMPLES_FILE + _PARTIAL)
        self._monitor = QueueMonitor.start(self.host, partial, dev=self.dev, interval_us=self.interval_us,
                                           t0_realtime_us=t0_realtime_us)

    def finish(self) -> dict:
        """Stops the monitor (its file becomes router-queue.tsv) and stores the final statistics:
        tc-stats.json, or with the emulator engine router-stats.json (the link must be closed)."""
        if self.engine == "emulator":
            stats = read_router_stats(self.emulator_log)
            write_complete(self.rep_dir / EMULATOR_STATS_FILE, json.dumps(stats, indent=1) + "\n")
            return stats
        if self._monitor is not None:
            monitor, self._monitor = self._monitor, None
            monitor.stop()
            os.replace(monitor.output, self.rep_dir / SAMPLES_FILE)
        stats = collect_stats(self.host, self.dev)
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
            if self.engine == "tc":
                teardown_router(self.host, self.dev)
