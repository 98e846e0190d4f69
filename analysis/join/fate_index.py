"""The emulator log's packet lives as numpy arrays, built once per log and kept here,
and the vectorised match of a capture's packets with the events at either end of the
link (by_identity.py's fast path).

A packet's identity is identity.py's key columns plus its occurrence number: the k-th
packet with those columns at a capture point is the k-th event with them at that end of
the link (`in` for the sender's capture, `out` for the receiver's). Vectorised: the end
and the columns are hashed, sorted, and packets and events ranked within their hash
group; the k-th packet takes the k-th event of its group. Every matched pair is then
compared column by column: a hash collision makes `match` return None, and
`match_exactly` matches with dictionaries."""

from __future__ import annotations

import weakref
from collections import defaultdict, deque
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from analysis.read.emulog import FINAL_EVENTS, EmulatorLog
from analysis.read.event_table import NULL, EventTable
from analysis.join.identity import PENDING, UNSEEN, Columns, address_keys, log_columns

FATE_NAMES = (*sorted(FINAL_EVENTS), PENDING, UNSEEN)
_PENDING, UNSEEN_CODE = FATE_NAMES.index(PENDING), FATE_NAMES.index(UNSEEN)
_HASH_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)


def _hash(columns: Sequence[np.ndarray], n: int) -> np.ndarray:
    h = np.zeros(n, np.uint64)
    for c in columns:
        h ^= c.view(np.uint64)
        h *= _HASH_MULTIPLIER
        h ^= h >> np.uint64(29)
    return h


def _argsort_stable(keys: np.ndarray) -> np.ndarray:
    """np.argsort(keys, kind="stable"), in half the time: numpy's unstable sort, then the
    few runs of equal keys (equal identities) put back in index order."""
    order = np.argsort(keys)
    ordered = keys[order]
    ties = np.flatnonzero(ordered[1:] == ordered[:-1])
    if len(ties):
        at = np.union1d(ties, ties + 1)  # every position in a run of equal keys
        order[at] = order[at][np.lexsort((order[at], ordered[at]))]
    return order


def _ranks_in_groups(sorted_keys: np.ndarray) -> np.ndarray:
    """Position of each element within its run of equal keys (one pass, no search)."""
    n = len(sorted_keys)
    starts = np.zeros(n, np.int64)
    runs = np.flatnonzero(sorted_keys[1:] != sorted_keys[:-1]) + 1
    starts[runs] = runs
    return np.arange(n) - np.maximum.accumulate(starts)


ENTRY, EXIT = 0, 1  # the ends of the link: `in` events, `out` events


@dataclass(slots=True)
class LinkEvents:
    """The log's `in` events, then its `out` events, each in log order: at which end of
    the link each is (ENTRY: what the sender's capture shows; EXIT: what the receiver's
    shows) and the life it belongs to (the index of its `in` in FateIndex's arrays). An
    event has its packet's fields, those logged at its `in` (the emulator writes the same
    fields on every event of a packet): `columns` are the `in` events' key columns."""
    end: np.ndarray
    life: np.ndarray
    columns: Columns
    _sorted: tuple[np.ndarray, np.ndarray] | None = None

    def match(self, end: np.ndarray, packets: Columns) -> np.ndarray | None:
        """For each packet (in capture order) at its end of the link, the life of its
        event (-1: none); None on a hash collision."""
        if self._sorted is None:
            h_in = _hash(self.columns, len(self.columns[0]))
            h = _hash([self.end, h_in[self.life]], len(self.life))
            order = _argsort_stable(h)
            self._sorted = (h[order], order)
        hs, order = self._sorted
        n = len(end)
        h = _hash([end, _hash(packets, n)], n)
        p_order = _argsort_stable(h)
        h_sorted = h[p_order]
        # sorted needles: searchsorted walks forward instead of jumping around
        first, count = np.empty(n, np.int64), np.empty(n, np.int64)
        first[p_order] = np.searchsorted(hs, h_sorted, "left")
        count[p_order] = np.searchsorted(hs, h_sorted, "right")
        count -= first
        rank = np.empty(n, np.int64)
        rank[p_order] = _ranks_in_groups(h_sorted)
        found = rank < count
        event = order[first[found] + rank[found]]
        life = self.life[event]
        if not np.array_equal(end[found], self.end[event]):
            return None
        for mine, theirs in zip(packets, self.columns):
            if not np.array_equal(mine[found], theirs[life]):
                return None
        match = np.full(n, -1, np.int64)
        match[found] = life
        return match

    def match_exactly(self, end: np.ndarray, packets: Columns) -> np.ndarray:
        """match, with Python dictionaries on the end and the key columns."""
        fields = list(zip(*(c.tolist() for c in self.columns)))
        queues: dict[tuple[int, ...], deque[int]] = defaultdict(deque)
        for at, life in zip(self.end.tolist(), self.life.tolist()):
            queues[(at, *fields[life])].append(life)
        match = np.full(len(end), -1, np.int64)
        for i, key in enumerate(zip(end.tolist(), *(c.tolist() for c in packets))):
            lives = queues.get(key)
            if lives:
                match[i] = lives.popleft()
        return match


