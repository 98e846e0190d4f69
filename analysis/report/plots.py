"""Plots of a run (matplotlib), each as PNG (150 dpi) and SVG, into summary/plots/.

Of the run, over the replications in the statistics (n stated in each):
- box plots per cell of the page response time (HTTP) and of the elapsed time per flow (bulk
  transfers, command flows), one axis per measure;
- CDFs over replications and cells of the same times (one axis per measure), and of the link
  delay of every data packet per flow (summary/delays);
- per cell, the throughput of each flow over time in every replication, and their median
  (summary/throughput);
- the channel timeline (good/bad) of every replication.
Of a replication (`--replication N|all`; default the first of each cell in the statistics,
analysis/report/plot_choice.py):
- time-sequence diagram of its TCP connections (analysis/report/time_sequence.py);
- throughput and link delay of each flow over time, bad states shaded;
- router queue length (router-queue.tsv) and link send-buffer occupancy (the log's sbuf;
  analysis/report/queue_plot.py);
- the kernel's congestion window, slow-start threshold, smoothed RTT and RTO of each TCP
  connection's data sender over time (summary/tcpinfo, squall-tcp-sampler).

Times are seconds since the emulator's t = 0 (the log's `start_realtime_us`); each plot's
caption (`CAPTIONS`, shown under it in report.html) says what it shows."""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib.pyplot as plt

from analysis.aggregate.run_analysis import CellResult, RunAnalysis
from analysis.report import plot_frame
from analysis.report.bulk_roles import bulk_roles
from analysis.report.plot_choice import ChosenReplication, chosen_replications
from analysis.report.queue_plot import plot_queues
from analysis.report.time_sequence import load_view, plot_time_sequence
from analysis.results.directory import LOG_NAME
from analysis.results.stored import stored

PLOTS_DIR = "plots"
# what each plot shows, by its file name's first word (report.html puts it under the plot)
CAPTIONS = {
    "boxes": "Page response time (HTTP) and elapsed time (bulk TCP, command flows' TCP "
             "connections), each on its own axis, per cell and flow over the replications in "
             "the statistics (n under each box, the n of the tables): box from the 25th to the "
             "75th percentile, line at the median, whiskers at the minimum and maximum.",
    "cdf-times": "Empirical CDF over the replications in the statistics of each cell (n in "
                 "the legend): page response time (HTTP, client capture) and elapsed time "
                 "(bulk TCP and command flows, sender capture), each on its own axis; a dot "
                 "per value where there are few.",
    "cdf-delay": "Empirical CDF of the link delay (emulator in -> out: router queue, send "
                 "buffer, transmission, ARQ, propagation) of every delivered data packet of "
                 "each flow, over the replications of the cell in the statistics (n packets "
                 "and replications in the legend).",
    "throughput": "Throughput of each flow over time: payload bytes received in the "
                  "receiver's capture per interval (retransmissions included), one thin "
                  "line per replication in the statistics, the thick line their median per "
                  "interval (n in the legend); replications not in the statistics (degraded) "
                  "dashed grey, apart from the median.",
    "channel": "Channel state of each replication (the same timeline in every cell: it "
               "depends only on the seed and the replication number).",
    "tsd": "Time-sequence diagram (Stevens-style, as tcptrace draws it) from the sender's "
           "capture, each connection named by its flow, which of the flow's connections it "
           "is, and which side sent its data. Dots: segments; solid line: the receiver's "
           "cumulative ACK; dashed line: ACK + the receiver's advertised window (scaled by "
           "the window scale of the SYNs), both at the time the sender's capture saw the "
           "ACK. What the link did to a segment (error drop, congestion drop, delivery after "
           "ARQ retransmissions) is drawn at the time it happened in the link (the emulator "
           "log's final event for it), later than the segment by its wait in the router "
           "queue and send buffer. A packet dropped before the link (tc router) is drawn at "
           "its capture time. Grey: bad channel state.",
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
    "sendbuffer": "The link's send-buffer occupancy per direction (emulator log), in a "
                  "replication without a router (no router-queue.tsv, no router stage in the "
                  "log): no empty router frame is drawn, the title says so. Grey: bad channel "
                  "state.",
}
# Of one replication (tsd, series, tcpinfo, queues, sendbuffer): by default the first of each
# cell in the statistics; a degraded one only when the cell has none, and its title says so
# (analysis/report/plot_choice.py).


