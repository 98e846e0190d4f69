"""Reader for the emulator's event log (emulator/LOG_FORMAT.md, format 1)."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field
from pathlib import Path

from analysis.errors import LogFormatError
from analysis.read.event_table import EventTable, fast_read
from analysis.gc_pause import gc_paused
from analysis.results.stored import open_text

SUPPORTED_FORMAT = 1
COLUMNS = ("time_us", "event", "dir", "pkt_id", "ip_len", "state", "attempt", "sbuf", "rbuf",
           "proto", "src", "sport", "dst", "dport", "ip_id", "tcp_seq", "tcp_ack",
           "tcp_flags", "payload_len", "note")
# A cell of several mobile hosts adds the host (1-based) as a 21st column (LOG_FORMAT.md).
CELL_COLUMNS = (*COLUMNS, "host")
EVENTS = frozenset({"in", "enqueue", "drop_mtu", "drop_sbuf", "drop_router", "ecn_mark", "tx",
                    "hit", "drop_err", "recv", "out", "stall", "resume", "state", "outage",
                    "peer", "start", "drop_loss", "duplicate", "corrupt"})
# The events that end a packet's life in the link (drop_loss: the netem stage's loss model).
FINAL_EVENTS = frozenset({"out", "drop_mtu", "drop_sbuf", "drop_router", "drop_err", "drop_loss"})
DIRS = frozenset({"down", "up"})
TRAILER_KEYS = ("end", "counters", "host_counters", "state_changes", "router", "pending",
                "undeliverable", "rejected", "control", "lateness_us")
_INT_COLUMNS = ("pkt_id", "ip_len", "attempt", "sbuf", "rbuf", "sport", "dport", "ip_id",
                "tcp_seq", "tcp_ack", "payload_len")
_INT_INDEXES = tuple(COLUMNS.index(name) for name in _INT_COLUMNS)


@dataclass(slots=True)  # not frozen: frozen __init__ is several times slower
class LogEvent:
    """One event line; None where the log has `-`."""
    time_us: int
    event: str
    dir: str | None
    pkt_id: int | None
    ip_len: int | None
    state: str | None
    attempt: int | None
    sbuf: int | None
    rbuf: int | None
    proto: str | None
    src: str | None
    sport: int | None
    dst: str | None
    dport: int | None
    ip_id: int | None
    tcp_seq: int | None
    tcp_ack: int | None
    tcp_flags: str | None
    payload_len: int | None
    note: str | None
    line: int  # line number in the file, for messages
    host: int | None = None  # a cell's host (1-based); None in a one-host log and for peer/start


@dataclass(slots=True, weakref_slot=True)  # weak: fate_index caches its lives per log
class EmulatorLog:
    path: Path
    format: int
    seed: int | None
    replication: int | None
    started: bool | None
    start_realtime_us: int | None
    config: dict[str, str]
    table: EventTable   # the event lines as numpy columns (what the join reads)
    end_us: int | None  # from the trailer's `# end time_us`
    # trailer line -> its key/value pairs, e.g. trailer["counters down"]["drop_err"],
    # trailer["end"]["reason"], trailer["pending"]["count"]
    trailer: dict[str, dict[str, str]] = field(default_factory=dict)
    host_column: bool = False  # the log of a cell of several hosts: its lines name the host
    _events: list[LogEvent] | None = field(default=None, repr=False, compare=False)

    @property
    def events(self) -> list[LogEvent]:
        """The event lines as objects, built on first use (millions of them are slow)."""
        if self._events is None:
            with gc_paused():
                columns = self.table.event_columns(COLUMNS)
                if self.host_column:
                    columns.append(self.table.event_columns(("host",))[0])
                self._events = list(map(LogEvent, *columns))
        return self._events

    @property
    def cut_short(self) -> bool:
        """True when the trailer is missing: the emulator was killed; events are kept."""
        return self.end_us is None

    def counts(self, line: str) -> dict[str, int]:
        """A trailer line's numbers, e.g. counts("rejected")["bad_token"],
        counts("lateness_us")["p99"]; empty when the line is absent."""
        return {key: int(value) for key, value in self.trailer.get(line, {}).items()}


def read_emulator_log(path: str | os.PathLike[str]) -> EmulatorLog:
    """The C reader (squall-log-records) when it is built and the log is plain; the
    Python parser below otherwise, which is the specification and names the first
    error's line."""
    path = Path(path)
    log = _read_fast(path)
    if log is not None:
        return log
    try:
        with open_text(path) as f:
            text = f.read()
    except (OSError, UnicodeDecodeError, EOFError) as e:
        raise LogFormatError(f"{path}: cannot read the emulator log: {e}") from e
    parser = _LogParser(path)
    parser.parse(text.splitlines())
    log = parser.log
    log.table = EventTable.from_events(parser.events, CELL_COLUMNS if log.host_column else COLUMNS,
                                       _TEXT_COLUMNS)
    log._events = parser.events
    return log


