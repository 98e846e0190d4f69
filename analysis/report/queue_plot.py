"""One replication's queues over time: the tc router's queue (router-queue.tsv) or the emulator's
router stage's backlog per direction (from the log's events), and the link's send-buffer
occupancy per direction (the emulator log's `sbuf`). Without a router there is no queue to
draw: the send buffer alone, under a title that says so."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt

from analysis.read.emulog import EmulatorLog
from analysis.metrics.router_backlog import router_backlog, router_directions
from analysis.read.router_queue import QUEUE_NAME, read_queue_samples
from analysis.report import plot_frame
from analysis.results.directory import LOG_NAME
from analysis.results.stored import stored


NO_ROUTER = f"this replication had no router ({QUEUE_NAME} absent, no router stage in the log)"


def _has_router(directory: Path, log: EmulatorLog) -> bool:
    return (directory / QUEUE_NAME).exists() or bool(router_directions(log))


def _router_queue(ax, directory: Path, log: EmulatorLog) -> None:
    if (directory / QUEUE_NAME).exists():
        times, pkts, _ = read_queue_samples(directory / QUEUE_NAME).series()
        # without --t0-realtime-us the monitor writes absolute CLOCK_REALTIME times
        offset = (log.start_realtime_us or 0) if times and times[0] > 10**15 else 0
        ax.step([(t - offset) / 1e6 for t in times], pkts, where="post",
                label="router queue (leaf qdiscs)")
    for direction in router_directions(log):     # the emulator's router stage
        backlog = router_backlog(log, direction)
        ax.step([t / 1e6 for t in backlog.times_us], backlog.packets, where="post",
                label=f"router stage, {direction}")
    ax.set_ylabel("router queue (packets)")


def _send_buffer(ax, log: EmulatorLog) -> bool:
    """Each direction's send-buffer occupancy; whether there was any."""
    drawn = False
    for direction in ("down", "up"):
        evs = [(e.time_us / 1e6, e.sbuf) for e in log.events
               if e.dir == direction and e.sbuf is not None]
        if evs:
            ax.step([t for t, _ in evs], [b for _, b in evs], where="post",
                    label=f"link send buffer, {direction}")
            drawn = True
    ax.set_ylabel("send buffer occupancy (bytes)")
    return drawn


def plot_queues(directory: Path, log: EmulatorLog, out_dir: Path, name: str,
                what: str) -> Path | None:
    """`queues_<name>.png` with a router queue, else `sendbuffer_<name>.png`; None when there
    is neither."""
    periods, _ = plot_frame.bad_periods(stored(directory, LOG_NAME))
    if _has_router(directory, log):
        fig, axes = plt.subplots(2, 1, figsize=(11, 6), sharex=True)
        _router_queue(axes[0], directory, log)
        _send_buffer(axes[1], log)
        axes[0].set_title(f"Router queue and link send buffer: {what}")
        out = out_dir / f"queues_{name}.png"
    else:
        fig, ax = plt.subplots(figsize=(11, 3.8))
        axes = [ax]
        if not _send_buffer(ax, log):
            plt.close(fig)
            return None
        ax.set_title(f"Link send buffer: {what}\nno router queue drawn: {NO_ROUTER}",
                     fontsize=10)
        out = out_dir / f"sendbuffer_{name}.png"
    axes[-1].set_xlabel(plot_frame.TIME_AXIS)
    for ax in axes:
        plot_frame.shade(ax, periods)
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8, loc="upper right")
    return plot_frame.save(fig, out)