def caption(path: Path) -> str:
    return CAPTIONS.get(path.stem.split("_")[0], "")


# --- box plots and channel timeline ---------------------------------------------------------

PAGE_TIME = "page response time (s)"
ELAPSED_TIME = "TCP elapsed time (s)"


def _box_series(cell: CellResult) -> list[tuple[str, str, list[float]]]:
    """(label, measure, values in the statistics): per HTTP flow its page response times
    (PAGE_TIME), per bulk transfer (role) and command flow its elapsed times (ELAPSED_TIME)."""
    counting = [r for r in cell.replications if r.counts]
    names = [(f"{f.name} page", PAGE_TIME, f"{f.name}.response_time_s")
             for f in cell.flows_of("http")]
    names += [(role, ELAPSED_TIME, f"{prefix}.elapsed_s") for role, prefix in bulk_roles(cell)]
    names += [(f.name, ELAPSED_TIME, f"{f.name}.elapsed_s") for f in cell.flows_of("command")]
    return [(label, measure, [v for r in counting if (v := r.values.get(metric)) is not None])
            for label, measure, metric in names]


def _by_measure(analysis: RunAnalysis) -> dict[str, list[tuple[str, list[float]]]]:
    """Each measure's (`cell: label`, values) with values: one axis per measure, never a page
    time beside an elapsed time."""
    out: dict[str, list[tuple[str, list[float]]]] = {}
    for cell in analysis.cells:
        for label, measure, values in _box_series(cell):
            if values:
                out.setdefault(measure, []).append((f"{cell.cell}: {label}", values))
    return out


def _box_label(label: str, values: list[float]) -> str:
    """`cell\nflow\nn = 3`; a box cannot show a time beyond the timeout: how many there were."""
    beyond = sum(not math.isfinite(v) for v in values)
    return (label.replace(": ", "\n", 1) + f"\nn = {len(values)}"
            + (f"\n({beyond} beyond the timeout)" if beyond else ""))


def plot_boxes(analysis: RunAnalysis, out: Path) -> Path | None:
    measures = _by_measure(analysis)
    if not measures:
        return None
    sizes = [len(series) for series in measures.values()]
    fig, axes = plt.subplots(1, len(measures), figsize=(max(6, 1.3 * sum(sizes) + 2.5), 5.4),
                             squeeze=False, gridspec_kw={"width_ratios": sizes})
    for ax, (measure, series) in zip(axes[0], measures.items()):
        ax.boxplot([[v for v in values if math.isfinite(v)] for _, values in series],
                   whis=(0, 100))
        ax.set_xticks(range(1, len(series) + 1), [_box_label(*s) for s in series], rotation=30,
                      ha="right", fontsize=8)
        ax.set_ylabel(measure)
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle(f"{analysis.layout.name}: response and elapsed times per cell, over the "
                 "replications in the statistics (n each)\n(box: quartiles, line: median, "
                 "whiskers: min and max)", fontsize=10)
    return plot_frame.save(fig, out)


def plot_channel(analysis: RunAnalysis, out: Path) -> Path | None:
    """The channel timeline of each replication (the same in every cell: seed + rep)."""
    rows: dict[int, tuple[list[tuple[float, float]], float]] = {}
    for cell in analysis.cells:
        for r in cell.replications:
            log = stored(r.ref.directory, LOG_NAME)
            if r.ref.rep not in rows and log.exists():
                try:
                    rows[r.ref.rep] = plot_frame.bad_periods(log)
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
    ax.set_xlabel(plot_frame.TIME_AXIS)
    ax.set_title(f"{analysis.layout.name}: channel state per replication")
    ax.legend(fontsize=8, loc="upper right")
    return plot_frame.save(fig, out)


# --- time series and CDFs (from the summary tables) ---------------------------------------

def _table(analysis: RunAnalysis, name: str):
    """A summary table as a DataFrame, or None when the summary has none (an analysis
    written before the table existed)."""
    from analysis.aggregate.loader import read_table

    try:
        return read_table(analysis.layout.root, name)
    except FileNotFoundError:
        return None


