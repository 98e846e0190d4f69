"""PNG plots of a run (matplotlib, written into summary/plots/).

- time-sequence diagram of a replication's TCP connections (sequence number relative to
  the sender's ISN vs time, from the sender's capture) with bad channel states shaded and
  error drops, congestion drops, ARQ-delayed packets and retransmissions marked;
- router queue length (router-queue.tsv) and link send-buffer occupancy (the log's sbuf)
  over time;
- box plots per cell of the page response time (HTTP) or elapsed time per flow role;
- the channel timeline (good/bad) of every replication.

Times are seconds since the emulator's t = 0 (the log's `start_realtime_us`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from analysis.connections import TcpConnection, tcp_connections_of  # noqa: E402
from analysis.emulog import EmulatorLog, read_emulator_log  # noqa: E402
from analysis.join import PacketFate, join_records  # noqa: E402
from analysis.pcap import ip_records, read_capture  # noqa: E402
from analysis.queue import QUEUE_NAME, read_queue_samples  # noqa: E402
from analysis.replication import CAPTURES, LOG_NAME, side_addresses  # noqa: E402
from analysis.run import CellResult, RunAnalysis  # noqa: E402
from analysis.tcp_metrics import TcpMetrics, default_sender, tcp_metrics  # noqa: E402

PLOTS_DIR = "plots"
BAD_COLOUR = "#d9d9d9"


# --- channel states ---------------------------------------------------------------------

def bad_periods(log_path: Path) -> tuple[list[tuple[float, float]], float]:
    """Bad-state periods (s) and the log's end (s), scanning only the lines needed."""
    periods: list[tuple[float, float]] = []
    state, since, end = "good", 0.0, 0.0
    with open(log_path, encoding="utf-8") as f:
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
    log = read_emulator_log(rep_dir / LOG_NAME)
    sides = side_addresses(log)
    view = ReplicationView(rep_dir, log)
    for side, name in CAPTURES.items():
        if not (rep_dir / name).exists():
            continue
        records = ip_records(read_capture(rep_dir / name))
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
    if fate.fate in ("drop_sbuf", "drop_router", "unseen"):   # unseen: the tc router
        return "congestion drop"
    return "ARQ-delayed (link retransmission)" if fate.hits > 0 else None


def _conn_label(i: int, m: TcpMetrics) -> str:
    return f"{i}: {m.sender[0]}:{m.sender[1]} → {m.client[0] if m.sender == m.server else m.server[0]}"


def plot_time_sequence(view: ReplicationView, out: Path, title: str,
                       only: int | None = None) -> Path:
    t0 = view.log.start_realtime_us or 0
    periods, _ = bad_periods(view.directory / LOG_NAME)
    fig, ax = plt.subplots(figsize=(11, 6))
    _shade(ax, periods)
    markers = {"retransmission": ([], [], dict(marker="o", facecolors="none",
                                                 edgecolors="black", s=60)),
               "error drop": ([], [], dict(marker="X", color="red", s=70)),
               "congestion drop": ([], [], dict(marker="v", color="darkorange", s=60)),
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
                markers[key][0].append(x)
                markers[key][1].append(y)
    for name, (xs, ys, style) in markers.items():
        if xs:
            ax.scatter(xs, ys, label=name, zorder=3, **style)
    ax.set_xlabel("time since emulator start (s)")
    ax.set_ylabel("segment start: sequence number - sender's ISN (bytes)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    return _save(fig, out)


def _save(fig, out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


# --- queue and send buffer ----------------------------------------------------------------

def plot_queues(view: ReplicationView, out: Path, title: str) -> Path:
    periods, _ = bad_periods(view.directory / LOG_NAME)
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
    else:
        qa.text(0.5, 0.5, f"no {QUEUE_NAME} in this replication", ha="center",
                transform=qa.transAxes)
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
    sa.set_xlabel("time since emulator start (s)")
    qa.set_title(title)
    for ax in (qa, sa):
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8, loc="upper right")
    return _save(fig, out)


# --- box plots and channel timeline ---------------------------------------------------------

def _box_series(cell: CellResult) -> list[tuple[str, list[float]]]:
    counting = [r for r in cell.replications if r.counts]
    http = cell.flows_of("http")
    if http:
        names = [(f"{f.name} page", f"{f.name}.response_time_s") for f in http]
    else:
        roles = sorted({k.split(".")[1] for r in counting for k in r.values
                        if k.startswith("tcp.") and k.endswith(".elapsed_s")})
        names = [(role, f"tcp.{role}.elapsed_s") for role in roles]
    return [(label, [v for r in counting if (v := r.values.get(metric)) is not None])
            for label, metric in names]


def plot_boxes(analysis: RunAnalysis, out: Path) -> Path | None:
    labels, data = [], []
    for cell in analysis.cells:
        for what, values in _box_series(cell):
            if values:
                labels.append(f"{cell.cell}\n{what}")
                data.append(values)
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
            log = r.ref.directory / LOG_NAME
            if r.ref.rep not in rows and log.exists():
                try:
                    rows[r.ref.rep] = bad_periods(log)
                except (OSError, ValueError, UnicodeDecodeError):
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
    ax.set_xlabel("time since emulator start (s)")
    ax.set_title(f"{analysis.layout.name}: channel state per replication")
    ax.legend(fontsize=8, loc="upper right")
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


def plot_replication(cell: str, rep: int, rep_dir: Path, out_dir: Path,
                     connection: int | None = None) -> list[Path]:
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
    return [tsd, plot_queues(view, out_dir / f"queues_{name}.png",
                             f"Router queue and link send buffer: {what}")]


def plot_run(analysis: RunAnalysis, out_dir: Path, cell: str | None = None,
             rep: int | None = None, connection: int | None = None) -> list[Path]:
    written = []
    if cell is None and rep is None:
        written += [p for p in (plot_boxes(analysis, out_dir / "boxes.png"),
                                plot_channel(analysis, out_dir / "channel.png")) if p]
    targets = default_replications(analysis)
    if cell is not None:
        targets = [t for t in targets if t[0] == cell] if rep is None else []
        if rep is not None:
            refs = [r for c in analysis.cells if c.cell == cell for r in c.replications
                    if r.ref.rep == rep]
            if not refs:
                raise ValueError(f"{analysis.layout.root}: no replication {rep} in cell {cell}")
            targets = [(cell, rep, refs[0].ref.directory)]
        if not targets:
            raise ValueError(f"{analysis.layout.root}: cell {cell}: no analysed replication "
                             f"(cells: {', '.join(c.cell for c in analysis.cells)})")
    for c, r, d in targets:
        written += plot_replication(c, r, d, out_dir, connection)
    return written
