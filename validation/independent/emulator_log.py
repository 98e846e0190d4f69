"""The emulator's event log (emulator/LOG_FORMAT.md, format 1) read as plain text: which packets
entered the link (`in`) and which the link dropped, by event. Only what the cross-check counts
is kept; squall's own reader (analysis/read/emulog.py) is not used.

A packet is known by its identity fields, the ten packet columns from `proto` to
`payload_len` (LOG_FORMAT.md, "Packet identity"); a flow by (direction, proto, src, sport, dst,
dport)."""
from __future__ import annotations

import gzip
import ipaddress
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

COLUMNS = 20
PACKET_FIELDS = slice(9, 19)          # proto src sport dst dport ip_id tcp_seq tcp_ack tcp_flags payload_len
DROP_EVENTS = ("drop_sbuf", "drop_router", "drop_err", "drop_mtu")
GZIP_MAGIC = b"\x1f\x8b"

Identity = tuple[str, ...]            # the ten packet columns as the log writes them
FlowKey = tuple[str, str, str, str, str, str]   # dir, proto, src, sport, dst, dport


class LogError(ValueError):
    """The log is not format 1 or has a malformed line; the message says `file:line`."""


@dataclass
class LinkLog:
    entered: Counter[Identity] = field(default_factory=Counter)              # `in` events
    drops: dict[str, Counter[FlowKey]] = field(
        default_factory=lambda: {event: Counter() for event in DROP_EVENTS})
    sources: dict[str, set[str]] = field(
        default_factory=lambda: {"down": set(), "up": set()})                # of `in`, by direction

    def side_of(self, address: str) -> str | None:
        """`fixed` for a source of downlink packets only, `mobile` for one of uplink packets only."""
        down, up = address in self.sources["down"], address in self.sources["up"]
        return "fixed" if down and not up else "mobile" if up and not down else None


def _open(path: Path):
    with open(path, "rb") as f:
        packed = f.read(2) == GZIP_MAGIC
    return gzip.open(path, "rt", encoding="utf-8") if packed else open(path, encoding="utf-8")


def _address(text: str) -> str:
    return text if text == "-" else str(ipaddress.ip_address(text))


def read_log(path: Path) -> LinkLog:
    log = LinkLog()
    format_seen = False
    with _open(path) as lines:
        for number, line in enumerate(lines, start=1):
            if line.startswith("#"):
                format_seen = format_seen or line.split() == ["#", "format", "1"]
                continue
            if not format_seen:
                raise LogError(f"{path}:{number}: an event before `# format 1` (emulator/LOG_FORMAT.md)")
            _add_event(log, line.rstrip("\n").split("\t"), f"{path}:{number}")
    if not format_seen:
        raise LogError(f"{path}: no `# format 1` line: not an emulator log of format 1")
    return log


def _add_event(log: LinkLog, cols: list[str], where: str) -> None:
    if len(cols) != COLUMNS:
        raise LogError(f"{where}: {len(cols)} tab-separated columns, expected {COLUMNS}")
    event, direction = cols[1], cols[2]
    if event not in ("in", *DROP_EVENTS):
        return
    if direction not in log.sources:
        raise LogError(f"{where}: direction {direction!r} of a packet event, expected down or up")
    packet = list(cols[PACKET_FIELDS])
    packet[1], packet[3] = _address(packet[1]), _address(packet[3])
    if event == "in":
        log.entered[tuple(packet)] += 1
        log.sources[direction].add(packet[1])
    else:
        log.drops[event][(direction, *packet[:5])] += 1
