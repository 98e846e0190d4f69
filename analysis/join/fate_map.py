"""A capture's packets' fates as a read-only mapping, frame number -> PacketFate, made
from the join's numpy columns when looked up."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

import numpy as np

from analysis.read.event_table import NULL
from analysis.join.fate_index import FATE_NAMES, UNSEEN_CODE, FateIndex
from analysis.join.identity import PacketFate


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
        return cls(frame_no, pick(index.fate, UNSEEN_CODE), pick(index.pkt_id, NULL),
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
