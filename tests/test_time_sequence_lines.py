"""The time-sequence diagram's Stevens-style lines (analysis/metrics/ack_window.py): the
receiver's cumulative ACK and ACK + its receive window, checked against tshark's relative
`tcp.ack` and calculated `tcp.window_size` on a real kernel capture (a transfer over loopback
in a network namespace of its own, the receiver reading slowly so that its window, scaled by
1024, shrinks to zero and opens again); and drawn in the plot, each connection named by its
flow."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from analysis.metrics.ack_window import ack_line, window_shift
from analysis.metrics.connections import tcp_connections_of
from analysis.metrics.tcp import default_sender
from analysis.read.pcap import ip_records, read_capture
from analysis.report.time_sequence import load_view, plot_time_sequence
from test_analysis_plots import CELL, mixture  # noqa: F401 (the fixture)

PORT = 5555
TRANSFER = """
import socket, threading, time
srv = socket.socket(); srv.bind(("127.0.0.1", {port})); srv.listen(1)
def serve():
    c, _ = srv.accept()
    while c.recv(20000):
        time.sleep(0.001)
    c.close()
t = threading.Thread(target=serve); t.start()
cl = socket.create_connection(("127.0.0.1", {port})); cl.sendall(b"x" * 3_000_000)
cl.shutdown(socket.SHUT_WR); cl.recv(1); cl.close(); t.join()
"""
SCRIPT = """ip link set lo up
tcpdump -i lo -U -Z root -w {pcap} tcp port {port} 2>/dev/null & pid=$!
sleep 1
{python} -c '{transfer}'
sleep 0.5
kill $pid; wait $pid
"""


@pytest.fixture(scope="module")
def capture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if os.geteuid() != 0 or not all(shutil.which(p) for p in ("unshare", "tcpdump", "tshark")):
        pytest.skip("needs root, unshare, tcpdump and tshark (scripts/install-deps)")
    pcap = tmp_path_factory.mktemp("tsd") / "lo.pcap"
    script = SCRIPT.format(pcap=pcap, port=PORT, python=shutil.which("python3"),
                           transfer=TRANSFER.format(port=PORT))
    # a network namespace of its own: only this transfer on its loopback, gone when it ends
    subprocess.run(["unshare", "--net", "sh", "-c", script], check=True, timeout=60)
    return pcap


def _tshark(pcap: Path) -> list[tuple[int, int, int]]:
    """(µs, relative tcp.ack, tcp.ack + calculated window) of the receiver's ACKs."""
    out = subprocess.run(["tshark", "-r", str(pcap), "-Y", f"tcp.srcport == {PORT} && "
                          "tcp.flags.ack == 1", "-T", "fields", "-e", "frame.time_epoch",
                          "-e", "tcp.ack", "-e", "tcp.window_size"],
                         capture_output=True, text=True, check=True).stdout
    rows = [line.split("\t") for line in out.splitlines() if line]
    return [(round(float(t) * 1e6), int(a), int(a) + int(w)) for t, a, w in rows]


def test_the_ack_and_window_lines_are_tsharks(capture: Path) -> None:
    [conn] = tcp_connections_of(ip_records(read_capture(capture)))
    sender = default_sender(conn)
    assert sender == conn.client and window_shift(conn, sender) == 10   # WS=1024 in its SYN
    ours = [(p.ts_us, p.ack, p.window_edge) for p in ack_line(conn, sender)]
    theirs = _tshark(capture)
    assert len(ours) == len(theirs) > 20
    assert ours == theirs
    # the window closed and opened again: the dashed line is not the ACK line moved up
    assert any(edge == ack for _, ack, edge in ours[2:])
    assert any(edge - ack > 50_000 for _, ack, edge in ours[2:])


def test_the_diagram_draws_them_under_the_flows_names(mixture: Path, tmp_path: Path,  # noqa: F811
                                                       drawn_figures) -> None:
    view = load_view(mixture / "cells" / CELL / "rep-01")
    out = plot_time_sequence(view, tmp_path / "tsd.png", "t")
    (ax,) = drawn_figures[out.name].axes
    lines = {line.get_gid(): line for line in ax.get_lines() if line.get_gid()}
    # three bulk transfers of the fixed host, each its own flow, named so in the legend
    assert [view.label(i) for i in (1, 2, 3)] == ["1: bulkA, fixed → mobile",
                                                  "2: bulkB, fixed → mobile",
                                                  "3: bulkC, fixed → mobile"]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert [view.label(i) for i in (1, 2, 3)] == [t for t in legend if t[0].isdigit()]
    assert "the receiver's ACK (solid, the connection's colour)" in legend
    for i, mc in enumerate(view.connections, start=1):
        acks = ack_line(mc.conn, mc.metrics.sender)
        assert list(lines[f"{i}:ack"].get_ydata()) == [a.ack for a in acks]
        assert list(lines[f"{i}:window"].get_ydata()) == [a.window_edge for a in acks]
    # the 64 KiB window above a few kB of data: drawn to the data's scale, and said
    assert ax.get_ylim()[1] < 10_000
    assert "The window line runs above the top" in drawn_figures[out.name].texts[0].get_text()
    # the fixture's SYNs carry no window scale: the window is unscaled
    assert window_shift(view.connections[0].conn, view.connections[0].metrics.sender) == 0
