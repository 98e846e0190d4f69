"""The time-sequence diagram of one replication (Stevens-style, as tcptrace and Wireshark draw
it): per TCP connection, from its sender's capture, the segments (sequence number relative to
the sender's ISN), the receiver's cumulative ACK and the right edge of its receive window
(analysis/metrics/ack_window.py), retransmissions, and what the link did to a segment at the
time it happened in the link. Connections are named by their flow (workloads.json) and which
side sent the data."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib.pyplot as plt
from matplotlib.lines import Line2D

from analysis.join.by_identity import PacketFate, join_records
from analysis.join.flows import match_flow, read_workloads
from analysis.metrics.ack_window import ack_line, sender_isn
from analysis.metrics.connections import TcpConnection, tcp_connections_of
from analysis.metrics.per_connection import side_addresses
from analysis.metrics.tcp import TcpMetrics, default_sender, tcp_metrics
from analysis.read.emulog import EmulatorLog, read_emulator_log
from analysis.read.pcap import ip_records, read_capture
from analysis.report import plot_frame
from analysis.results.directory import CAPTURES, LOG_NAME
from analysis.results.stored import stored


@dataclass
class MeasuredConnection:
    conn: TcpConnection
    metrics: TcpMetrics
    fates: Mapping[int, PacketFate]
    side: str            # the data sender's side: fixed | mobile
    flow: str = ""       # the scenario's flow (workloads.json), or `tcp ADDR:PORT` of none


@dataclass
class ReplicationView:
    directory: Path
    log: EmulatorLog
    connections: list[MeasuredConnection] = field(default_factory=list)

    def label(self, i: int) -> str:
        """`2: bulkB, fixed → mobile`; `web 2/3` for the 2nd of a flow's 3 connections."""
        mc = self.connections[i - 1]
        same = [c for c in self.connections if c.flow == mc.flow]
        which = f" {same.index(mc) + 1}/{len(same)}" if len(same) > 1 else ""
        other = "mobile" if mc.side == "fixed" else "fixed"
        return f"{i}: {mc.flow}{which}, {mc.side} → {other}"


def load_view(rep_dir: Path) -> ReplicationView:
    """Each TCP connection with its sender's capture, link fates and flow (as
    analyse_replication measures them)."""
    log = read_emulator_log(stored(rep_dir, LOG_NAME))
    sides = side_addresses(log)
    flows = read_workloads(rep_dir)
    view = ReplicationView(rep_dir, log)
    for side, name in CAPTURES.items():
        path = stored(rep_dir, name)
        if not path.exists():
            continue
        records = ip_records(read_capture(path))
        fates = join_records(records, log)
        for conn in tcp_connections_of(records):
            sender = default_sender(conn)
            if sender[0] in sides[side]:
                flow = match_flow(flows, "tcp", conn.client, conn.server).name
                view.connections.append(MeasuredConnection(
                    conn, tcp_metrics(conn, sender, fates), fates, side, flow))
    view.connections.sort(key=lambda c: (c.metrics.first_syn_us or 0, c.conn.client))
    return view


def _marker(fate: PacketFate | None) -> str | None:
    if fate is None:
        return None
    if fate.fate == "drop_err":
        return "error drop"
    if fate.fate == "drop_loss":
        return "netem loss"
    if fate.fate in ("drop_sbuf", "drop_router", "unseen"):   # unseen: the tc router
        return "congestion drop"
    return "ARQ-delayed (link retransmission)" if fate.hits > 0 else None


MARKERS = {"retransmission": dict(marker="o", facecolors="none", edgecolors="black", s=60),
           "error drop": dict(marker="X", color="red", s=70),
           "congestion drop": dict(marker="v", color="darkorange", s=60),
           "netem loss": dict(marker="x", color="brown", s=60),
           "ARQ-delayed (link retransmission)": dict(marker="^", color="purple", s=50)}


# a window line this many times above the data's top would flatten the segments into one line
WINDOW_CLIP = 3.0


