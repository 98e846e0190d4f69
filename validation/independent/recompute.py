"""One replication -> the runs.csv values the cross-check recomputes (analysis/README.md, "runs"):

- HTTP flow `F`: `F.response_time_s` (the client's capture), `F.main.throughput_Bps` (the
  response's throughput of the connection whose SYN came first, at the server),
  `F.retransmissions`, `F.error_drops`, `F.congestion_drops` (the server's packets, summed over
  the page's connections);
- bulk flow `F` (one connection): `F.elapsed_s`, `F.throughput_Bps` (bytes / elapsed),
  `F.retransmissions`, `F.error_drops`, `F.congestion_drops`;
- UDP flow `F` (one stream): `F.throughput_Bps`, `F.jitter_mean_ms`, `F.error_drops`,
  `F.congestion_drops`;
- `run.retransmissions`, `run.error_drops`, `run.congestion_drops` over every TCP connection,
  each at its sender.
A value that cannot be computed is None with a note saying why; it is then not compared."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from validation.independent.capture import Capture, Datagram, read_capture
from validation.independent.drops import Drops, drops
from validation.independent.emulator_log import LinkLog, read_log
from validation.independent.flows import Flow, flow_of, read_flows
from validation.independent.tcp import Connection, Endpoint, Transfer, connections, page_time_s, transfer
from validation.independent.udp import stream

SIDES = ("fixed", "mobile")
DIRECTION = {"fixed": "down", "mobile": "up"}      # of the packets a host sends
OTHER = {"fixed": "mobile", "mobile": "fixed"}

Value = float | int | None


@dataclass
class Recomputed:
    values: dict[str, Value] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)       # why a value is None

    def put(self, name: str, value: Value, why: str) -> None:
        self.values[name] = value
        if value is None:
            self.notes[name] = why


@dataclass
class Measured:
    """A TCP connection at its sender: in the sender's own capture."""
    conn: Connection
    sender: Endpoint
    side: str
    transfer: Transfer | None
    drops: Drops
    flow: Flow | None


def stored(directory: Path, name: str) -> Path:
    """`name`, or `name.gz` where only the compressed file is there (the runner's storage)."""
    plain, packed = directory / name, directory / f"{name}.gz"
    return packed if not plain.exists() and packed.exists() else plain


def recompute(rep_dir: Path) -> Recomputed:
    log = read_log(stored(rep_dir, "emulator.log"))
    captures = {side: read_capture(stored(rep_dir, f"{side}.pcap")) for side in SIDES}
    flows = read_flows(rep_dir)
    by_side = {side: connections(c.segments) for side, c in captures.items()}
    measured = _measure_tcp(log, by_side, flows)
    out = Recomputed()
    for flow in flows:
        mine = [m for m in measured if m.flow == flow]
        if flow.kind == "http":
            _http(out, flow, mine, by_side)
        elif flow.kind == "bulk":
            _bulk(out, flow.name, mine)
        elif flow.kind == "udp":
            _udp(out, flow, log, captures, flows)
    _totals(out, measured)
    return out


def _measure_tcp(log: LinkLog, by_side: dict[str, dict], flows: list[Flow]) -> list[Measured]:
    out = []
    for key in dict.fromkeys([*by_side["fixed"], *by_side["mobile"]]):
        seen = by_side["fixed"].get(key) or by_side["mobile"][key]
        sender = seen.sender
        side = log.side_of(sender[0])
        conn = by_side[side].get(key) if side else None
        if conn is None:       # the sender's host is not known, or its capture lacks the connection
            out.append(Measured(seen, sender, side or "?", None, Drops(0, 0, 0, 0),
                                flow_of(flows, "tcp", seen.client, seen.server)))
            continue
        out.append(Measured(conn, sender, side, transfer(conn, sender),
                            drops(log, DIRECTION[side], conn.sent_by(sender)),
                            flow_of(flows, "tcp", conn.client, conn.server)))
    return out


def _sum(xs: list[int | None]) -> int | None:
    return None if None in xs else sum(x for x in xs if x is not None)


