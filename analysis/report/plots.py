"""Plots of a run (matplotlib), each as PNG (150 dpi) and SVG, into summary/plots/.

Of the run:
- box plots per cell of the page response time (HTTP) or elapsed time per flow (bulk
  transfers, command flows);
- CDFs over replications and cells: page response / elapsed times per flow, and the link
  delay of every data packet per flow (summary/delays);
- per cell, the throughput of each flow over time in every replication, and their median
  (summary/throughput);
- the channel timeline (good/bad) of every replication.
Of a replication (`--replication N|all`; default the first analysed one of each cell):
- time-sequence diagram of its TCP connections (sequence number relative to the sender's
  ISN at the sender's capture time) with bad channel states shaded, retransmissions marked,
  and what the link did (error drops, congestion drops, netem losses, ARQ-delayed deliveries) marked at
  the time it happened in the link (the log's final event for the packet);
- throughput and link delay of each flow over time, bad states shaded;
- router queue length (router-queue.tsv) and link send-buffer occupancy (the log's sbuf);
- the kernel's congestion window, slow-start threshold, smoothed RTT and RTO of each TCP
  connection's data sender over time (summary/tcpinfo, squall-tcp-sampler).

Times are seconds since the emulator's t = 0 (the log's `start_realtime_us`); each plot's
caption (`CAPTIONS`, shown under it in report.html) says what it shows."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from analysis.results.atomic_file import refuse_symlinks, write_atomically  # noqa: E402
from analysis.metrics.connections import TcpConnection, tcp_connections_of  # noqa: E402
from analysis.read.emulog import EmulatorLog, read_emulator_log  # noqa: E402
from analysis.join.by_identity import PacketFate, join_records  # noqa: E402
from analysis.read.pcap import ip_records, read_capture  # noqa: E402
from analysis.read.router_queue import QUEUE_NAME, read_queue_samples  # noqa: E402
from analysis.metrics.router_backlog import router_backlog, router_directions  # noqa: E402
from analysis.metrics.per_connection import side_addresses  # noqa: E402
from analysis.results.directory import CAPTURES, LOG_NAME  # noqa: E402
from analysis.results.stored import open_text, stored  # noqa: E402
from analysis.report.contents import bulk_roles  # noqa: E402
from analysis.aggregate.run_analysis import CellResult, RunAnalysis  # noqa: E402
from analysis.metrics.tcp import TcpMetrics, default_sender, tcp_metrics  # noqa: E402

PLOTS_DIR = "plots"
BAD_COLOUR = "#d9d9d9"
PNG_DPI = 150
TIME_AXIS = "time since the emulator's t = 0 (s)"
# what each plot shows, by its file name's first word (report.html puts it under the plot)
CAPTIONS = {
    "boxes": "Page response time (HTTP) or elapsed time (bulk TCP, command flows' TCP "
             "connections) per cell and flow over the replications: box from the 25th to "
             "the 75th percentile, line at the median, whiskers at the minimum and maximum.",
    "cdf-times": "Empirical CDF over the replications of each cell: page response time "
                 "(HTTP, client capture) and elapsed time (bulk TCP and command flows, "
                 "sender capture).",
    "cdf-delay": "Empirical CDF of the link delay (emulator in -> out: router queue, send "
                 "buffer, transmission, ARQ, propagation) of every delivered data packet of "
                 "each flow, over all replications of the cell.",
    "throughput": "Throughput of each flow over time: payload bytes received in the "
                  "receiver's capture per interval (retransmissions included), one thin "
                  "line per replication, the thick line their median per interval.",
    "channel": "Channel state of each replication (the same timeline in every cell: it "
               "depends only on the seed and the replication number).",
    "tsd": "Time-sequence diagram from the sender's capture. Segments are drawn at the time "
           "the sender's capture saw them; what the link did to a segment (error drop, "
           "congestion drop, delivery after ARQ retransmissions) is drawn at the time it "
           "happened in the link (the emulator log's final event for it), later than the "
           "segment by its wait in the router queue and send buffer. A packet dropped "
           "before the link (tc router) is drawn at its capture time. Grey: bad channel "
           "state.",
    "series": "One replication: throughput of each flow per interval (receiver's capture) "
              "and the link delay of each packet at the time it entered the link (dots: "
              "delivered; crosses at the top: dropped). Grey: bad channel state.",
    "tcpinfo": "One replication: the kernel's view of each TCP connection of the scenario's "
               "flows (squall-tcp-sampler, tcp_info every 50 ms at the host that sent the "
               "connection's data — of its two ends the one whose bytes were acknowledged "
               "most; the receiving end is not drawn — once data was acknowledged): congestion "
               "window and slow-start threshold (segments), smoothed RTT and RTO. Grey: bad "
               "channel state.",
    "queues": "Router queue (tc router: router-queue.tsv; the emulator's router stage per "
              "direction: the packets between their `in` and their `enqueue` or drop in the "
              "emulator log, class queues and device queue together) and the link's "
              "send-buffer occupancy per direction (emulator log). Grey: bad channel state.",
}


def caption(path: Path) -> str:
    return CAPTIONS.get(path.stem.split("_")[0], "")


# --- channel states ---------------------------------------------------------------------

def bad_periods(log_path: Path) -> tuple[list[tuple[float, float]], float]:
    """Bad-state periods (s) and the log's end (s), scanning only the lines needed."""
    periods: list[tuple[float, float]] = []
    state, since, end = "good", 0.0, 0.0
    with open_text(log_path) as f:
        for line in f:
            if line.startswith("#"):
                if line.startswith("# end time_us "):
                    end = max(end, int(line.split()[3]) / 1e6)
                continue
            cols = line.split("\t", 6)
            if len(cols) < 6:
                continue
            t = int(cols[0]) / 1e6
            end = max(end, t)
            if cols[1] == "start" and cols[5] in ("good", "bad"):
                state, since = cols[5], t
            elif cols[1] == "state":
                if state == "bad":
                    periods.append((since, t))
                state, since = cols[5], t
    if state == "bad":
        periods.append((since, end))
    return periods, end


