"""squall-naive-relay (the benchmark's TUN <-> TUN reference) between two namespaces of
lane 11: a UDP datagram crosses it both ways, and both TUNs are gone after SIGTERM."""
from __future__ import annotations

import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from testbed import netns
from testbed.paths import bin_dir

pytestmark = pytest.mark.netns

A, B = "sq11-emu", "sq11-mobile"
ADDR_A, ADDR_B = "198.19.11.1", "198.19.11.2"


@pytest.fixture
def namespaces() -> Iterator[None]:
    for ns in (A, B):
        netns.delete(ns)
        netns.create(ns)
    try:
        yield
    finally:
        for ns in (A, B):
            netns.delete(ns)


def wait_ready(proc: subprocess.Popen, stdout: Path, stderr: Path) -> str:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if stdout.read_text():
            return stdout.read_text().splitlines()[0]
        assert proc.poll() is None, f"exited with {proc.returncode}: {stderr.read_text()}"
        time.sleep(0.02)
    raise AssertionError(f"no ready line: {stderr.read_text()}")


def test_packets_cross_the_naive_relay_both_ways(namespaces, tmp_path):
    out, err = tmp_path / "relay.stdout", tmp_path / "relay.stderr"
    argv = [str(bin_dir() / "squall-naive-relay"), "--mtu", "1400",
            "--netns-a", A, "--address-a", f"{ADDR_A}/32", "--peer-a", ADDR_B,
            "--route-a", "198.18.111.0/24",
            "--netns-b", B, "--address-b", f"{ADDR_B}/32", "--peer-b", ADDR_A,
            "--route-b", "198.18.11.0/24", "via", ADDR_A]
    with open(out, "wb") as o, open(err, "wb") as e:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=o, stderr=e)
    try:
        assert wait_ready(proc, out, err) == "ready wl0 mtu 1400"
        routes_b = netns.run_in(B, ["ip", "route", "show", "198.18.11.0/24"]).stdout
        assert "via 198.19.11.1 dev wl0" in routes_b
        with netns.socket_in(A, socket.AF_INET, socket.SOCK_DGRAM) as sa, \
                netns.socket_in(B, socket.AF_INET, socket.SOCK_DGRAM) as sb:
            sa.bind((ADDR_A, 4000))
            sb.bind((ADDR_B, 4001))
            sa.settimeout(2)
            sb.settimeout(2)
            sa.sendto(b"x" * 1372, (ADDR_B, 4001))
            assert sb.recvfrom(2000) == (b"x" * 1372, (ADDR_A, 4000))
            sb.sendto(b"back", (ADDR_A, 4000))
            assert sa.recvfrom(2000) == (b"back", (ADDR_B, 4001))
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    for ns in (A, B):
        assert netns.run_in(ns, ["ip", "link", "show", "wl0"], check=False).returncode != 0
    counters = err.read_text()
    assert f"{A}->{B} packets=1 bytes=1400" in counters and f"{B}->{A} packets=1 bytes=32" in counters


def test_unknown_namespace_is_reported(tmp_path):
    if not Path("/var/run/netns").exists() and not Path("/run/netns").exists():
        pytest.skip("no /var/run/netns on this machine")
    proc = subprocess.run([str(bin_dir() / "squall-naive-relay"), "--netns-a", "sq19-none",
                           "--address-a", "198.19.19.1/32", "--netns-b", "sq19-none2",
                           "--address-b", "198.19.19.2/32"], capture_output=True, text=True, timeout=10)
    assert proc.returncode == 1
    assert "cannot enter network namespace sq19-none" in proc.stderr
