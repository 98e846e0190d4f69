"""Round trips of a probing program's datagrams (irtt, a ping over UDP, a request/response
protocol), matched in the emulator log, with the link's state at the time: what a
latency-under-load study reads (analysis/README.md, "Round trips").

Between two UDP endpoints with datagrams both ways, the client is the one that sent first; its
datagrams are requests, the other's replies. A reply answers the latest request the link
delivered before the reply entered it, when that was at most TURNAROUND_US before (the
server's turnaround; a request answered once). Per request: its time (the emulator's t, s),
the link's state (good | bad, the log's `state` at its `in`) and its reply's, the round-trip
time in the client's capture (the request sent -> the reply received) and the link's share of
it (each datagram's `in` -> `out`), and both datagrams' SP packet ids (probes.py joins by them). A request without a matched reply has no times (lost one
way or the other, or not answered in time); neither is made up.

Values per flow and state (`<flow>.rtt.<state>.*`): `probes` (requests that entered the link
in that state), `answered`, `median_ms`, `p95_ms` (of the answered ones' round trips)."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from analysis.read.emulog import EmulatorLog
from analysis.read.event_table import NULL
from analysis.join.fate_index import FATE_NAMES, fate_index

if TYPE_CHECKING:     # replication.py imports this module's callers, not this module
    from analysis.metrics.per_connection import CaptureTimes
    from analysis.metrics.series import FlowOf

# The server's turnaround on a loaded machine: irtt's server answered 15 ms after a request's
# delivery while the machine ran other tests. A server slower than the requests' interval
# has its replies matched to later requests (not detectable from the log).
TURNAROUND_US = 100_000
SENDER_SIDE = {"down": "fixed", "up": "mobile"}
Endpoint = tuple[str, int]
ROUND_TRIP_COLUMNS = ("flow", "client", "server", "t_s", "request_state", "reply_state",
                      "rtt_ms", "link_rtt_ms", "request_fate", "reply_fate", "request_pkt_id", "reply_pkt_id")


@dataclass(frozen=True, slots=True)
class _Life:
    """One datagram's life in the link."""
    pkt_id: int
    dir: str
    src: Endpoint
    dst: Endpoint
    in_us: int
    end_us: int | None
    fate: str
    state: str | None


def _udp_lives(log: EmulatorLog) -> list[_Life]:
    """The log's UDP datagrams in `in` order (fate_index's lives)."""
    table, index = log.table, fate_index(log)
    ins = np.flatnonzero(table.is_("event", "in") & (table.ints["pkt_id"] != NULL))
    udp = np.flatnonzero(table.is_("proto", "udp")[ins])
    s, texts, ints = table.strings, table.texts, table.ints
    lives = []
    for k in udp.tolist():
        row = int(ins[k])
        end = int(index.end_us[k])
        lives.append(_Life(int(index.pkt_id[k]), str(index.dir[k]),
                           (str(s[texts["src"][row]]), int(ints["sport"][row])),
                           (str(s[texts["dst"][row]]), int(ints["dport"][row])),
                           int(index.in_us[k]), None if end == NULL else end,
                           FATE_NAMES[index.fate[k]], s[texts["state"][row]]))
    return lives


def _pairs(lives: list[_Life]) -> dict[frozenset[Endpoint], list[_Life]]:
    found: dict[frozenset[Endpoint], list[_Life]] = {}
    for life in lives:
        found.setdefault(frozenset((life.src, life.dst)), []).append(life)
    return found


def _answers(requests: list[_Life], replies: list[_Life]) -> dict[int, _Life]:
    """Request pkt_id -> the reply that answers it (module docstring)."""
    delivered = sorted((r.end_us, r.pkt_id) for r in requests
                       if r.fate == "out" and r.end_us is not None)
    ends = [end for end, _ in delivered]
    answered: dict[int, _Life] = {}
    for reply in replies:
        at = int(np.searchsorted(ends, reply.in_us, "right")) - 1
        if at < 0:
            continue
        end, pkt_id = delivered[at]
        if reply.in_us - end <= TURNAROUND_US and pkt_id not in answered:
            answered[pkt_id] = reply
    return answered


def _capture_us(times: CaptureTimes | None, sent: bool) -> dict[int, int]:
    """pkt_id -> its first capture time at a host, sent by it or received."""
    if times is None:
        return {}
    rows = np.flatnonzero(times.sent == sent)
    out: dict[int, int] = {}
    for pkt_id, ts in zip(times.pkt_id[rows].tolist(), times.ts_us[rows].tolist()):
        out.setdefault(pkt_id, ts)
    return out


def round_trip_rows(log: EmulatorLog, capture_times: Mapping[str, CaptureTimes],
                    flow_of: FlowOf) -> list[dict[str, Any]]:
    """One row per request (ROUND_TRIP_COLUMNS) of every flow's UDP endpoints with datagrams
    both ways."""
    rows: list[dict[str, Any]] = []
    for lives in _pairs(_udp_lives(log)).values():
        client = lives[0].src
        requests = [x for x in lives if x.src == client]
        replies = [x for x in lives if x.src != client]
        if not replies:
            continue
        flow = flow_of("udp", client, requests[0].dst)
        if flow is None:
            continue
        side = SENDER_SIDE[requests[0].dir]
        sent = _capture_us(capture_times.get(side), True)
        received = _capture_us(capture_times.get(side), False)
        answers = _answers(requests, replies)
        for r in requests:
            reply = answers.get(r.pkt_id)
            rtt = (received[reply.pkt_id] - sent[r.pkt_id]
                   if reply is not None and reply.pkt_id in received and r.pkt_id in sent else None)
            link = (r.end_us - r.in_us + reply.end_us - reply.in_us
                    if reply is not None and r.end_us is not None and reply.end_us is not None
                    and reply.fate == "out" else None)
            rows.append({"flow": flow, "client": _text(client), "server": _text(r.dst),
                         "t_s": r.in_us / 1e6, "request_state": r.state,
                         "reply_state": None if reply is None else reply.state,
                         "rtt_ms": None if rtt is None else rtt / 1000,
                         "link_rtt_ms": None if link is None else link / 1000,
                         "request_fate": r.fate, "reply_fate": None if reply is None else reply.fate,
                         "request_pkt_id": r.pkt_id, "reply_pkt_id": None if reply is None else reply.pkt_id})
    return rows


def _text(e: Endpoint) -> str:
    return f"[{e[0]}]:{e[1]}" if ":" in e[0] else f"{e[0]}:{e[1]}"


def round_trip_values(rows: list[dict[str, Any]]) -> dict[str, float | None]:
    """`<flow>.rtt.<state>.probes|answered|median_ms|p95_ms` (module docstring)."""
    values: dict[str, float | None] = {}
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["flow"], row["request_state"] or "unknown"), []).append(row)
    for (flow, state), group in groups.items():
        rtts = [r["rtt_ms"] for r in group if r["rtt_ms"] is not None]
        prefix = f"{flow}.rtt.{state}"
        values[f"{prefix}.probes"] = len(group)
        values[f"{prefix}.answered"] = len(rtts)
        values[f"{prefix}.median_ms"] = float(np.percentile(rtts, 50)) if rtts else None
        values[f"{prefix}.p95_ms"] = float(np.percentile(rtts, 95)) if rtts else None
    return values