def _shade(ax, periods: list[tuple[float, float]]) -> None:
    for i, (a, b) in enumerate(periods):
        ax.axvspan(a, b, color=BAD_COLOUR, zorder=0, label="bad channel state" if i == 0 else None)


# --- time-sequence diagram ----------------------------------------------------------------

@dataclass
class MeasuredConnection:
    conn: TcpConnection
    metrics: TcpMetrics
    fates: Mapping[int, PacketFate]


@dataclass
class ReplicationView:
    directory: Path
    log: EmulatorLog
    connections: list[MeasuredConnection] = field(default_factory=list)


def load_view(rep_dir: Path) -> ReplicationView:
    """Each TCP connection with its sender's capture and link fates (as analyse_replication
    measures them)."""
    log = read_emulator_log(stored(rep_dir, LOG_NAME))
    sides = side_addresses(log)
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
                view.connections.append(MeasuredConnection(
                    conn, tcp_metrics(conn, sender, fates), fates))
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


def _conn_label(i: int, m: TcpMetrics) -> str:
    return f"{i}: {m.sender[0]}:{m.sender[1]} → {m.client[0] if m.sender == m.server else m.server[0]}"


def plot_time_sequence(view: ReplicationView, out: Path, title: str,
                       only: int | None = None) -> Path:
    t0 = view.log.start_realtime_us or 0
    periods, _ = bad_periods(stored(view.directory, LOG_NAME))
    fig, ax = plt.subplots(figsize=(11, 6))
    _shade(ax, periods)
    markers = {"retransmission": ([], [], dict(marker="o", facecolors="none",
                                                 edgecolors="black", s=60)),
               "error drop": ([], [], dict(marker="X", color="red", s=70)),
               "congestion drop": ([], [], dict(marker="v", color="darkorange", s=60)),
               "netem loss": ([], [], dict(marker="x", color="brown", s=60)),
               "ARQ-delayed (link retransmission)": ([], [], dict(marker="^", color="purple",
                                                                  s=50))}
    for i, mc in enumerate(view.connections, start=1):
        if only is not None and i != only:
            continue
        m = mc.metrics
        sent = [p for p in mc.conn.sent_by(m.sender) if p.payload_len or p.tcp_flags & 3]
        isn = next((p.tcp_seq for p in sent if p.tcp_flags & 2), sent[0].tcp_seq if sent else 0)
        retx = {r.frame_no for r in m.retransmission_list}
        xs = [(p.ts_us - t0) / 1e6 for p in sent]
        ys = [(p.tcp_seq - isn) % 2**32 for p in sent]
        ax.plot(xs, ys, ".", ms=4, label=_conn_label(i, m))
        for p, x, y in zip(sent, xs, ys):
            fate = mc.fates.get(p.frame_no)
            if p.frame_no in retx:
                markers["retransmission"][0].append(x)
                markers["retransmission"][1].append(y)
            key = _marker(fate)
            if key:
                # at the link's time of it; a packet the link never saw at its capture
                markers[key][0].append(x if fate.end_us is None else fate.end_us / 1e6)
                markers[key][1].append(y)
    for name, (xs, ys, style) in markers.items():
        if xs:
            ax.scatter(xs, ys, label=name, zorder=3, **style)
    ax.set_xlabel(TIME_AXIS)
    ax.set_ylabel("segment start: sequence number - sender's ISN (bytes)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    fig.text(0.01, 0.005, "dots, circles: at the sender's capture time; drop and ARQ marks: "
             "at the link's time of the drop or delivery (emulator log)", fontsize=8,
             color="#444")
    return _save(fig, out, bottom=0.06)


