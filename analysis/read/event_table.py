"""The emulator log's event lines as numpy columns, and the C reader that fills them.

`squall-log-records` (analysis/src/log_records.c) writes one record per event line with
the text columns interned (log_record.h); RECORD_DTYPE below must match it. It refuses
(exit 3) anything but plain lines; emulog.py then parses the file in Python."""

from __future__ import annotations

import mmap
import struct
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from analysis.read.pcap import program_path, run_to_memory

READER_NAME = "squall-log-records"
NULL = np.iinfo(np.int64).min  # an integer column's `-`
MAGIC = 0x524C5153
VERSION = 1
EXIT_UNUSUAL = 3
INT_NAMES = ("time_us", "pkt_id", "ip_len", "attempt", "sbuf", "rbuf", "sport", "dport",
             "ip_id", "tcp_seq", "tcp_ack", "payload_len")
TEXT_NAMES = ("event", "dir", "state", "proto", "src", "dst", "tcp_flags", "note")
RECORD_DTYPE = np.dtype([("ints", "<i8", (len(INT_NAMES),)), ("texts", "<u4", (len(TEXT_NAMES),)),
                         ("line", "<u8")])
_HEADER = struct.Struct("<IIII")
_FOOTER = struct.Struct("<QQQII")
_STRING_HEAD = struct.Struct("<IIQ")
_COMMENT_HEAD = struct.Struct("<QQII")

# (line number, event lines before it, text after the `#`)
Comment = tuple[int, int, str]


@dataclass(slots=True)
class EventTable:
    """One row per event line, in file order."""
    ints: dict[str, np.ndarray]   # int64; NULL where the log has `-`
    texts: dict[str, np.ndarray]  # ids into `strings`; 0 is `-`
    strings: list[str | None]     # strings[0] is None
    line: np.ndarray              # line numbers

    def __len__(self) -> int:
        return len(self.line)

    @classmethod
    def empty(cls) -> EventTable:
        return cls({n: np.empty(0, np.int64) for n in INT_NAMES},
                   {n: np.empty(0, np.uint32) for n in TEXT_NAMES}, [None], np.empty(0, np.int64))

    @classmethod
    def from_events(cls, events: Sequence[Any], columns: Sequence[str],
                    text_columns: Sequence[str]) -> EventTable:
        """From parsed LogEvent objects (the Python parser's path)."""
        ids: dict[str | None, int] = {None: 0}
        texts = {n: np.fromiter((ids.setdefault(getattr(e, n), len(ids)) for e in events),
                                np.uint32, len(events)) for n in text_columns}
        ints = {n: np.fromiter((NULL if (v := getattr(e, n)) is None else v for e in events),
                               np.int64, len(events))
                for n in columns if n not in text_columns}
        strings: list[str | None] = [None] * len(ids)
        for text, i in ids.items():
            strings[i] = text
        return cls(ints, texts, strings, np.fromiter((e.line for e in events), np.int64,
                                                     len(events)))

    def id_of(self, text: str) -> int:
        """The id of a text; -1 when no event has it."""
        try:
            return self.strings.index(text)
        except ValueError:
            return -1

    def is_(self, column: str, text: str) -> np.ndarray:
        """Mask of the rows whose text column is `text`."""
        return self.texts[column] == self.id_of(text)

    def used_ids(self, column: str) -> np.ndarray:
        return np.flatnonzero(np.bincount(self.texts[column], minlength=len(self.strings)))

    def valid_texts(self, column: str, allowed: Iterable[str | None]) -> bool:
        allowed = set(allowed)
        return all(self.strings[i] in allowed for i in self.used_ids(column))

    def normalise_texts(self, columns: Sequence[str], normalise: Callable[[str], str]) -> None:
        """Rewrites the texts used in these columns (e.g. addresses to canonical form)."""
        remap = np.arange(len(self.strings), dtype=np.uint32)
        by_text = {text: i for i, text in enumerate(self.strings)}
        used = set().union(*(self.used_ids(c).tolist() for c in columns)) - {0}
        for i in sorted(used):
            canonical = normalise(self.strings[i])  # type: ignore[arg-type]
            if canonical != self.strings[i]:
                j = by_text.get(canonical)
                if j is None:
                    j = by_text[canonical] = len(self.strings)
                    self.strings.append(canonical)
                remap[i] = j
        if any(remap[i] != i for i in used):
            for c in columns:
                self.texts[c] = remap[self.texts[c]]

    def times_non_decreasing(self) -> bool:
        t = self.ints["time_us"]
        return bool(np.all(t[1:] >= t[:-1]))

    def text_column(self, column: str) -> np.ndarray:
        """The column as an object array of str / None."""
        return np.array(self.strings, dtype=object)[self.texts[column]]

    def event_columns(self, columns: Sequence[str]) -> list[list[Any]]:
        """Python lists per column in `columns` order (None for `-`), then line numbers."""
        out = []
        for name in columns:
            if name in self.texts:
                out.append(self.text_column(name).tolist())
            else:
                values = self.ints[name]
                column = values.astype(object)
                column[values == NULL] = None
                out.append(column.tolist())
        out.append(self.line.tolist())
        return out


def fast_read(path: Path) -> tuple[EventTable, list[Comment]] | None:
    """The C reader's view of the log; None when it is not built, cannot read the file or
    finds a line it leaves to the Python parser."""
    reader = program_path(READER_NAME)
    if not reader.exists() or not path.is_file():
        return None
    status, _, data = run_to_memory([str(reader), str(path)])
    if status != 0:
        return None
    try:
        return _decode(data)
    except (ValueError, UnicodeDecodeError, struct.error):
        return None


def _decode(data: bytes | mmap.mmap) -> tuple[EventTable, list[Comment]]:
    magic, version, size, _ = _HEADER.unpack_from(data, 0)
    n_events, n_strings, n_comments, end_magic, _ = _FOOTER.unpack_from(data, len(data) - _FOOTER.size)
    if (magic, version, size, end_magic) != (MAGIC, VERSION, RECORD_DTYPE.itemsize, MAGIC):
        raise ValueError("not a squall-log-records stream of this version")
    records = np.frombuffer(data, RECORD_DTYPE, count=n_events, offset=_HEADER.size)
    offset = _HEADER.size + n_events * RECORD_DTYPE.itemsize
    strings: list[str | None] = [None]
    for _ in range(n_strings):
        length, _, _ = _STRING_HEAD.unpack_from(data, offset)
        offset += _STRING_HEAD.size
        strings.append(data[offset:offset + length].decode("ascii"))
        offset += length
    comments: list[Comment] = []
    for _ in range(n_comments):
        line, before, length, _ = _COMMENT_HEAD.unpack_from(data, offset)
        offset += _COMMENT_HEAD.size
        text = data[offset:offset + length].decode("utf-8")
        if len(("#" + text).splitlines()) != 1:
            raise ValueError("a line break Python knows inside a comment line")
        comments.append((line, before, text.strip()))
        offset += length
    if offset != len(data) - _FOOTER.size:
        raise ValueError("stream length does not match its footer")
    ints = {n: records["ints"][:, i] for i, n in enumerate(INT_NAMES)}
    texts = {n: records["texts"][:, i] for i, n in enumerate(TEXT_NAMES)}
    return EventTable(ints, texts, strings, records["line"].astype(np.int64)), comments