def _draw_connection(ax, mc: MeasuredConnection, i: int, label: str, t0: int,
                     marks: dict[str, tuple[list[float], list[float]]]) -> tuple[float, float]:
    """The connection's segments (dots, named in the legend), its ACK line (solid, gid
    `i:ack`) and window line (dashed, gid `i:window`) in one colour; its marks into `marks`.
    Returns the top of its data (segments, ACKs) and of its window line (bytes)."""
    m = mc.metrics
    sent = [p for p in mc.conn.sent_by(m.sender) if p.payload_len or p.tcp_flags & 3]
    isn = sender_isn(mc.conn, m.sender)
    retx = {r.frame_no for r in m.retransmission_list}
    xs = [(p.ts_us - t0) / 1e6 for p in sent]
    ys = [(p.tcp_seq - isn) % 2**32 for p in sent]
    colour = ax.plot(xs, ys, ".", ms=4, label=label)[0].get_color()
    acks = ack_line(mc.conn, m.sender)
    if acks:
        at = [(a.ts_us - t0) / 1e6 for a in acks]
        ax.step(at, [a.ack for a in acks], where="post", color=colour, lw=1, gid=f"{i}:ack")
        ax.step(at, [a.window_edge for a in acks], where="post", color=colour, lw=0.8, ls="--",
                gid=f"{i}:window")
    for p, x, y in zip(sent, xs, ys):
        fate = mc.fates.get(p.frame_no)
        if p.frame_no in retx:
            marks["retransmission"][0].append(x)
            marks["retransmission"][1].append(y)
        key = _marker(fate)
        if key:
            # at the link's time of it; a packet the link never saw at its capture
            marks[key][0].append(x if fate.end_us is None else fate.end_us / 1e6)
            marks[key][1].append(y)
    data_top = max([*(y + p.payload_len for p, y in zip(sent, ys)), *(a.ack for a in acks), 1])
    return data_top, max((a.window_edge for a in acks), default=0)


def _legend(ax) -> None:
    """The connections and marks, and one key each for the ACK and window lines."""
    handles, labels = ax.get_legend_handles_labels()
    handles += [Line2D([], [], color="black", lw=1), Line2D([], [], color="black", lw=0.8, ls="--")]
    labels += ["the receiver's ACK (solid, the connection's colour)", "ACK + receive window (dashed)"]
    ax.legend(handles, labels, fontsize=7, loc="upper left")


def plot_time_sequence(view: ReplicationView, out: Path, title: str,
                       only: int | None = None) -> Path:
    t0 = view.log.start_realtime_us or 0
    periods, _ = plot_frame.bad_periods(stored(view.directory, LOG_NAME))
    fig, ax = plt.subplots(figsize=(11, 6.5))
    plot_frame.shade(ax, periods)
    marks: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in MARKERS}
    tops = [_draw_connection(ax, mc, i, view.label(i), t0, marks)
            for i, mc in enumerate(view.connections, start=1) if only is None or i == only]
    for name, (xs, ys) in marks.items():
        if xs:
            ax.scatter(xs, ys, label=name, zorder=3, **MARKERS[name])
    data_top = max((d for d, _ in tops), default=1)
    window_top = max((w for _, w in tops), default=0)
    clipped = window_top > WINDOW_CLIP * data_top
    if clipped:
        ax.set_ylim(-0.05 * data_top, 1.4 * data_top)
    ax.set_xlabel(plot_frame.TIME_AXIS)
    ax.set_ylabel("bytes after the sender's ISN (sequence, ACK, ACK + window)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    _legend(ax)
    fig.text(0.01, 0.005, "dots: segments, circles: retransmissions, solid line: the receiver's "
             "cumulative ACK, dashed: ACK + its receive window (scaled as in the SYNs), all at "
             "the sender's capture time; drop and ARQ marks: at the link's time of the drop or "
             "delivery (emulator log)" + (f". The window line runs above the top (up to "
             f"{window_top:.0f} bytes): drawn to the data's scale" if clipped else ""),
             fontsize=7, color="#444", wrap=True)
    return plot_frame.save(fig, out, bottom=0.06)