def _save(fig, out: Path, bottom: float = 0.0) -> Path:
    """out (a .png) at PNG_DPI and the same plot as SVG beside it; returns out."""
    refuse_symlinks(out)          # before mkdir: plots/ must not be made behind a link either
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout(rect=(0, bottom, 1, 1))
    write_atomically(out, lambda tmp: fig.savefig(tmp, dpi=PNG_DPI, format="png"))
    write_atomically(out.with_suffix(".svg"), lambda tmp: fig.savefig(tmp, format="svg"))
    plt.close(fig)
    return out


# --- queue and send buffer ----------------------------------------------------------------

def plot_queues(view: ReplicationView, out: Path, title: str) -> Path:
    periods, _ = bad_periods(stored(view.directory, LOG_NAME))
    fig, (qa, sa) = plt.subplots(2, 1, figsize=(11, 6), sharex=True)
    queue_path = view.directory / QUEUE_NAME
    if queue_path.exists():
        samples = read_queue_samples(queue_path)
        times, pkts, _ = samples.series()
        t0 = view.log.start_realtime_us or 0
        # without --t0-realtime-us the monitor writes absolute CLOCK_REALTIME times
        offset = t0 if times and times[0] > 10**15 else 0
        qa.step([(t - offset) / 1e6 for t in times], pkts, where="post",
                label="router queue (leaf qdiscs)")
    for direction in router_directions(view.log):     # the emulator's router stage
        backlog = router_backlog(view.log, direction)
        qa.step([t / 1e6 for t in backlog.times_us], backlog.packets, where="post",
                label=f"router stage, {direction}")
    if not queue_path.exists() and not router_directions(view.log):
        qa.text(0.5, 0.5, f"no router in this replication (no {QUEUE_NAME}, no router stage)",
                ha="center", transform=qa.transAxes)
    _shade(qa, periods)
    qa.set_ylabel("router queue (packets)")
    for direction in ("down", "up"):
        evs = [(e.time_us / 1e6, e.sbuf) for e in view.log.events
               if e.dir == direction and e.sbuf is not None]
        if evs:
            sa.step([t for t, _ in evs], [b for _, b in evs], where="post",
                    label=f"link send buffer, {direction}")
    _shade(sa, periods)
    sa.set_ylabel("send buffer occupancy (bytes)")
    sa.set_xlabel(TIME_AXIS)
    qa.set_title(title)
    for ax in (qa, sa):
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8, loc="upper right")
    return _save(fig, out)


