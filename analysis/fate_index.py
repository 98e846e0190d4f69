"""The emulator log's packet lives as numpy arrays, built once per log, and the
vectorised order match of a capture's packets with them (join.py's fast path).

Identities become 9 int64 columns (texts as token ids, `-`/None as NULL); equal
identities are matched in order by hashing the columns, sorting, and ranking packets
and `in` events within their hash group. Every matched pair is then compared column by
column: a hash collision makes `match` return None and join.py matches exactly."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from analysis.emulog import FINAL_EVENTS, EmulatorLog
from analysis.event_table import NULL, EventTable
from analysis.identity import PENDING, PROTO_NAMES, UNSEEN, PacketFate
from analysis.pcap import FRAGMENT, PROTO_TCP, PROTO_UDP, Packet, only_ip

FATE_NAMES = (*sorted(FINAL_EVENTS), PENDING, UNSEEN)
_PENDING, _UNSEEN = FATE_NAMES.index(PENDING), FATE_NAMES.index(UNSEEN)
_HASH_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)


@dataclass(slots=True)
class IdentityKeys:
    """Packets in capture order: frame numbers and the identity columns (proto, src,
    sport, dst, dport, ip_id, tcp_seq, tcp_ack, payload_len)."""
    frame_no: np.ndarray
    columns: list[np.ndarray]


def _hash(columns: Sequence[np.ndarray], n: int) -> np.ndarray:
    h = np.zeros(n, np.uint64)
    for c in columns:
        h ^= c.view(np.uint64)
        h *= _HASH_MULTIPLIER
        h ^= h >> np.uint64(29)
    return h


def _ranks_in_groups(sorted_keys: np.ndarray) -> np.ndarray:
    """Position of each element within its run of equal keys."""
    starts = np.searchsorted(sorted_keys, sorted_keys, "left")
    return np.arange(len(sorted_keys)) - starts


@dataclass(slots=True)
class FateIndex:
    """Per `in` event (a packet's life in the link), in log order."""
    in_keys: IdentityKeys      # frame_no holds the pkt_id
    fate: np.ndarray           # index into FATE_NAMES
    in_us: np.ndarray
    end_us: np.ndarray         # NULL while pending
    hits: np.ndarray
    marked: np.ndarray         # bool
    dir: np.ndarray            # object: down | up | None
    tokens: dict[str, int] = field(default_factory=dict)
    _sorted: tuple[np.ndarray, np.ndarray] | None = None

    def token(self, text: str) -> int:
        return self.tokens.setdefault(text, len(self.tokens))

    def match(self, packets: IdentityKeys) -> np.ndarray | None:
        """For each packet, the index of its `in` event (-1: unseen); None on a hash
        collision."""
        if self._sorted is None:
            h = _hash(self.in_keys.columns, len(self.in_keys.frame_no))
            order = np.argsort(h, kind="stable")
            self._sorted = (h[order], order)
        hs, order = self._sorted
        n = len(packets.frame_no)
        h = _hash(packets.columns, n)
        p_order = np.argsort(h, kind="stable")
        h_sorted = h[p_order]
        # sorted needles: searchsorted walks forward instead of jumping around
        first, count = np.empty(n, np.int64), np.empty(n, np.int64)
        first[p_order] = np.searchsorted(hs, h_sorted, "left")
        count[p_order] = np.searchsorted(hs, h_sorted, "right")
        count -= first
        rank = np.empty(n, np.int64)
        rank[p_order] = _ranks_in_groups(h_sorted)
        found = rank < count
        match = np.full(n, -1, np.int64)
        match[found] = order[first[found] + rank[found]]
        rows = match[found]
        for mine, theirs in zip(packets.columns, self.in_keys.columns):
            if not np.array_equal(mine[found], theirs[rows]):
                return None
        return match

    def record_keys(self, records: np.ndarray) -> IdentityKeys:
        """Identity columns of a capture's records (non-IP and malformed frames left out,
        as pcap.ip_packets does)."""
        r = only_ip(records)
        proto = r["proto"].astype(np.int64)
        ports = np.isin(proto, (PROTO_TCP, PROTO_UDP)) & ((r["status"] & FRAGMENT) == 0)
        tcp = ports & (proto == PROTO_TCP)
        version = r["ip_version"]

        def where(mask: np.ndarray, name: str) -> np.ndarray:
            return np.where(mask, r[name].astype(np.int64), NULL)

        columns = [self._proto_tokens(proto), self._address_tokens(version, r["src"]),
                   where(ports, "sport"), self._address_tokens(version, r["dst"]),
                   where(ports, "dport"), where(version == 4, "ip_id"), where(tcp, "tcp_seq"),
                   where(tcp, "tcp_ack"), where(ports, "payload_len")]
        return IdentityKeys(r["frame_no"].astype(np.int64), columns)

    def _proto_tokens(self, proto: np.ndarray) -> np.ndarray:
        values, inverse = np.unique(proto, return_inverse=True)
        tokens = np.array([self.token(PROTO_NAMES.get(v, str(v))) for v in values.tolist()],
                          np.int64)
        return tokens[inverse.reshape(-1)] if len(values) else np.empty(0, np.int64)

    def _address_tokens(self, version: np.ndarray, raw: np.ndarray) -> np.ndarray:
        out = np.empty(len(raw), np.int64)
        bytes16 = np.ascontiguousarray(raw).view(np.uint8).reshape(len(raw), 16)
        v4 = version == 4
        if v4.any():
            words = np.ascontiguousarray(bytes16[v4, :4]).view(">u4").reshape(-1)
            values, inverse = np.unique(words, return_inverse=True)
            tokens = np.array([self.token(str(ipaddress.IPv4Address(v)))
                               for v in values.tolist()], np.int64)
            out[v4] = tokens[inverse.reshape(-1)]
        if (~v4).any():
            values, inverse = np.unique(raw[~v4], return_inverse=True)
            tokens = np.array([self.token(str(ipaddress.IPv6Address(bytes(v))))
                               for v in values.tolist()], np.int64)
            out[~v4] = tokens[inverse.reshape(-1)]
        return out

    def packet_keys(self, packets: Sequence[Packet]) -> IdentityKeys:
        """Identity columns of Packet objects (as identity.packet_identity)."""
        rows = []
        for p in packets:
            ports = p.proto in (PROTO_TCP, PROTO_UDP) and not p.status & FRAGMENT
            tcp = ports and p.proto == PROTO_TCP
            rows.append((self.token(PROTO_NAMES.get(p.proto, str(p.proto))), self.token(p.src),
                         p.sport if ports else NULL, self.token(p.dst),
                         p.dport if ports else NULL,
                         p.ip_id if p.ip_version == 4 and p.ip_id is not None else NULL,
                         p.tcp_seq if tcp else NULL, p.tcp_ack if tcp else NULL,
                         p.payload_len if ports else NULL))
        columns = [np.array(c, np.int64) for c in zip(*rows)] if rows else \
            [np.empty(0, np.int64) for _ in range(9)]
        return IdentityKeys(np.array([p.frame_no for p in packets], np.int64), columns)


def fate_index(log: EmulatorLog) -> FateIndex:
    """The log's packet lives, built on first use and kept with the log (both captures of
    a replication share it)."""
    if log._fate_index is None:
        log._fate_index = _build(log.table)
    return log._fate_index  # type: ignore[return-value]


def _text_tokens(table: EventTable, column: str, index: FateIndex, rows: np.ndarray) -> np.ndarray:
    per_string = np.array([index.token(s or "") for s in table.strings], np.int64)
    return per_string[table.texts[column][rows]]


def _build(table: EventTable) -> FateIndex:
    pkt_id = table.ints["pkt_id"]
    has_id = pkt_id != NULL
    in_rows = np.flatnonzero(table.is_("event", "in") & has_id)
    index = FateIndex(IdentityKeys(pkt_id[in_rows], []), np.empty(0, np.int8),
                      table.ints["time_us"][in_rows], np.empty(0, np.int64),
                      np.empty(0, np.int64), np.empty(0, bool),
                      np.array(table.strings, dtype=object)[table.texts["dir"][in_rows]])
    index.in_keys.columns = [
        _text_tokens(table, "proto", index, in_rows), _text_tokens(table, "src", index, in_rows),
        table.ints["sport"][in_rows], _text_tokens(table, "dst", index, in_rows),
        table.ints["dport"][in_rows], table.ints["ip_id"][in_rows],
        table.ints["tcp_seq"][in_rows], table.ints["tcp_ack"][in_rows],
        table.ints["payload_len"][in_rows]]
    _lives(table, index, in_rows, has_id)
    return index


def _lives(table: EventTable, index: FateIndex, in_rows: np.ndarray, has_id: np.ndarray) -> None:
    """Hits, ECN marks and the final event of each life. As the log is read in order: an
    event belongs to the latest `in` of its pkt_id before it, and an `in` that reuses a
    pkt_id replaces the life that the earlier `in`s of that id share."""
    n_in = len(in_rows)
    ids = index.in_keys.frame_no
    stride = len(table) + 1
    if np.all(ids[1:] > ids[:-1]):  # the emulator's increasing ids: one `in` per id
        distinct, id_rank = ids, np.arange(n_in)
        in_order = life_of_in = id_rank
        in_key_sorted = id_rank * stride + in_rows
    else:
        distinct, id_rank = np.unique(ids, return_inverse=True)
        id_rank = id_rank.reshape(-1)
        in_key = id_rank * stride + in_rows
        in_order = np.argsort(in_key, kind="stable")
        in_key_sorted = in_key[in_order]
        # the life each `in` ends up with: the last `in` of its pkt_id (by id, then row)
        group_ends = np.searchsorted(id_rank[in_order], np.arange(len(distinct)), "right") - 1
        life_of_in = in_order[group_ends][id_rank]

    event_code = table.texts["event"]
    strings = table.strings
    wanted = {i for i, s in enumerate(strings) if s in FINAL_EVENTS or s in ("hit", "ecn_mark")}
    rows = np.flatnonzero(has_id & np.isin(event_code, list(wanted)))
    ev_ids = table.ints["pkt_id"][rows]
    pos_id = np.searchsorted(distinct, ev_ids)
    known = pos_id < len(distinct)
    known[known] = distinct[pos_id[known]] == ev_ids[known]
    rows, pos_id = rows[known], pos_id[known]
    at = np.searchsorted(in_key_sorted, pos_id * stride + rows, "left") - 1
    ok = at >= 0
    ok[ok] = in_key_sorted[at[ok]] // stride == pos_id[ok]
    rows, life = rows[ok], in_order[at[ok]]
    current = life_of_in[life] == life  # events of a life an `in` later replaced are lost
    rows, life = rows[current], life[current]
    codes = event_code[rows]

    def is_(name: str) -> np.ndarray:
        return codes == table.id_of(name)

    index.hits = np.bincount(life[is_("hit")], minlength=n_in)[life_of_in]
    index.marked = (np.bincount(life[is_("ecn_mark")], minlength=n_in) > 0)[life_of_in]
    final = np.isin(codes, [table.id_of(name) for name in FINAL_EVENTS])
    f_life, f_rows = life[final], rows[final]
    fate = np.full(n_in, _PENDING, np.int8)
    end_us = np.full(n_in, NULL, np.int64)
    if len(f_life):
        # the last final event of each life wins
        distinct_lives, last = np.unique(f_life[::-1], return_index=True)
        last_rows = f_rows[::-1][last]
        code_to_fate = np.zeros(len(table.strings), np.int8)
        for name in FINAL_EVENTS:
            if table.id_of(name) >= 0:
                code_to_fate[table.id_of(name)] = FATE_NAMES.index(name)
        fate[distinct_lives] = code_to_fate[event_code[last_rows]]
        end_us[distinct_lives] = table.ints["time_us"][last_rows]
    index.fate, index.end_us = fate[life_of_in], end_us[life_of_in]
    index.in_us, index.dir = index.in_us[life_of_in], index.dir[life_of_in]


class FateMap(Mapping[int, PacketFate]):
    """Frame number -> PacketFate, built when looked up (a dict of millions of frozen
    dataclasses takes seconds to make)."""

    def __init__(self, frame_no: np.ndarray, fate: np.ndarray, pkt_id: np.ndarray,
                 dir: list[str | None], in_us: np.ndarray, end_us: np.ndarray,
                 hits: np.ndarray, marked: np.ndarray) -> None:
        self.frame_no, self.fate, self.pkt_id = frame_no, fate, pkt_id
        self.in_us, self.end_us, self.hits, self.marked = in_us, end_us, hits, marked
        self._dir = dir
        self._row_of = _RowOf(frame_no)
        self._lists: tuple[list, ...] | None = None
        self._briefs: list[tuple[str, int, bool]] | None = None

    @classmethod
    def of(cls, frame_no: np.ndarray, index: FateIndex, match: np.ndarray) -> FateMap:
        seen = match >= 0
        rows = np.where(seen, match, 0)

        def pick(values: np.ndarray, default: int) -> np.ndarray:
            return np.where(seen, values[rows], default) if len(values) else \
                np.full(len(match), default, values.dtype)

        dir = np.where(seen, index.dir[rows], None).tolist() if len(index.dir) else \
            [None] * len(match)
        return cls(frame_no, pick(index.fate, _UNSEEN), pick(index.in_keys.frame_no, NULL),
                   dir, pick(index.in_us, NULL), pick(index.end_us, NULL),
                   pick(index.hits, 0), pick(index.marked, False))

    def fate_names(self) -> np.ndarray:
        """Each row's fate as text (object array)."""
        return np.array(FATE_NAMES, dtype=object)[self.fate]

    def _columns(self) -> tuple[list, ...]:
        if self._lists is None:
            def nullable(values: np.ndarray) -> list:
                column = values.astype(object)
                column[values == NULL] = None
                return column.tolist()
            names = self.fate_names().tolist()
            self._lists = (names, nullable(self.pkt_id), self._dir, nullable(self.in_us),
                           nullable(self.end_us), self.hits.tolist(), self.marked.tolist())
        return self._lists

    def __getitem__(self, frame_no: int) -> PacketFate:
        row = self._row_of.get(frame_no)
        if row is None:
            raise KeyError(frame_no)
        fate, pkt_id, dir, in_us, end_us, hits, marked = self._columns()
        return PacketFate(frame_no, fate[row], pkt_id[row], dir[row], in_us[row], end_us[row],
                          hits[row], marked[row])

    def brief(self, frame_no: int) -> tuple[str, int, bool] | None:
        """(fate, hits, ecn_marked) without a PacketFate; None when not in the capture."""
        row = self._row_of.get(frame_no)
        if row is None:
            return None
        if self._briefs is None:
            fate, _, _, _, _, hits, marked = self._columns()
            self._briefs = list(zip(fate, hits, marked))
        return self._briefs[row]

    def counts(self, frame_nos: Iterable[int]) -> dict[str, int]:
        """Fate -> number of these frames (those in the capture)."""
        rows = self._row_of.rows(frame_nos)
        codes = self.fate[rows[rows >= 0]]
        counts = np.bincount(codes, minlength=len(FATE_NAMES))
        return {FATE_NAMES[i]: int(counts[i]) for i in np.flatnonzero(counts).tolist()}

    def get(self, frame_no: int, default: PacketFate | None = None) -> PacketFate | None:  # type: ignore[override]
        return self[frame_no] if frame_no in self._row_of else default

    def __contains__(self, frame_no: object) -> bool:
        return frame_no in self._row_of

    def __iter__(self) -> Iterator[int]:
        return iter(self._row_of.frames())

    def __len__(self) -> int:
        return len(self._row_of)


class _RowOf:
    """Frame number -> row: a list indexed by frame number when the numbers are dense
    (captures number their frames 1..N), else a dict."""

    def __init__(self, frame_no: np.ndarray) -> None:
        self._frame_no = frame_no
        top = int(frame_no.max()) if len(frame_no) else -1
        self._dense: list[int] | None = None
        self._sparse: dict[int, int] | None = None
        if 0 <= int(frame_no.min(initial=0)) and top <= 2 * len(frame_no) + 1024:
            dense = np.full(top + 1, -1, np.int64)
            dense[frame_no] = np.arange(len(frame_no))
            self._dense = dense.tolist()
        else:
            self._sparse = {f: i for i, f in enumerate(frame_no.tolist())}

    def get(self, frame_no: object) -> int | None:
        if self._dense is not None:
            try:
                row = self._dense[frame_no] if frame_no >= 0 else -1  # type: ignore[index,operator]
            except (IndexError, TypeError):
                return None
            return row if row >= 0 else None
        return self._sparse.get(frame_no)  # type: ignore[union-attr,arg-type]

    def __contains__(self, frame_no: object) -> bool:
        return self.get(frame_no) is not None

    def __len__(self) -> int:
        return len(self.frames())

    def frames(self) -> list[int]:
        """Distinct frame numbers, in row order."""
        if self._sparse is not None:
            return list(self._sparse)
        seen = np.zeros(len(self._dense), bool)  # type: ignore[arg-type]
        seen[self._frame_no] = True
        rows = np.flatnonzero(seen)
        return rows[np.argsort(np.asarray(self._dense)[rows], kind="stable")].tolist()

    def rows(self, frame_nos: Iterable[int]) -> np.ndarray:
        """Rows of these frames (those in the capture)."""
        found = (self.get(f) for f in frame_nos)
        return np.fromiter((r for r in found if r is not None), np.int64)
