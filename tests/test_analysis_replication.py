"""A whole replication directory: each connection measured in its sender's capture, each
UDP flow in its receiver's, joined with the emulator log; and the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from analysis.metrics.per_connection import analyse_replication
from test_analysis_support import FIXED, MOBILE, START_REALTIME_US, ScriptedLink, tcp, udp_datagram

MS = 1000


def upload(link: ScriptedLink) -> None:
    """The mobile host sends 400 bytes to the fixed host; its data segment is hit by
    errors until dropped, then resent after a timeout."""
    def m(t: int, seq: int, ack: int, flags: str, payload: int = 0, **kw: object) -> None:
        link.send(t, tcp(MOBILE, FIXED, 42000, 5002, seq, ack, flags, payload), **kw)  # type: ignore[arg-type]

    def f(t: int, seq: int, ack: int, flags: str) -> None:
        link.send(t, tcp(FIXED, MOBILE, 5002, 42000, seq, ack, flags))

    m(0, 10, 0, "S")
    f(100 * MS, 20, 11, "SA")
    m(200 * MS, 11, 21, "A")
    m(200 * MS, 11, 21, "PA", 400, fate="drop_err", hits=2)
    m(1200 * MS, 11, 21, "PA", 400)
    f(1300 * MS, 21, 411, "A")
    m(1400 * MS, 411, 21, "FA")
    f(1500 * MS, 21, 412, "FA")
    m(1600 * MS, 412, 22, "A")


def download(link: ScriptedLink) -> None:
    def f(t: int, seq: int, ack: int, flags: str, payload: int = 0, **kw: object) -> None:
        link.send(t, tcp(FIXED, MOBILE, 40000, 5001, seq, ack, flags, payload), **kw)  # type: ignore[arg-type]

    def m(t: int, seq: int, ack: int, flags: str, **kw: object) -> None:
        link.send(t, tcp(MOBILE, FIXED, 5001, 40000, seq, ack, flags), **kw)  # type: ignore[arg-type]

    f(0, 100, 0, "S")
    m(100 * MS, 900, 101, "SA")
    f(200 * MS, 101, 901, "A")
    f(200 * MS, 101, 901, "PA", 1000, fate="drop_sbuf")
    f(1200 * MS, 101, 901, "PA", 1000)
    m(1300 * MS, 901, 1101, "A")
    m(1301 * MS, 901, 1101, "A", fate="drop_err", hits=1)  # a lost duplicate ACK
    f(1400 * MS, 1101, 901, "FA")
    m(1500 * MS, 901, 1102, "FA")
    f(1600 * MS, 1102, 902, "A")


def scripted_replication(directory: Path) -> None:
    link = ScriptedLink()
    upload(link)
    download(link)
    for seq in range(3):
        link.send(seq * 20 * MS, udp_datagram(seq, START_REALTIME_US + seq * 20 * MS, tos=0xb8),
                  fate="drop_router" if seq == 1 else "out")
    link.write(directory)


def test_each_connection_is_measured_at_its_sender(tmp_path: Path) -> None:
    scripted_replication(tmp_path)
    r = analyse_replication(tmp_path)
    assert not r.log_cut_short and r.warnings == []
    by_sender = {m.sender: (side, m) for side, m in r.tcp}
    assert set(by_sender) == {(MOBILE, 42000), (FIXED, 40000)}

    side, up = by_sender[(MOBILE, 42000)]
    assert side == "mobile"
    assert (up.bytes, up.elapsed_us, up.error_drops, up.congestion_drops) == (400, 1600 * MS,
                                                                              1, 0)
    assert up.rto_events == 1 and up.spurious_rtos == 0

    side, down = by_sender[(FIXED, 40000)]
    assert side == "fixed"
    assert (down.bytes, down.elapsed_us, down.error_drops, down.congestion_drops) == (
        1000, 1600 * MS, 0, 1)
    assert down.reverse_fates == {"out": 3, "drop_err": 1}
    assert up.reverse_fates == {"out": 3}

    [(side, udp)] = r.udp
    assert side == "mobile"
    assert (udp.sent, udp.received, udp.lost) == (3, 2, 1)
    assert udp.fates == {"out": 2, "drop_router": 1}
    assert udp.dscp == 46  # EF


def test_command_line_prints_rows_and_reports_bad_input(tmp_path: Path) -> None:
    scripted_replication(tmp_path)
    out = subprocess.run([sys.executable, "-m", "analysis", str(tmp_path)],
                         capture_output=True, text=True, check=True)
    doc = json.loads(out.stdout)
    assert sorted(row["sender"] for row in doc["tcp"]) == [f"{FIXED}:40000",
                                                            f"{MOBILE}:42000"]
    assert doc["udp"][0]["fate_drop_router"] == 1

    (tmp_path / "emulator.log").write_text("# squall-emulator event log\n# format 7\n")
    bad = subprocess.run([sys.executable, "-m", "analysis", str(tmp_path)],
                         capture_output=True, text=True)
    assert bad.returncode == 1
    assert "emulator.log:2: log format '7' is not supported" in bad.stderr