# --- box plots and channel timeline ---------------------------------------------------------

def _box_series(cell: CellResult) -> list[tuple[str, list[float]]]:
    """Per HTTP flow its page response times, per bulk transfer (role) and command flow its
    elapsed times."""
    counting = [r for r in cell.replications if r.counts]
    names = [(f"{f.name} page", f"{f.name}.response_time_s") for f in cell.flows_of("http")]
    names += [(role, f"{prefix}.elapsed_s") for role, prefix in bulk_roles(cell)]
    names += [(f.name, f"{f.name}.elapsed_s") for f in cell.flows_of("command")]
    return [(label, [v for r in counting if (v := r.values.get(metric)) is not None])
            for label, metric in names]


def plot_boxes(analysis: RunAnalysis, out: Path) -> Path | None:
    labels, data = [], []
    for cell in analysis.cells:
        for what, values in _box_series(cell):
            finite = [v for v in values if math.isfinite(v)]
            if values:
                # a box cannot show a time beyond the timeout: say how many there were
                beyond = len(values) - len(finite)
                labels.append(f"{cell.cell}\n{what}" + (f"\n({beyond} beyond the timeout)" if beyond else ""))
                data.append(finite)
    if not data:
        return None
    fig, ax = plt.subplots(figsize=(max(6, 1.3 * len(data) + 2), 5))
    ax.boxplot(data, whis=(0, 100))
    ax.set_xticks(range(1, len(labels) + 1), labels, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("page response / TCP elapsed time (s)")
    ax.set_title(f"{analysis.layout.name}: response and elapsed times per cell\n"
                 "(box: quartiles, line: median, whiskers: min and max over replications)",
                 fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    return _save(fig, out)


def plot_channel(analysis: RunAnalysis, out: Path) -> Path | None:
    """The channel timeline of each replication (the same in every cell: seed + rep)."""
    rows: dict[int, tuple[list[tuple[float, float]], float]] = {}
    for cell in analysis.cells:
        for r in cell.replications:
            log = stored(r.ref.directory, LOG_NAME)
            if r.ref.rep not in rows and log.exists():
                try:
                    rows[r.ref.rep] = bad_periods(log)
                except (OSError, ValueError, UnicodeDecodeError, EOFError):
                    continue
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(11, 1.2 + 0.35 * len(rows)))
    for y, rep in enumerate(sorted(rows)):
        periods, end = rows[rep]
        ax.broken_barh([(0, end)], (y - 0.4, 0.8), color="#b7e1b0",
                       label="good" if y == 0 else None)
        ax.broken_barh([(a, b - a) for a, b in periods], (y - 0.4, 0.8), color="#555555",
                       label="bad" if y == 0 else None)
    ax.set_yticks(range(len(rows)), [f"rep {r}" for r in sorted(rows)])
    ax.set_xlabel(TIME_AXIS)
    ax.set_title(f"{analysis.layout.name}: channel state per replication")
    ax.legend(fontsize=8, loc="upper right")
    return _save(fig, out)


# --- time series and CDFs (from the summary tables) ---------------------------------------

def _table(analysis: RunAnalysis, name: str):
    """A summary table as a DataFrame, or None when the summary has none (an analysis
    written before the table existed)."""
    from analysis.aggregate.loader import read_table

    try:
        return read_table(analysis.layout.root, name)
    except FileNotFoundError:
        return None


def _ecdf(ax, values, label: str) -> None:
    """Over all the values: one beyond the timeout (inf) keeps the curve below 1."""
    values = [float(v) for v in values]
    xs = sorted(v for v in values if math.isfinite(v))
    if xs:
        ax.step(xs, [(i + 1) / len(values) for i in range(len(xs))], where="post", label=label)
    elif values:        # nothing to draw, but the legend says the cell is there
        ax.plot([], [], label=f"{label} (all {len(values)} beyond the timeout)")


def _cdf_legend(ax, n: int) -> None:
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("fraction ≤ x")
    ax.grid(alpha=0.3)
    if n:
        ax.legend(fontsize=7, loc="lower right", ncol=1 if n <= 12 else 2)


def plot_cdf_times(analysis: RunAnalysis, out: Path) -> Path | None:
    """CDF over replications of page response times and bulk and command elapsed times, per
    cell."""
    series = [(f"{cell.cell}: {what}", values) for cell in analysis.cells
              for what, values in _box_series(cell) if values]
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(9, 5))
    for label, values in series:
        _ecdf(ax, values, label)
    ax.set_xlabel("page response / TCP elapsed time (s)")
    ax.set_title(f"{analysis.layout.name}: CDF over replications")
    _cdf_legend(ax, len(series))
    return _save(fig, out)