_TEXT_COLUMNS = tuple(c for c in COLUMNS if c not in ("time_us", *_INT_COLUMNS))


def _read_fast(path: Path) -> EmulatorLog | None:
    """None when the Python parser must decide (odd lines, any error, no C reader)."""
    fast = fast_read(path)
    if fast is None:
        return None
    table, comments = fast
    parser = _LogParser(path)
    try:
        if not table.valid_texts("event", EVENTS) or not table.valid_texts("dir", {*DIRS, None}):
            return None
        table.normalise_texts(("src", "dst"), lambda text: parser.address(0, text))
        if not table.times_non_decreasing():
            return None
        n_events = len(table)
        for lineno, events_before, body in comments:
            if parser.in_trailer and events_before < n_events:
                return None  # an event line after the trailer
            if events_before > 0 and parser.log.format == 0:
                return None  # an event line before `# format`
            parser.events_seen = events_before
            parser.comment(lineno, body)
    except LogFormatError:
        return None
    if parser.log.format == 0 or parser.log.host_column:
        return None  # a cell's log: the C reader knows 20 columns only
    parser.log.table = table
    return parser.log


class _LogParser:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.log = EmulatorLog(path=path, format=0, seed=None, replication=None, started=None,
                               start_realtime_us=None, config={}, table=EventTable.empty(),
                               end_us=None)
        self.events: list[LogEvent] = []
        self.events_seen = 0
        self.in_trailer = False
        self.addresses: dict[str, str] = {}

    def error(self, lineno: int, what: str) -> LogFormatError:
        return LogFormatError(f"{self.path}:{lineno}: {what}")

    def parse(self, lines: list[str]) -> EmulatorLog:
        for lineno, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            if line.startswith("#"):
                self.comment(lineno, line[1:].strip())
            else:
                self.event_line(lineno, line)
        if self.log.format == 0:
            raise self.error(len(lines), "no `# format` line: not a squall emulator log "
                             f"(expected `# format {SUPPORTED_FORMAT}` in the header)")
        return self.log

    def comment(self, lineno: int, body: str) -> None:
        key, _, value = body.partition(" ")
        value = value.strip()
        if key == "format":
            if value != str(SUPPORTED_FORMAT):
                raise self.error(lineno, f"log format {value!r} is not supported; this "
                                 f"reader understands format {SUPPORTED_FORMAT}")
            self.log.format = SUPPORTED_FORMAT
        elif key in ("seed", "replication", "start_realtime_us") and not self.events_seen:
            setattr(self.log, key, self.integer(lineno, key, value))
        elif key == "started":
            self.log.started = value == "yes"
        elif key == "config":
            name, sep, setting = value.partition("=")
            if not sep:
                raise self.error(lineno, f"config line {value!r}: expected `key = value`")
            self.log.config[name.strip()] = setting.strip()
        elif key == "columns":
            if tuple(value.split()) not in (COLUMNS, CELL_COLUMNS):
                raise self.error(lineno, f"columns {value!r}; expected {' '.join(COLUMNS)} "
                                 "(and host in a cell's log)")
            self.log.host_column = tuple(value.split()) == CELL_COLUMNS
        elif key in TRAILER_KEYS:
            self.trailer(lineno, key, value)

    def trailer(self, lineno: int, key: str, value: str) -> None:
        self.in_trailer = True
        words = value.split()
        if key == "end":
            if len(words) < 2 or words[0] != "time_us":
                raise self.error(lineno, f"trailer `# end {value}`: expected "
                                 "`# end time_us N ...`")
            self.log.end_us = self.integer(lineno, "end time_us", words[1])
        name = key
        if key == "counters" and words:
            name, words = f"counters {words[0]}", words[1:]
        elif key in ("router", "host_counters") and len(words) >= 2:
            # one line per direction and class; in a cell, per host and direction
            name, words = f"{key} {words[0]} {words[1]}", words[2:]
        elif len(words) == 1:  # `# pending N`, `# state_changes N`
            words = ["count", words[0]]
        self.log.trailer[name] = dict(zip(words[0::2], words[1::2]))

    def integer(self, lineno: int, what: str, text: str) -> int:
        try:
            return int(text)
        except ValueError:
            raise self.error(lineno, f"{what} {text!r} is not an integer") from None

    def address(self, lineno: int, text: str) -> str:
        known = self.addresses.get(text)
        if known is None:
            try:
                known = str(ipaddress.ip_address(text))
            except ValueError:
                raise self.error(lineno, f"address {text!r} is not an IPv4 or IPv6 "
                                 "address") from None
            self.addresses[text] = known
        return known

    def event_line(self, lineno: int, line: str) -> None:
        if self.log.format == 0:
            raise self.error(lineno, "event line before the `# format` header line")
        if self.in_trailer:
            raise self.error(lineno, "event line after the trailer")
        cols = line.split("\t")
        columns = CELL_COLUMNS if self.log.host_column else COLUMNS
        if len(cols) != len(columns):
            raise self.error(lineno, f"{len(cols)} tab-separated columns; expected "
                             f"{len(columns)} ({' '.join(columns)})")
        try:
            event = self.fast_event(lineno, cols)
        except ValueError:
            self.explain(lineno, cols)
            raise
        events = self.events
        if events and event.time_us < events[-1].time_us:
            raise self.error(lineno, f"time_us {event.time_us} is earlier than the "
                             f"previous event's {events[-1].time_us}; expected "
                             "non-decreasing times")
        events.append(event)
        self.events_seen = len(events)

    def fast_event(self, lineno: int, c: list[str]) -> LogEvent:
        """Converts a line; any ValueError is explained by `explain`."""
        if c[1] not in EVENTS or (c[2] != "-" and c[2] not in DIRS):
            raise ValueError(c[1])
        n = [None if c[i] == "-" else int(c[i]) for i in _INT_INDEXES]
        addresses = self.addresses
        src = None if c[10] == "-" else addresses.get(c[10]) or self.address(lineno, c[10])
        dst = None if c[12] == "-" else addresses.get(c[12]) or self.address(lineno, c[12])
        text = [None if c[i] == "-" else c[i] for i in (2, 5, 9, 17, 19)]
        return LogEvent(time_us=int(c[0]), event=c[1], dir=text[0], pkt_id=n[0], ip_len=n[1],
                        state=text[1], attempt=n[2], sbuf=n[3], rbuf=n[4], proto=text[2],
                        src=src, sport=n[5], dst=dst, dport=n[6], ip_id=n[7], tcp_seq=n[8],
                        tcp_ack=n[9], tcp_flags=text[3], payload_len=n[10], note=text[4],
                        line=lineno, host=None if len(c) == len(COLUMNS) or c[-1] == "-" else int(c[-1]))

    def explain(self, lineno: int, cols: list[str]) -> None:
        """Raises the LogFormatError that says which column of a bad line is wrong."""
        raw = dict(zip(CELL_COLUMNS, cols))
        self.integer(lineno, "time_us", raw["time_us"])
        if raw.get("host", "-") != "-":
            self.integer(lineno, "host", raw["host"])
        for name in _INT_COLUMNS:
            if raw[name] != "-":
                self.integer(lineno, name, raw[name])
        if raw["event"] not in EVENTS:
            raise self.error(lineno, f"unknown event {raw['event']!r}; expected one of "
                             f"{', '.join(sorted(EVENTS))}")
        if raw["dir"] != "-" and raw["dir"] not in DIRS:
            raise self.error(lineno, f"dir {raw['dir']!r}; expected down, up or -")