@dataclass(slots=True)
class FateIndex:
    """Per `in` event (a packet's life in the link), in log order; the events at both
    ends of the link; the source addresses of each direction."""
    pkt_id: np.ndarray
    fate: np.ndarray           # index into FATE_NAMES
    in_us: np.ndarray
    end_us: np.ndarray         # NULL while pending
    hits: np.ndarray
    marked: np.ndarray         # bool
    dir: np.ndarray            # object: down | up | None
    events: LinkEvents
    sources: dict[str, np.ndarray]  # dir -> its distinct source addresses (identity.py)


# id(log) -> (a weak reference to the log, its index); an entry goes with its log
_INDEXES: dict[int, tuple[weakref.ref[EmulatorLog], FateIndex]] = {}


def fate_index(log: EmulatorLog) -> FateIndex:
    """The log's packet lives, built on first use and kept here while the log lives (both
    captures of a replication share them)."""
    key = id(log)
    entry = _INDEXES.get(key)
    if entry is not None and entry[0]() is log:
        return entry[1]
    index = _build(log.table)
    _INDEXES[key] = (weakref.ref(log, lambda _: _INDEXES.pop(key, None)), index)
    return index


@dataclass(slots=True)
class _Owners:
    """Which `in` an event belongs to, as the log is read in order: the latest `in` of
    its pkt_id before it; and the life each `in` ends up with: an `in` that reuses a
    pkt_id replaces the life that the earlier `in`s of that id share."""
    distinct: np.ndarray       # the pkt_ids of `in` events, sorted, once each
    in_order: np.ndarray       # `in` indexes by (pkt_id, row)
    key_sorted: np.ndarray     # their (pkt_id rank, row) keys
    stride: int
    life_of_in: np.ndarray

    @classmethod
    def of(cls, ids: np.ndarray, in_rows: np.ndarray, n_rows: int) -> _Owners:
        stride = n_rows + 1
        if np.all(ids[1:] > ids[:-1]):  # the emulator's increasing ids: one `in` per id
            rank = np.arange(len(ids))
            return cls(ids, rank, rank * stride + in_rows, stride, rank)
        distinct, rank = np.unique(ids, return_inverse=True)
        rank = rank.reshape(-1)
        key = rank * stride + in_rows
        in_order = np.argsort(key, kind="stable")
        # the last `in` of each pkt_id (by id, then row)
        group_ends = np.searchsorted(rank[in_order], np.arange(len(distinct)), "right") - 1
        return cls(distinct, in_order, key[in_order], stride, in_order[group_ends][rank])

    def owners(self, rows: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The rows (events with these pkt_ids) that belong to an `in`, and that `in`."""
        pos = np.searchsorted(self.distinct, ids)
        known = pos < len(self.distinct)
        known[known] = self.distinct[pos[known]] == ids[known]
        rows, pos = rows[known], pos[known]
        at = np.searchsorted(self.key_sorted, pos * self.stride + rows, "left") - 1
        ok = at >= 0
        ok[ok] = self.key_sorted[at[ok]] // self.stride == pos[ok]
        return rows[ok], self.in_order[at[ok]]


def _build(table: EventTable) -> FateIndex:
    pkt_id = table.ints["pkt_id"]
    has_id = pkt_id != NULL
    in_rows = np.flatnonzero(table.is_("event", "in") & has_id)
    owners = _Owners.of(pkt_id[in_rows], in_rows, len(table))
    event_code = table.texts["event"]
    wanted = [table.id_of(name) for name in (*FINAL_EVENTS, "hit", "ecn_mark")]
    rows = np.flatnonzero(has_id & np.isin(event_code, wanted))
    rows, owner = owners.owners(rows, pkt_id[rows])
    fate, end_us, hits, marked = _lives(table, rows, owner, owners.life_of_in)
    life = owners.life_of_in
    out = owner[event_code[rows] == table.id_of("out")]
    events = LinkEvents(np.repeat(np.array([ENTRY, EXIT], np.int64), [len(in_rows), len(out)]),
                        np.concatenate([np.arange(len(in_rows)), out]),
                        log_columns(table, in_rows))
    dirs = table.texts["dir"][in_rows]
    return FateIndex(pkt_id[in_rows], fate, table.ints["time_us"][in_rows][life], end_us,
                     hits, marked, np.array(table.strings, dtype=object)[dirs][life], events,
                     {d: _sources(table, in_rows[dirs == table.id_of(d)]) for d in ("down", "up")})


def _sources(table: EventTable, rows: np.ndarray) -> np.ndarray:
    """The distinct source addresses of these rows (identity.address_keys)."""
    ids = np.flatnonzero(np.bincount(table.texts["src"][rows], minlength=1)).tolist()
    return address_keys([table.strings[i] for i in ids if i])  # type: ignore[misc]


def _lives(table: EventTable, rows: np.ndarray, owner: np.ndarray,
           life_of_in: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per `in`: fate, end time, hits and ECN mark of its life, from the rows (hits, ECN
    marks, final events) and the `in` each belongs to."""
    n_in = len(life_of_in)
    current = life_of_in[owner] == owner  # events of a life an `in` later replaced are lost
    rows, life = rows[current], owner[current]
    event_code = table.texts["event"]
    codes = event_code[rows]
    hits = np.bincount(life[codes == table.id_of("hit")], minlength=n_in)
    marked = np.bincount(life[codes == table.id_of("ecn_mark")], minlength=n_in) > 0
    final = np.isin(codes, [table.id_of(name) for name in FINAL_EVENTS])
    f_life, f_rows = life[final], rows[final]
    fate = np.full(n_in, _PENDING, np.int8)
    end_us = np.full(n_in, NULL, np.int64)
    if len(f_life):
        distinct_lives, last_rows = f_life, f_rows
        if np.bincount(f_life).max() > 1:  # the last final event of each life wins
            distinct_lives, last = np.unique(f_life[::-1], return_index=True)
            last_rows = f_rows[::-1][last]
        code_to_fate = np.zeros(len(table.strings), np.int8)
        for name in FINAL_EVENTS:
            if table.id_of(name) >= 0:
                code_to_fate[table.id_of(name)] = FATE_NAMES.index(name)
        fate[distinct_lives] = code_to_fate[event_code[last_rows]]
        end_us[distinct_lives] = table.ints["time_us"][last_rows]
    return (fate[life_of_in], end_us[life_of_in], hits[life_of_in], marked[life_of_in])