def plot_cdf_delay(analysis: RunAnalysis, out: Path) -> Path | None:
    """CDF of the link delay of every delivered data packet, per cell and flow."""
    delays = _table(analysis, "delays")
    if delays is None or delays.empty:
        return None
    counted = {(c.cell, r.ref.rep) for c in analysis.cells for r in c.replications if r.counts}
    data = delays[(delays["payload_len"].fillna(0) > 0) & delays["delay_ms"].notna()]
    keep = [(c, r) in counted for c, r in zip(data["cell"], data["replication"])]
    data = data[keep]
    if data.empty:
        return None
    fig, ax = plt.subplots(figsize=(9, 5))
    groups = list(data.groupby(["cell", "flow", "dir"], sort=False))
    for (cell, flow, direction), g in groups:
        _ecdf(ax, g["delay_ms"], f"{cell}: {flow} ({direction})")
    ax.set_xlabel("link delay of a data packet, emulator in -> out (ms)")
    ax.set_title(f"{analysis.layout.name}: link delay per flow, all replications")
    _cdf_legend(ax, len(groups))
    return _save(fig, out)


def plot_throughput(analysis: RunAnalysis, cell: CellResult, out: Path,
                    throughput) -> Path | None:
    """Every replication's throughput of each flow over time (thin), their median (thick)."""
    mine = throughput[throughput["cell"] == cell.cell]
    if mine.empty:
        return None
    flows = list(dict.fromkeys(mine["flow"]))
    fig, axes = plt.subplots(len(flows), 1, figsize=(11, 2.6 * len(flows) + 0.8),
                             sharex=True, squeeze=False)
    for ax, flow in zip(axes[:, 0], flows):
        f = mine[mine["flow"] == flow]
        colour = None
        for rep, g in f.groupby("replication"):
            line, = ax.step(g["t_s"], g["kbit_per_s"], where="post", lw=0.7, alpha=0.45,
                            color=colour)
            colour = line.get_color()
        median = f.groupby("t_s")["kbit_per_s"].median()
        ax.step(median.index, median.values, where="post", lw=2.2, color="black",
                label=f"median of {f['replication'].nunique()} replications")
        ax.set_ylabel(f"{flow}\n(kbit/s)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="upper right")
    interval = float(mine["interval_s"].iloc[0])
    axes[-1, 0].set_xlabel(TIME_AXIS)
    axes[0, 0].set_title(f"Throughput over time: cell {cell.cell} (payload at the receiver, "
                         f"per {interval * 1000:g} ms)")
    return _save(fig, out)


def plot_series(cell: str, rep: int, rep_dir: Path, out: Path, throughput,
                delays) -> Path | None:
    """One replication: each flow's throughput and its packets' link delay over time."""
    t = throughput[(throughput["cell"] == cell) & (throughput["replication"] == rep)] \
        if throughput is not None else None
    d = delays[(delays["cell"] == cell) & (delays["replication"] == rep)] \
        if delays is not None else None
    if (t is None or t.empty) and (d is None or d.empty):
        return None
    periods, _ = bad_periods(stored(rep_dir, LOG_NAME))
    fig, (ta, da) = plt.subplots(2, 1, figsize=(11, 7), sharex=True)
    for flow, g in (t.groupby("flow", sort=False) if t is not None else []):
        ta.step(g["t_s"], g["kbit_per_s"], where="post", label=flow)
    ta.set_ylabel("throughput (kbit/s)")
    top = 0.0
    for (flow, direction), g in (d.groupby(["flow", "dir"], sort=False) if d is not None else []):
        ok = g[g["delay_ms"].notna()]
        if not ok.empty:
            top = max(top, float(ok["delay_ms"].max()))
        da.plot(ok["t_s"], ok["delay_ms"], ".", ms=3, label=f"{flow} {direction}")
    for (flow, direction), g in (d.groupby(["flow", "dir"], sort=False) if d is not None else []):
        lost = g[g["fate"].isin(["drop_sbuf", "drop_router", "drop_err", "drop_mtu", "drop_loss"])]
        if not lost.empty:
            da.plot(lost["t_s"], [top * 1.05 or 1.0] * len(lost), "x", ms=6,
                    label=f"{flow} {direction} dropped")
    da.set_ylabel("link delay (ms)")
    da.set_xlabel(TIME_AXIS)
    ta.set_title(f"Throughput and link delay: cell {cell}, replication {rep}")
    _finish_time_axes((ta, da), periods, legend_size=8)
    return _save(fig, out)


def _finish_time_axes(axes, periods: list[tuple[float, float]], legend_size: int) -> None:
    """Bad channel states shaded, a light grid, a legend where there is something to name."""
    for ax in axes:
        _shade(ax, periods)
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=legend_size, loc="upper right")