def _ecdf(ax, values, label: str, of: str = "") -> None:
    """Over all the values, n in the legend (`of`: what else it counts); a value beyond the
    timeout (inf) keeps the curve below 1. The curve rises from 0 at the smallest value and
    small samples get a dot per value, so that a single value is a visible step."""
    values = [float(v) for v in values]
    xs = sorted(v for v in values if math.isfinite(v))
    n = f"n = {len(values)}{of}"
    if xs:
        ys = [(i + 1) / len(values) for i in range(len(xs))]
        ax.step([xs[0], *xs], [0.0, *ys], where="post", label=f"{label} ({n})",
                marker="o" if len(xs) <= 20 else None, ms=4, markevery=list(range(1, len(xs) + 1)))
    elif values:        # nothing to draw, but the legend says the cell is there
        ax.plot([], [], label=f"{label} ({n}, all beyond the timeout)")


def _cdf_legend(ax, n: int) -> None:
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("fraction ≤ x")
    ax.grid(alpha=0.3)
    if n:
        ax.legend(fontsize=7, loc="lower right", ncol=1 if n <= 12 else 2)


def plot_cdf_times(analysis: RunAnalysis, out: Path) -> Path | None:
    """CDF over the replications in the statistics of page response times and of bulk and
    command elapsed times (one axis each), per cell."""
    measures = _by_measure(analysis)
    if not measures:
        return None
    fig, axes = plt.subplots(len(measures), 1, figsize=(9, 4.2 * len(measures) + 0.6),
                             squeeze=False)
    for ax, (measure, series) in zip(axes[:, 0], measures.items()):
        for label, values in series:
            _ecdf(ax, values, label)
        ax.set_xlabel(measure)
        _cdf_legend(ax, len(series))
    axes[0, 0].set_title(f"{analysis.layout.name}: CDF over the replications in the statistics")
    return plot_frame.save(fig, out)


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
        _ecdf(ax, g["delay_ms"], f"{cell}: {flow} ({direction})",
              f" packets of {g['replication'].nunique()} replications")
    ax.set_xlabel("link delay of a data packet, emulator in -> out (ms)")
    ax.set_title(f"{analysis.layout.name}: link delay per flow, the replications in the "
                 "statistics")
    _cdf_legend(ax, len(groups))
    return plot_frame.save(fig, out)


def _throughput_lines(ax, counted, apart) -> None:
    """The replications in the statistics thin, their median thick (n in its label); the
    others (degraded, unanalysable) dashed grey, apart from the median."""
    colour = None
    for _, g in counted.groupby("replication"):
        colour = ax.step(g["t_s"], g["kbit_per_s"], where="post", lw=0.7, alpha=0.45,
                         color=colour)[0].get_color()
    for i, (_, g) in enumerate(apart.groupby("replication")):
        ax.step(g["t_s"], g["kbit_per_s"], where="post", lw=0.7, ls="--", color="grey",
                label=f"{apart['replication'].nunique()} not in the statistics (degraded or failed)"
                if i == 0 else None)
    if not counted.empty:
        median = counted.groupby("t_s")["kbit_per_s"].median()
        ax.step(median.index, median.values, where="post", lw=2.2, color="black",
                label=f"median of the n = {counted['replication'].nunique()} replications "
                      "in the statistics")


