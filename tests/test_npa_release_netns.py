"""squall-npa holding SP DATA until its release time (emulator/PROTOCOL.md, "Shared clock";
npa/README.md, "Data path"), in a namespace of lane 114 against the SP peer of tests/npa_peer.py.
"""
from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from testbed import netns
from testbed.link import wire
from testbed.paths import bin_dir

from npa_peer import SPPeer, ipv4_udp_packet
from test_npa_netns import NPA, udp_receiver

pytestmark = pytest.mark.netns

NS = "sq114-mobile"
SP_ADDR, SP_PORT = "198.19.138.1", 5300
OWN, PEER = "198.19.114.2", "198.19.114.1"
FIXED_NET = "198.18.114.0/24"
TOKEN = 0x5EED_0114_CAFE_F00D
MS = 1_000_000


@pytest.fixture
def npa_in_ns(tmp_path: Path) -> Iterator:
    """Starts the mobile NPA in NS (created here, deleted with everything in it afterwards)."""
    netns.delete(NS)   # a leftover of a crashed run
    netns.create(NS)
    started: list[NPA] = []
    try:
        netns.run_in(NS, ["ip", "addr", "add", f"{SP_ADDR}/32", "dev", "lo"])

        def start() -> NPA:
            argv = [str(bin_dir() / "squall-npa"), "--role", "mobile", "--emulator", f"{SP_ADDR}:{SP_PORT}",
                    "--token", f"{TOKEN:016x}", "--address", f"{OWN}/32", "--peer", PEER, "--route", FIXED_NET]
            out, err = tmp_path / "npa.stdout", tmp_path / "npa.stderr"
            with open(out, "wb") as o, open(err, "wb") as e:
                proc = netns.popen_in(NS, argv, stdin=subprocess.DEVNULL, stdout=o, stderr=e)
            started.append(NPA(proc, out, err))
            started[-1].ready_line()
            return started[-1]

        yield start
    finally:
        for npa in started:
            if npa.proc.poll() is None:
                npa.proc.kill()
                npa.proc.wait()
        netns.delete(NS)


def receiver(port: int) -> socket.socket:
    return udp_receiver(port, NS, OWN)


def now_ns() -> int:
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def send_with_release(sp: SPPeer, release_ns: int, text: bytes) -> None:
    packet = ipv4_udp_packet("198.18.114.5", OWN, 9000, 7000, text)
    sp.send(wire.MsgType.DATA, release_ns.to_bytes(wire.STAMP_LEN, "big") + packet, flags=wire.FLAG_CLOCK)


def test_a_packet_reaches_the_tun_at_its_release_time_not_before(npa_in_ns):
    with SPPeer(NS, SP_ADDR, SP_PORT, TOKEN, welcome_flags=wire.FLAG_CLOCK) as sp, receiver(7000) as rx:
        npa = npa_in_ns()
        release = now_ns() + 40 * MS
        send_with_release(sp, release, b"held")
        send_with_release(sp, release + 10 * MS, b"held longer")
        assert rx.recvfrom(2048)[0] == b"held"
        first = now_ns()
        assert rx.recvfrom(2048)[0] == b"held longer"
        second = now_ns()
        send_with_release(sp, now_ns() - 5 * MS, b"already due")   # written at once
        assert rx.recvfrom(2048)[0] == b"already due"
        assert npa.stop() == 0
    assert release <= first < release + 30 * MS
    assert release + 10 * MS <= second < release + 40 * MS
    c = npa.counters()
    assert (c["release_held"], c["release_full"], c["release_flushed"], c["release_late_n"]) == (3, 0, 0, 3)
    assert c["release_late_max_us"] >= 5000                        # the one already past when it came
    assert (c["sp_rx"], c["tun_tx"], c["rejected"]) == (3, 3, 0)


def test_what_is_held_is_written_when_the_emulator_says_bye(npa_in_ns):
    with SPPeer(NS, SP_ADDR, SP_PORT, TOKEN, welcome_flags=wire.FLAG_CLOCK) as sp, receiver(7000) as rx:
        npa = npa_in_ns()
        send_with_release(sp, now_ns() + 60_000 * MS, b"a minute away")
        time.sleep(0.2)
        sp.send(wire.MsgType.BYE)
        assert npa.proc.wait(10) == 0
        assert rx.recvfrom(2048)[0] == b"a minute away"
    c = npa.counters()
    assert (c["release_held"], c["release_flushed"], c["release_late_n"], c["tun_tx"]) == (1, 1, 0, 1)


def test_a_release_time_without_the_shared_clock_is_refused(npa_in_ns):
    with SPPeer(NS, SP_ADDR, SP_PORT, TOKEN) as sp:
        npa = npa_in_ns()
        send_with_release(sp, now_ns(), b"no clock agreed")
        time.sleep(0.2)
        assert npa.stop() == 0
    c = npa.counters()
    assert (c["rejected_no_clock"], c["tun_tx"], c["release_held"]) == (1, 0, 0)