def plot_tcpinfo(cell: str, rep: int, rep_dir: Path, out: Path, tcpinfo) -> Path | None:
    """One replication: cwnd, ssthresh, smoothed RTT and RTO of each connection's data sender."""
    if tcpinfo is None:
        return None
    # the data sender's samples (the SYN alone makes bytes_acked 1) of the scenario's flows:
    # a connection of no flow (a lab host's own ssh session) is left out
    t = tcpinfo[(tcpinfo["cell"] == cell) & (tcpinfo["replication"] == rep)
                & (tcpinfo["bytes_acked"].fillna(0) > 1) & tcpinfo["flow"].notna()]
    if t.empty:
        return None
    # of a connection's two ends only its data sender, the end whose bytes were acknowledged most
    # (an HTTP client's requests are acknowledged too): the caption's "the host that sent the data"
    ends = ["|".join(sorted((f"{s}:{sp}", f"{d}:{dp}"))) for s, sp, d, dp in
            zip(t["src"], t["sport"], t["dst"], t["dport"])]
    acked = t.assign(connection=ends).groupby(["connection", "host"])["bytes_acked"].max()
    senders = set(acked.groupby(level=0).idxmax())
    t = t[[(e, h) in senders for e, h in zip(ends, t["host"])]]
    periods, _ = bad_periods(stored(rep_dir, LOG_NAME))
    fig, (wa, ra) = plt.subplots(2, 1, figsize=(11, 7), sharex=True)
    for (flow, host, sport, dport), g in t.groupby(["flow", "host", "sport", "dport"], sort=False):
        label = f"{flow} {host}:{sport}->{dport}"
        line = wa.step(g["t_s"], g["cwnd"], where="post", label=f"{label} cwnd")[0]
        wa.step(g["t_s"], g["ssthresh"], where="post", ls=":", color=line.get_color())
        line = ra.plot(g["t_s"], g["srtt_ms"], label=f"{label} srtt")[0]
        ra.plot(g["t_s"], g["rto_ms"], ls=":", color=line.get_color())
    wa.set_ylabel("cwnd (solid), ssthresh (dotted), segments")
    ra.set_ylabel("smoothed RTT (solid), RTO (dotted), ms")
    ra.set_xlabel(TIME_AXIS)
    wa.set_title(f"Congestion window and RTT (kernel tcp_info): cell {cell}, replication {rep}")
    _finish_time_axes((wa, ra), periods, legend_size=7)
    return _save(fig, out)


# --- what `squall plot` draws -------------------------------------------------------------

