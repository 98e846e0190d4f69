"""The emulator engine's statistics: the per-class counters of the router stage, read from the
`# router DIR CLASS ...` trailer lines the emulator writes into its log when it stops
(emulator/LOG_FORMAT.md), with the log's `drop_router`/`ecn_mark` totals."""
from __future__ import annotations

import os
from pathlib import Path

from analysis.read.emulog import read_emulator_log
from analysis.errors import LogFormatError

_ROUTER_COUNTERS = ("arrivals", "enqueued", "drops", "tail_drops", "red_drops", "dequeue_drops", "marks",
                    "backlog_pkts", "backlog_bytes")


class RouterStatsError(RuntimeError):
    """The emulator log does not (yet) hold the router stage's statistics."""


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
