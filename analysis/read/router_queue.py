"""Reader for the router queue samples (`router-queue.tsv`, router-tc/README.md format 1).

The queue of the router is what its leaf qdiscs hold: per sample the backlog summed over
the qdiscs that are not HTB (the leaves of the DiffServ tree; a lone root pfifo/bfifo/red
qdisc is its own leaf). Drops and ECN marks are the leaves' counters at the last sample
minus those at the first."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from analysis.errors import AnalysisInputError
from analysis.results.directory import QUEUE_FILE as QUEUE_NAME

COLUMNS = ("time_us", "object", "handle", "parent", "kind", "backlog_bytes", "backlog_pkts",
           "drops", "overlimits", "requeues", "marks")
SUPPORTED_FORMAT = 1


class QueueFormatError(AnalysisInputError):
    pass


@dataclass(frozen=True, slots=True)
class QueueRow:
    time_us: int
    object: str
    handle: str
    parent: str
    kind: str
    backlog_bytes: int
    backlog_pkts: int
    drops: int
    marks: int | None


@dataclass(slots=True)
class QueueSamples:
    path: Path
    interval_us: int | None
    rows: list[QueueRow] = field(default_factory=list)
    cut_short: bool = True   # no `# end` trailer

    def leaves(self) -> set[str]:
        qdiscs = {(r.handle, r.kind) for r in self.rows if r.object == "qdisc"}
        leaves = {h for h, kind in qdiscs if kind != "htb"}
        return leaves or {h for h, _ in qdiscs}

    def leaf_parents(self) -> dict[str, str]:
        """Each leaf qdisc's handle -> its parent (the HTB class it serves, e.g. `1:10`)."""
        leaves = self.leaves()
        return {r.handle: r.parent for r in self.rows if r.object == "qdisc" and r.handle in leaves}

    def series(self, leaf: str | None = None) -> tuple[list[int], list[int], list[int]]:
        """(time_us, backlog_pkts, backlog_bytes) per sample, summed over the leaf qdiscs
        (or of the one leaf qdisc with this handle)."""
        leaves = self.leaves() if leaf is None else {leaf}
        totals: dict[int, list[int]] = {}
        for r in self.rows:
            if r.object == "qdisc" and r.handle in leaves:
                t = totals.setdefault(r.time_us, [0, 0])
                t[0] += r.backlog_pkts
                t[1] += r.backlog_bytes
        times = sorted(totals)
        return times, [totals[t][0] for t in times], [totals[t][1] for t in times]

    def counter_growth(self, column: str, leaf: str | None = None) -> int | None:
        """Growth of a leaf counter (`drops`, `marks`) over the samples, summed over the
        leaves (or of one leaf)."""
        leaves = self.leaves() if leaf is None else {leaf}
        first: dict[str, int] = {}
        last: dict[str, int] = {}
        for r in self.rows:
            value = getattr(r, column)
            if r.object != "qdisc" or r.handle not in leaves or value is None:
                continue
            first.setdefault(r.handle, value)
            last[r.handle] = value
        if not last:
            return None
        return sum(last[h] - first[h] for h in last)


def _int(text: str, where: str, column: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise QueueFormatError(f"{where}: column {column}: {text!r} is not an integer") from None


def read_queue_samples(path: str | os.PathLike[str]) -> QueueSamples:
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise QueueFormatError(f"{path}: cannot read: {e}") from e
    samples = QueueSamples(path, None)
    seen_format = False
    for n, line in enumerate(lines, start=1):
        where = f"{path}:{n}"
        if line.startswith("#"):
            words = line[1:].split()
            if words[:1] == ["format"]:
                if words[1:] != [str(SUPPORTED_FORMAT)]:
                    raise QueueFormatError(f"{where}: format {' '.join(words[1:])}: "
                                           f"expected {SUPPORTED_FORMAT}")
                seen_format = True
            elif words[:1] == ["interval_us"] and len(words) == 2:
                samples.interval_us = _int(words[1], where, "interval_us")
            elif words[:1] == ["end"]:
                samples.cut_short = False
            continue
        if not line.strip():
            continue
        if not seen_format:
            raise QueueFormatError(f"{where}: a sample row before the `# format 1` line")
        c = line.split("\t")
        if len(c) != len(COLUMNS):
            raise QueueFormatError(f"{where}: {len(c)} tab-separated columns, expected "
                                   f"{len(COLUMNS)} ({' '.join(COLUMNS)})")
        samples.rows.append(QueueRow(
            _int(c[0], where, "time_us"), c[1], c[2], c[3], c[4],
            _int(c[5], where, "backlog_bytes"), _int(c[6], where, "backlog_pkts"),
            _int(c[7], where, "drops"), None if c[10] == "-" else _int(c[10], where, "marks")))
    if not seen_format:
        raise QueueFormatError(f"{path}: no `# format` line: not a squall-queue-monitor file")
    return samples


@dataclass(frozen=True, slots=True)
class QueueStats:
    samples: int
    max_backlog_pkts: int
    mean_backlog_pkts: float
    max_backlog_bytes: int
    mean_backlog_bytes: float
    drops: int | None
    marks: int | None


def queue_stats(samples: QueueSamples, leaf: str | None = None) -> QueueStats | None:
    """Over all leaf qdiscs (the router's queue), or of one leaf qdisc (one class's)."""
    times, pkts, nbytes = samples.series(leaf)
    if not times:
        return None
    return QueueStats(len(times), max(pkts), sum(pkts) / len(pkts), max(nbytes),
                      sum(nbytes) / len(nbytes), samples.counter_growth("drops", leaf),
                      samples.counter_growth("marks", leaf))


def class_of_parent(parent: str, classes: list[str]) -> str:
    """The scenario's name of the HTB class `1:10`, `1:20`, … `1:a0` (tc's hexadecimal
    minors 0x10·(i+1) for the i-th class in file order, docs/router.md); the handle itself
    when it is not one of them."""
    major, _, minor = parent.partition(":")
    try:
        index = int(minor, 16) // 0x10 - 1 if int(minor, 16) % 0x10 == 0 else -1
    except ValueError:
        index = -1
    return classes[index] if major == "1" and 0 <= index < len(classes) else parent