def default_replications(analysis: RunAnalysis) -> list[tuple[str, int, Path]]:
    """The first replication of each cell that was analysed."""
    chosen = []
    for cell in analysis.cells:
        r = next((r for r in cell.replications if r.analysed), None)
        if r is not None:
            chosen.append((cell.cell, r.ref.rep, r.ref.directory))
    return chosen


def chosen_replications(analysis: RunAnalysis, cell: str | None = None,
                        replication: int | str | None = None) -> list[tuple[str, int, Path]]:
    """(cell, rep, directory) to plot: `replication` None the first analysed one of each
    cell, "all" every analysed one, N replication N; of one cell or of all."""
    cells = [c for c in analysis.cells if cell is None or c.cell == cell]
    if cell is not None and not cells:
        raise ValueError(f"{analysis.layout.root}: no cell {cell} (cells: "
                         f"{', '.join(c.cell for c in analysis.cells)})")
    if replication is None:
        targets = [t for t in default_replications(analysis) if cell is None or t[0] == cell]
    else:
        targets = [(c.cell, r.ref.rep, r.ref.directory) for c in cells for r in c.replications
                   if r.analysed and (replication == "all" or r.ref.rep == replication)]
    if not targets:
        what = "no analysed replication" if replication in (None, "all") else \
            f"no analysed replication {replication}"
        raise ValueError(f"{analysis.layout.root}: {what}"
                         + (f" in cell {cell}" if cell else ""))
    return targets


def plot_replication(cell: str, rep: int, rep_dir: Path, out_dir: Path,
                     connection: int | None = None, throughput=None,
                     delays=None, tcpinfo=None) -> list[Path]:
    view = load_view(rep_dir)
    name = f"{cell}_rep-{rep:02d}"
    what = f"cell {cell}, replication {rep}"
    if connection is not None:
        if not 1 <= connection <= len(view.connections):
            raise ValueError(f"{rep_dir}: connection {connection}: expected 1.."
                             f"{len(view.connections)} (connections ordered by first SYN)")
        tsd = plot_time_sequence(view, out_dir / f"tsd_{name}_conn-{connection}.png",
                                 f"Time-sequence: {what}, connection {connection}", connection)
    else:
        tsd = plot_time_sequence(view, out_dir / f"tsd_{name}.png",
                                 f"Time-sequence: {what}, all TCP connections")
    series = plot_series(cell, rep, rep_dir, out_dir / f"series_{name}.png", throughput,
                         delays) if connection is None else None
    kernel = plot_tcpinfo(cell, rep, rep_dir, out_dir / f"tcpinfo_{name}.png", tcpinfo) \
        if connection is None else None
    return [tsd, *([series] if series else []), *([kernel] if kernel else []),
            plot_queues(view, out_dir / f"queues_{name}.png",
                        f"Router queue and link send buffer: {what}")]


def plot_run(analysis: RunAnalysis, out_dir: Path, cell: str | None = None,
             rep: int | None = None, connection: int | None = None,
             replication: int | str | None = None) -> list[Path]:
    """The run's plots (without a cell or replication chosen) and those of the chosen
    replications (`rep` with `cell`, or `replication` N / "all")."""
    if rep is not None:
        replication = rep
    targets = chosen_replications(analysis, cell, replication)
    throughput = _table(analysis, "throughput")
    delays = _table(analysis, "delays")
    tcpinfo = _table(analysis, "tcpinfo")
    written: list[Path] = []
    if cell is None and rep is None:
        written += [p for p in (plot_boxes(analysis, out_dir / "boxes.png"),
                                plot_cdf_times(analysis, out_dir / "cdf-times.png"),
                                plot_cdf_delay(analysis, out_dir / "cdf-delay.png"),
                                plot_channel(analysis, out_dir / "channel.png")) if p]
        if throughput is not None and not throughput.empty:
            written += [p for c in analysis.cells
                        if (p := plot_throughput(analysis, c, out_dir / f"throughput_{c.cell}.png",
                                                 throughput))]
    for c, r, d in targets:
        written += plot_replication(c, r, d, out_dir, connection, throughput, delays, tcpinfo)
    return written