NO_TRANSFER = "a connection's sender, its SYN or its capture is not known (or its 4-tuple was reused)"


def _http(out: Recomputed, flow: Flow, page: list[Measured], by_side: dict[str, dict]) -> None:
    f = flow.name
    if not page:
        for name in ("response_time_s", "main.throughput_Bps", "retransmissions",
                     "error_drops", "congestion_drops"):
            out.put(f"{f}.{name}", None, "no connection of the flow in the captures")
        return
    client_side = flow.client_host or OTHER[page[0].side]
    at_client = [by_side[client_side].get(frozenset((m.conn.client, m.conn.server))) for m in page]
    out.put(f"{f}.response_time_s", None if None in at_client else page_time_s(at_client),
            f"the {client_side} capture lacks a connection's SYN or the client's ACK of a server FIN")
    transfers = [m.transfer for m in page]
    main = None if None in transfers else min(transfers, key=lambda t: t.first_syn_ns)
    out.put(f"{f}.main.throughput_Bps", main and main.response_throughput_Bps,
            NO_TRANSFER if main is None else "the main object's FIN was not acknowledged")
    out.put(f"{f}.retransmissions", _sum([t and t.retransmissions for t in transfers]), NO_TRANSFER)
    _drops(out, f, page)


def _drops(out: Recomputed, prefix: str, ms: list[Measured]) -> None:
    known = all(m.transfer is not None for m in ms)
    out.put(f"{prefix}.error_drops", sum(m.drops.error for m in ms) if known else None, NO_TRANSFER)
    out.put(f"{prefix}.congestion_drops", sum(m.drops.congestion for m in ms) if known else None,
            NO_TRANSFER)


def _bulk(out: Recomputed, f: str, ms: list[Measured]) -> None:
    if len(ms) != 1:
        return          # squall has a flow's own columns only for a transfer of one connection
    t = ms[0].transfer
    unfinished = NO_TRANSFER if t is None else "the sender's FIN was not acknowledged"
    out.put(f"{f}.elapsed_s", t and t.elapsed_s, unfinished)
    out.put(f"{f}.throughput_Bps", t and t.throughput_Bps, unfinished)
    out.put(f"{f}.retransmissions", t and t.retransmissions, NO_TRANSFER)
    _drops(out, f, ms)


def _streams(captures: dict[str, Capture]) -> dict[tuple[Endpoint, Endpoint], None]:
    return dict.fromkeys(((d.src, d.sport), (d.dst, d.dport))
                         for c in captures.values() for d in c.datagrams)


def _udp(out: Recomputed, flow: Flow, log: LinkLog, captures: dict[str, Capture],
         flows: list[Flow]) -> None:
    f = flow.name
    mine = [s for s in _streams(captures) if flow_of(flows, "udp", *s) == flow]
    side = log.side_of(mine[0][0][0]) if len(mine) == 1 else None
    if side is None:
        why = (f"{len(mine)} streams of the flow in the captures" if len(mine) != 1
               else "the sender's host is not known from the log")
        for name in ("throughput_Bps", "jitter_mean_ms", "error_drops", "congestion_drops"):
            out.put(f"{f}.{name}", None, why)
        return
    src, dst = mine[0]

    def of(c: Capture) -> list[Datagram]:
        return [d for d in c.datagrams if ((d.src, d.sport), (d.dst, d.dport)) == (src, dst)]

    s = stream(of(captures[OTHER[side]]))
    missing = "no generator datagram (or one only) in the receiver's capture"
    out.put(f"{f}.throughput_Bps", s and s.throughput_Bps, missing)
    out.put(f"{f}.jitter_mean_ms", s and s.jitter_mean_ms, missing)
    lost = drops(log, DIRECTION[side], of(captures[side]))
    out.put(f"{f}.error_drops", lost.error, "")
    out.put(f"{f}.congestion_drops", lost.congestion, "")


def _totals(out: Recomputed, measured: list[Measured]) -> None:
    out.put("run.retransmissions", _sum([m.transfer and m.transfer.retransmissions for m in measured]),
            NO_TRANSFER)
    _drops(out, "run", measured)