def plot_throughput(analysis: RunAnalysis, cell: CellResult, out: Path,
                    throughput) -> Path | None:
    """Every replication's throughput of each flow over time (thin), their median (thick)."""
    mine = throughput[throughput["cell"] == cell.cell]
    if mine.empty:
        return None
    flows = list(dict.fromkeys(mine["flow"]))
    fig, axes = plt.subplots(len(flows), 1, figsize=(11, 2.6 * len(flows) + 0.8),
                             sharex=True, squeeze=False)
    counted = {r.ref.rep for r in cell.replications if r.counts}
    for ax, flow in zip(axes[:, 0], flows):
        f = mine[mine["flow"] == flow]
        _throughput_lines(ax, f[f["replication"].isin(counted)],
                          f[~f["replication"].isin(counted)])
        ax.set_ylabel(f"{flow}\n(kbit/s)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="upper right")
    interval = float(mine["interval_s"].iloc[0])
    axes[-1, 0].set_xlabel(plot_frame.TIME_AXIS)
    axes[0, 0].set_title(f"Throughput over time: cell {cell.cell} (payload at the receiver, "
                         f"per {interval * 1000:g} ms)")
    return plot_frame.save(fig, out)


def plot_series(cell: str, rep: int, rep_dir: Path, out: Path, throughput,
                delays, what: str | None = None) -> Path | None:
    """One replication: each flow's throughput and its packets' link delay over time."""
    t = throughput[(throughput["cell"] == cell) & (throughput["replication"] == rep)] \
        if throughput is not None else None
    d = delays[(delays["cell"] == cell) & (delays["replication"] == rep)] \
        if delays is not None else None
    if (t is None or t.empty) and (d is None or d.empty):
        return None
    periods, _ = plot_frame.bad_periods(stored(rep_dir, LOG_NAME))
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
    da.set_xlabel(plot_frame.TIME_AXIS)
    ta.set_title(f"Throughput and link delay: {what or f'cell {cell}, replication {rep}'}")
    _finish_time_axes((ta, da), periods, legend_size=8)
    return plot_frame.save(fig, out)


def _finish_time_axes(axes, periods: list[tuple[float, float]], legend_size: int) -> None:
    """Bad channel states shaded, a light grid, a legend where there is something to name."""
    for ax in axes:
        plot_frame.shade(ax, periods)
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=legend_size, loc="upper right")


def plot_tcpinfo(cell: str, rep: int, rep_dir: Path, out: Path, tcpinfo,
                 what: str | None = None) -> Path | None:
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
    periods, _ = plot_frame.bad_periods(stored(rep_dir, LOG_NAME))
    fig, (wa, ra) = plt.subplots(2, 1, figsize=(11, 7), sharex=True)
    for (flow, host, sport, dport), g in t.groupby(["flow", "host", "sport", "dport"], sort=False):
        label = f"{flow} {host}:{sport}->{dport}"
        line = wa.step(g["t_s"], g["cwnd"], where="post", label=f"{label} cwnd")[0]
        wa.step(g["t_s"], g["ssthresh"], where="post", ls=":", color=line.get_color())
        line = ra.plot(g["t_s"], g["srtt_ms"], label=f"{label} srtt")[0]
        ra.plot(g["t_s"], g["rto_ms"], ls=":", color=line.get_color())
    wa.set_ylabel("cwnd (solid), ssthresh (dotted), segments")
    ra.set_ylabel("smoothed RTT (solid), RTO (dotted), ms")
    ra.set_xlabel(plot_frame.TIME_AXIS)
    wa.set_title("Congestion window and RTT (kernel tcp_info): "
                 f"{what or f'cell {cell}, replication {rep}'}")
    _finish_time_axes((wa, ra), periods, legend_size=7)
    return plot_frame.save(fig, out)


# --- what `squall plot` draws -------------------------------------------------------------

def plot_replication(chosen: ChosenReplication, out_dir: Path, connection: int | None = None,
                     throughput=None, delays=None, tcpinfo=None) -> list[Path]:
    view = load_view(chosen.directory)
    name, what = chosen.name, chosen.what
    if connection is not None:
        if not 1 <= connection <= len(view.connections):
            raise ValueError(f"{chosen.directory}: connection {connection}: expected 1.."
                             f"{len(view.connections)} (connections ordered by first SYN)")
        tsd = plot_time_sequence(view, out_dir / f"tsd_{name}_conn-{connection}.png",
                                 f"Time-sequence: {what}, connection {connection}", connection)
        more = []
    else:
        tsd = plot_time_sequence(view, out_dir / f"tsd_{name}.png",
                                 f"Time-sequence: {what}, all TCP connections")
        where = (chosen.cell, chosen.rep, chosen.directory)
        more = [plot_series(*where, out_dir / f"series_{name}.png", throughput, delays, what),
                plot_tcpinfo(*where, out_dir / f"tcpinfo_{name}.png", tcpinfo, what)]
    queues = plot_queues(chosen.directory, view.log, out_dir, name, what)
    return [p for p in (tsd, *more, queues) if p]


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
    for chosen in targets:
        written += plot_replication(chosen, out_dir, connection, throughput, delays, tcpinfo)
    return written
