"""Time series of one replication, per flow: throughput over time and the link's one-way
delay of every packet.

Both on the emulator's clock: seconds since its t = 0 (the log's `start_realtime_us`; the
captures carry real time, on one machine the same clock, on lab hosts NTP's).

- Throughput (`throughput_rows`): payload bytes of a flow's data packets in its receivers'
  captures (TCP: the sender's segments as the receiver captured them, retransmissions
  included; UDP: the datagrams received), summed over the flow's connections, in bins of
  `interval_us` aligned to t = 0, from the flow's first bin to its last with empty bins as
  0. `kbit_per_s` = bytes * 8 / interval / 1000. The same numbers as
  `tshark -z io,stat,INTERVAL,"SUM(tcp.len)..."` on the receiver's capture with its start
  shifted to t = 0 (tests/test_analysis_tidy.py checks that).
- Link delay (`link_delays`): every packet the emulator took in (`in`), with its flow, its
  direction, its `in` time, its fate (the final event: `out`, `drop_sbuf`, `drop_router`,
  `drop_err`, `drop_mtu`, `drop_loss`, or `pending` when the log ended first), the ARQ `hit`s it took and,
  when delivered, `delay_ms` = `out` − `in`: router queue, send buffer, transmission, ARQ
  and propagation — the link's whole share of the one-way delay, without the hosts' stacks;
  and `e2e_delay_ms` = the receiving host's capture time − the sending host's (each joined
  with the log by packet identity, its first copy in each capture): the whole one-way delay
  from one host's tcpdump to the other's, the link's share plus both hosts' ways to and from
  it (on lab hosts plus the clocks' offset).
  A packet is the emulator's `pkt_id` (unique in a log, LOG_FORMAT.md)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from analysis.read.emulog import FINAL_EVENTS, EmulatorLog
from analysis.read.event_table import NULL

if TYPE_CHECKING:     # per_connection.py imports this module's callers, not this module
    from analysis.metrics.per_connection import CaptureTimes

SERIES_INTERVAL_US = 500_000
Endpoint = tuple[str, int]
# (proto, src endpoint, dst endpoint) -> flow name, or None for no flow of the scenario
FlowOf = Callable[[str, Endpoint, Endpoint], str | None]


def bin_bytes(ts_us: np.ndarray, sizes: np.ndarray, t0_us: int,
              interval_us: int) -> tuple[np.ndarray, np.ndarray]:
    """(bin index, bytes) for every bin from the first packet's to the last one's; bin k
    is [t0 + k·interval, t0 + (k+1)·interval)."""
    if len(ts_us) == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    bins = (np.asarray(ts_us, np.int64) - t0_us) // interval_us
    first = int(bins.min())
    counts = np.bincount(bins - first, weights=np.asarray(sizes, np.float64))
    return np.arange(first, first + len(counts)), counts.astype(np.int64)


def throughput_rows(flows: dict[str, list[tuple[np.ndarray, np.ndarray]]], kinds: dict[str, str],
                    t0_us: int, interval_us: int = SERIES_INTERVAL_US) -> list[dict[str, Any]]:
    """One row per flow and bin: `flow`, `flow_kind`, `t_s` (the bin's start), `interval_s`,
    `bytes`, `kbit_per_s`. `flows`: per flow the (capture times, payload lengths) of each
    of its received directions."""
    rows: list[dict[str, Any]] = []
    for name, parts in flows.items():
        ts = np.concatenate([p[0] for p in parts]) if parts else np.empty(0, np.int64)
        sizes = np.concatenate([p[1] for p in parts]) if parts else np.empty(0, np.int64)
        bins, counts = bin_bytes(ts, sizes, t0_us, interval_us)
        for k, n in zip(bins.tolist(), counts.tolist()):
            rows.append({"flow": name, "flow_kind": kinds.get(name, ""),
                         "t_s": k * interval_us / 1e6, "interval_s": interval_us / 1e6,
                         "bytes": n, "kbit_per_s": n * 8 / interval_us * 1e3})
    return rows


DELAY_COLUMNS = ("flow", "dir", "pkt_id", "t_s", "delay_ms", "fate", "hits", "ip_len",
                 "payload_len", "e2e_delay_ms")
SENDER_SIDE = {"down": "fixed", "up": "mobile"}


def link_delays(log: EmulatorLog, flow_of: FlowOf,
                capture_times: Mapping[str, CaptureTimes] | None = None) -> dict[str, np.ndarray]:
    """Columns DELAY_COLUMNS as numpy arrays, one entry per `in` event of a flow's packet
    (module docstring); packets of no flow (flow_of gives None) are left out. Texts are
    object arrays; `delay_ms` is NaN for a packet not delivered, `payload_len` -1 where the
    log has none; `e2e_delay_ms` (from `capture_times`, per host side) NaN where either
    capture lacks the packet."""
    table = log.table
    event = table.texts["event"]
    pkt = table.ints["pkt_id"]
    time = table.ints["time_us"]
    ins = np.flatnonzero(event == table.id_of("in"))
    ins = ins[pkt[ins] != NULL]
    if len(ins) == 0:
        return empty_delays()
    final_ids = [i for i in (table.id_of(e) for e in sorted(FINAL_EVENTS)) if i >= 0]
    finals = np.flatnonzero(np.isin(event, final_ids) & (pkt != NULL))
    hits = np.flatnonzero(event == table.id_of("hit"))
    in_pkt = pkt[ins]
    order = np.argsort(in_pkt, kind="stable")
    sorted_pkt = in_pkt[order]

    def position(ids: np.ndarray) -> np.ndarray:
        """Index into `ins` of each pkt_id (-1 when it has no `in`)."""
        at = np.minimum(np.searchsorted(sorted_pkt, ids), len(sorted_pkt) - 1)
        return np.where(sorted_pkt[at] == ids, order[at], -1)

    end = np.full(len(ins), NULL, np.int64)
    fate = np.zeros(len(ins), np.int64)      # a text id; 0: pending
    where = position(pkt[finals])
    ok = where >= 0
    end[where[ok]] = time[finals[ok]]
    fate[where[ok]] = event[finals[ok]]
    where = position(pkt[hits])
    n_hits = np.bincount(where[where >= 0], minlength=len(ins)).astype(np.int64)
    names = _flows_of_ins(table, ins, flow_of)
    keep = names != None  # noqa: E711 (element-wise)
    delivered = (fate == table.id_of("out")) & (end != NULL)
    delay = np.where(delivered, (end - time[ins]) / 1000.0, np.nan)
    strings = np.array(["pending" if s is None else s for s in table.strings], dtype=object)
    payload = table.ints["payload_len"][ins]
    dirs = table.text_column("dir")[ins]
    return {"flow": names[keep], "dir": dirs[keep],
            "pkt_id": in_pkt[keep], "t_s": time[ins][keep] / 1e6, "delay_ms": delay[keep],
            "fate": strings[fate[keep]], "hits": n_hits[keep],
            "ip_len": table.ints["ip_len"][ins][keep],
            "payload_len": np.where(payload == NULL, -1, payload)[keep],
            "e2e_delay_ms": _end_to_end_ms(in_pkt, dirs, capture_times or {})[keep]}


def _end_to_end_ms(pkt: np.ndarray, dirs: np.ndarray, times: Mapping[str, CaptureTimes]) -> np.ndarray:
    """The receiving host's capture time minus the sending host's, per packet (its first
    copy in each capture), in ms; NaN where a capture lacks it."""
    out = np.full(len(pkt), np.nan)
    for direction, sender in SENDER_SIDE.items():
        receiver = "mobile" if sender == "fixed" else "fixed"
        if sender not in times or receiver not in times:
            continue
        rows = np.flatnonzero(dirs == direction)
        sent = _first_capture_us(times[sender], pkt[rows], sent=True)
        received = _first_capture_us(times[receiver], pkt[rows], sent=False)
        both = (sent != NULL) & (received != NULL)
        out[rows[both]] = (received[both] - sent[both]) / 1000.0
    return out


def _first_capture_us(times: CaptureTimes, ids: np.ndarray, *, sent: bool) -> np.ndarray:
    """The capture time of each packet id's first frame the host sent (or received); NULL
    where it has none."""
    mine = times.sent == sent
    pkt, ts = times.pkt_id[mine], times.ts_us[mine]
    order = np.lexsort((ts, pkt))            # by packet, earliest first
    pkt, ts = pkt[order], ts[order]
    first = np.r_[True, pkt[1:] != pkt[:-1]] if len(pkt) else np.zeros(0, bool)
    pkt, ts = pkt[first], ts[first]
    if len(pkt) == 0:
        return np.full(len(ids), NULL, np.int64)
    at = np.minimum(np.searchsorted(pkt, ids), len(pkt) - 1)
    return np.where(pkt[at] == ids, ts[at], NULL)


def empty_delays() -> dict[str, np.ndarray]:
    kinds = {"flow": object, "dir": object, "fate": object, "t_s": float, "delay_ms": float,
             "e2e_delay_ms": float}
    return {c: np.empty(0, kinds.get(c, np.int64)) for c in DELAY_COLUMNS}


def _flows_of_ins(table, ins: np.ndarray, flow_of: FlowOf) -> np.ndarray:
    """The flow of each `in` event, asking flow_of once per distinct 5-tuple."""
    texts, ints = table.texts, table.ints
    n_text = len(table.strings)
    ports = [np.where(ints[c][ins] == NULL, 0, ints[c][ins] + 1) for c in ("sport", "dport")]
    # the 5-tuple as one integer (texts are ids below n_text, ports below 65537)
    key = texts["proto"][ins].astype(np.int64)
    for column, size in ((texts["src"][ins], n_text), (ports[0], 65537),
                         (texts["dst"][ins], n_text), (ports[1], 65537)):
        key = key * size + column.astype(np.int64)
    if n_text ** 3 * 65537 ** 2 >= 2 ** 63:   # would overflow: compare the columns instead
        stacked = np.stack([texts["proto"][ins], texts["src"][ins], ports[0],
                            texts["dst"][ins], ports[1]], axis=1).astype(np.int64)
        _, first, inverse = np.unique(stacked, axis=0, return_index=True, return_inverse=True)
    else:
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    s = table.strings
    names = []
    for i in ins[first].tolist():
        sport, dport = ints["sport"][i], ints["dport"][i]
        names.append(None if sport == NULL or dport == NULL else flow_of(
            str(s[texts["proto"][i]]), (str(s[texts["src"][i]]), int(sport)),
            (str(s[texts["dst"][i]]), int(dport))))
    return np.array(names, dtype=object)[inverse.reshape(-1)]
