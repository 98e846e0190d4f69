"""squall-npa in a network namespace against the SP peer of tests/npa_peer.py.

Lane 10: namespace sq10-mobile holds the NPA, its TUN wl0 and the SP peer's socket
(on the carrier address 198.19.138.1, put on lo). Real packets go through the TUN:
UDP sockets in the namespace send and receive them, an AF_PACKET socket on wl0
captures the exact bytes the kernel routed into the device.
"""
from __future__ import annotations

import json
import signal
import socket
import struct
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from testbed import netns

from testbed.link import wire
from testbed.paths import bin_dir

from npa_peer import SPPeer, ipv4_udp_packet

pytestmark = pytest.mark.netns

NS = "sq10-mobile"
SP_ADDR, SP_PORT = "198.19.138.1", 5300
OWN, PEER = "198.19.10.2", "198.19.10.1"
FIXED_NET = "198.18.10.0/24"
FAR_NET = "198.18.11.0/24"
TOKEN = 0x5EED_0010_CAFE_F00D
TOKEN_HEX = f"{TOKEN:016x}"
ETH_P_ALL = 0x0003
IP_FREEBIND = 15   # linux/in.h; not in Python 3.11's socket module


@pytest.fixture
def ns() -> Iterator[str]:
    netns.delete(NS)   # a leftover of a crashed run
    netns.create(NS)
    try:
        netns.run_in(NS, ["ip", "addr", "add", f"{SP_ADDR}/32", "dev", "lo"])
        yield NS
    finally:
        netns.delete(NS)


@dataclass
class NPA:
    proc: subprocess.Popen
    stdout_path: Path
    stderr_path: Path

    def ready_line(self, timeout: float = 10.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            lines = self.stdout_path.read_text().splitlines()
            if lines:
                return lines[0]
            if self.proc.poll() is not None:
                raise AssertionError(f"squall-npa exited with {self.proc.returncode} before "
                                     f"'ready': {self.stderr()}")
            time.sleep(0.02)
        raise AssertionError(f"squall-npa printed no 'ready' line within {timeout} s: {self.stderr()}")

    def stderr(self) -> str:
        return self.stderr_path.read_text()

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(10)

    def counters(self) -> dict[str, int]:
        line = next(l for l in self.stderr().splitlines() if "counters" in l)
        return {k: int(v) for k, v in (w.split("=") for w in line.split() if "=" in w)}


@pytest.fixture
def start_npa(ns: str, tmp_path: Path) -> Iterator:
    started: list[NPA] = []

    def start(*extra: str, role: str = "mobile", token: str = TOKEN_HEX) -> NPA:
        argv = [str(bin_dir() / "squall-npa"), "--role", role, "--emulator", f"{SP_ADDR}:{SP_PORT}",
                "--token", token, "--address", f"{OWN}/32", "--peer", PEER, *extra]
        n = len(started)
        out, err = tmp_path / f"npa{n}.stdout", tmp_path / f"npa{n}.stderr"
        with open(out, "wb") as o, open(err, "wb") as e:
            proc = netns.popen_in(ns, argv, stdin=subprocess.DEVNULL, stdout=o, stderr=e)
        started.append(NPA(proc, out, err))
        return started[-1]

    yield start
    for npa in started:
        if npa.proc.poll() is None:
            npa.proc.kill()
            npa.proc.wait()


def ip_json(*args: str) -> list[dict]:
    return json.loads(netns.run_in(NS, ["ip", "-j", *args]).stdout or "[]")


def wl0_routes() -> list[dict]:
    return [r for r in ip_json("route", "show") if r.get("dev") == "wl0"]


def test_tun_is_configured_and_removed_on_sigterm(ns, start_npa):
    with SPPeer(ns, SP_ADDR, SP_PORT, TOKEN, link_mtu=1400) as sp:
        npa = start_npa("--route", FIXED_NET, "--route", FAR_NET, "via", PEER)
        assert npa.ready_line() == "ready wl0 mtu 1400"
        hello = sp.wait_for(wire.MsgType.HELLO).message
        assert (hello.role, hello.token) == (wire.Role.MOBILE, TOKEN)
        # the clock offer (emulator/PROTOCOL.md, "Shared clock"): CLOCK_MONOTONIC ns, this kernel's boot id
        sent_ns = int.from_bytes(hello.payload[:8], "big")
        assert hello.payload[8:] == Path("/proc/sys/kernel/random/boot_id").read_text().strip().encode()
        assert 0 <= time.clock_gettime_ns(time.CLOCK_MONOTONIC) - sent_ns < 10 * 10**9

        (link,) = ip_json("link", "show", "wl0")
        assert link["mtu"] == 1400
        assert "UP" in link["flags"] and "POINTOPOINT" in link["flags"]
        assert link["link_type"] == "none"          # a TUN without packet information
        (addr,) = ip_json("addr", "show", "wl0")[0]["addr_info"]
        assert (addr["local"], addr["address"], addr["prefixlen"]) == (OWN, PEER, 32)
        routes = {r["dst"]: r.get("gateway") for r in wl0_routes()}
        assert routes == {PEER: None, FIXED_NET: None, FAR_NET: PEER}

        assert npa.stop() == 0
        sp.wait_for(wire.MsgType.BYE)
    assert netns.run_in(NS, ["ip", "link", "show", "wl0"], check=False).returncode != 0
    assert not [r for r in ip_json("route", "show") if r["dst"] in (FIXED_NET, FAR_NET)]
    assert "counters" in npa.stderr()


def test_mtu_option_overrides_the_link_mtu(ns, start_npa):
    with SPPeer(ns, SP_ADDR, SP_PORT, TOKEN, link_mtu=1500):
        npa = start_npa("--mtu", "1280", "--dev", "wl7")
        assert npa.ready_line() == "ready wl7 mtu 1280"
        assert ip_json("link", "show", "wl7")[0]["mtu"] == 1280
        assert npa.stop() == 0


def capture_socket() -> socket.socket:
    s = netns.socket_in(NS, socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind(("wl0", ETH_P_ALL))
    s.settimeout(2.0)
    return s


def test_packet_into_the_tun_reaches_the_sp_as_data_with_the_exact_bytes(ns, start_npa):
    with SPPeer(ns, SP_ADDR, SP_PORT, TOKEN) as sp:
        npa = start_npa("--route", FIXED_NET, role="router")
        npa.ready_line()
        with capture_socket() as cap, netns.socket_in(NS, socket.AF_INET, socket.SOCK_DGRAM) as app:
            payload = bytes(range(256)) * 4
            app.sendto(payload, ("198.18.10.5", 9000))
            captured = cap.recv(65535)
            data = sp.wait_for(wire.MsgType.DATA)
        assert data.message.role == wire.Role.ROUTER and data.message.token == TOKEN
        assert data.source == sp.npa_address
        packet = data.message.payload
        assert packet == captured
        assert len(packet) == 20 + 8 + len(payload)
        assert socket.inet_ntoa(packet[12:16]) == OWN and socket.inet_ntoa(packet[16:20]) == "198.18.10.5"
        assert struct.unpack("!H", packet[22:24])[0] == 9000 and packet[28:] == payload
        assert npa.stop() == 0
    c = npa.counters()
    assert c["tun_rx"] >= 1 and c["sp_tx"] == c["tun_rx"] and c["sp_tx_bytes"] >= len(packet)


def test_with_the_shared_clock_data_carries_the_tun_read_time(ns, start_npa):
    # The SP agrees to the clock offer (emulator/PROTOCOL.md, "Shared clock"): each DATA has the
    # flag and starts with the CLOCK_MONOTONIC ns at which the NPA read the packet.
    with SPPeer(ns, SP_ADDR, SP_PORT, TOKEN, welcome_flags=wire.FLAG_CLOCK) as sp:
        npa = start_npa("--route", FIXED_NET, role="router")
        npa.ready_line()
        assert sp.wait_for(wire.MsgType.HELLO).message.flags == wire.FLAG_CLOCK
        with capture_socket() as cap, netns.socket_in(NS, socket.AF_INET, socket.SOCK_DGRAM) as app:
            before = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
            app.sendto(b"stamped", ("198.18.10.5", 9000))
            captured = cap.recv(65535)
            data = sp.wait_for(wire.MsgType.DATA).message
            after = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        assert data.flags == wire.FLAG_CLOCK
        stamp = int.from_bytes(data.payload[:wire.STAMP_LEN], "big")
        assert before <= stamp <= after
        assert data.payload[wire.STAMP_LEN:] == captured
        assert npa.stop() == 0
    c = npa.counters()
    assert c["sp_tx"] == c["tun_rx"] and c["sp_tx_bytes"] == c["tun_rx_bytes"]   # the stamp is not counted


def udp_receiver(port: int, ns: str = NS, own: str = OWN) -> socket.socket:
    s = netns.socket_in(ns, socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_IP, IP_FREEBIND, 1)   # wl0 and its address come later
    s.bind((own, port))
    s.settimeout(2.0)
    return s


def test_data_from_the_sp_is_delivered_through_the_tun(ns, start_npa):
    with SPPeer(ns, SP_ADDR, SP_PORT, TOKEN) as sp, udp_receiver(7000) as rx:
        npa = start_npa("--route", FIXED_NET)
        npa.ready_line()
        with capture_socket() as cap:
            packet = ipv4_udp_packet("198.18.10.5", OWN, 9000, 7000, b"down the link")
            sp.send(wire.MsgType.DATA, packet)
            assert rx.recvfrom(2048) == (b"down the link", ("198.18.10.5", 9000))
            assert cap.recv(65535) == packet
        assert npa.stop() == 0
    c = npa.counters()
    assert (c["sp_rx"], c["tun_tx"], c["tun_tx_bytes"], c["rejected"]) == (1, 1, len(packet), 0)


def test_malformed_wrong_token_and_wrong_source_datagrams_are_not_written(ns, start_npa):
    with SPPeer(ns, SP_ADDR, SP_PORT, TOKEN) as sp, udp_receiver(7001) as rx:
        npa = start_npa("--route", FIXED_NET)
        npa.ready_line()
        bad = ipv4_udp_packet("198.18.10.5", OWN, 9000, 7001, b"must not arrive")
        sp.send(wire.MsgType.DATA, bad, token=TOKEN ^ 1)                          # wrong token
        sp.send(wire.MsgType.DATA, bad, role=wire.Role.MOBILE)                    # not from the SP role
        sp.send_raw(wire.encode(wire.MsgType.DATA, wire.Role.SP, TOKEN, 1, bad, magic=0x12345678))
        sp.send_raw(wire.encode(wire.MsgType.DATA, wire.Role.SP, TOKEN, 1, bad, version=9))
        sp.send_raw(wire.encode(wire.MsgType.DATA, wire.Role.SP, TOKEN, 1, bad)[:30])  # truncated
        sp.send_raw(wire.encode(wire.MsgType.DATA, wire.Role.SP, TOKEN, 1, bad, length=10))
        sp.send_raw(b"\x00" * 7)
        sp.send(wire.MsgType.DATA, b"\x11" * 40)                                   # not IP
        sp.send(wire.MsgType.HELLO)                                                # SP never sends it
        with netns.socket_in(NS, socket.AF_INET, socket.SOCK_DGRAM) as impostor:      # wrong source
            impostor.bind((SP_ADDR, SP_PORT + 1))
            impostor.sendto(wire.encode(wire.MsgType.DATA, wire.Role.SP, TOKEN, 1, bad), sp.npa_address)
        good = ipv4_udp_packet("198.18.10.5", OWN, 9000, 7001, b"the only one")
        sp.send(wire.MsgType.DATA, good)
        # Datagrams from one socket arrive in order: the good one comes after the bad ones.
        assert rx.recv(2048) == b"the only one"
        rx.settimeout(0.3)
        with pytest.raises(TimeoutError):
            rx.recv(2048)
        assert npa.stop() == 0
    c = npa.counters()
    assert c["tun_tx"] == 1
    expected = {"wrong_token": 1, "wrong_sender_role": 1, "bad_magic": 1, "bad_version": 1,
                "truncated": 2, "bad_length": 1, "not_ip": 1, "unexpected_type": 1, "wrong_source": 1}
    assert {k: c[f"rejected_{k}"] for k in expected} == expected
    assert c["rejected"] == sum(expected.values())


def test_unreachable_emulator_fails_with_exit_1_after_connect_timeout(ns, start_npa):
    npa = start_npa("--connect-timeout", "600ms", "--route", FIXED_NET)
    assert npa.proc.wait(10) == 1
    assert (f"emulator at {SP_ADDR}:{SP_PORT} did not answer within 600 ms: is squall-emulator "
            "running, and is the token right?") in npa.stderr()
    assert npa.stdout_path.read_text() == ""
    assert netns.run_in(NS, ["ip", "link", "show", "wl0"], check=False).returncode != 0


def test_wrong_token_is_never_welcomed(ns, start_npa):
    with SPPeer(ns, SP_ADDR, SP_PORT, TOKEN) as sp:
        npa = start_npa("--connect-timeout", "1s", token=f"{TOKEN ^ 0xFF:016x}")
        assert npa.proc.wait(10) == 1
        assert sp.wait_for(wire.MsgType.HELLO).message.token == TOKEN ^ 0xFF
    assert "did not answer within 1 s" in npa.stderr()


def test_silent_emulator_is_lost_after_peer_timeout(ns, start_npa):
    with SPPeer(ns, SP_ADDR, SP_PORT, TOKEN, answer_keepalives=False) as sp:
        npa = start_npa("--keepalive", "100ms", "--peer-timeout", "700ms", "--route", FIXED_NET)
        npa.ready_line()
        assert npa.proc.wait(10) == 1
        sp.wait_for(wire.MsgType.KEEPALIVE)
    assert (f"lost the emulator at {SP_ADDR}:{SP_PORT}: nothing received for 700 ms "
            "(--peer-timeout)") in npa.stderr()
    assert netns.run_in(NS, ["ip", "link", "show", "wl0"], check=False).returncode != 0
    assert not [r for r in ip_json("route", "show") if r["dst"] == FIXED_NET]


def test_answered_keepalives_keep_the_npa_up(ns, start_npa):
    with SPPeer(ns, SP_ADDR, SP_PORT, TOKEN) as sp:
        npa = start_npa("--keepalive", "100ms", "--peer-timeout", "1s")
        npa.ready_line()
        time.sleep(2.5)
        assert npa.proc.poll() is None, npa.stderr()
        assert npa.stop() == 0
        assert sp.wait_for(wire.MsgType.KEEPALIVE).message.role == wire.Role.MOBILE
    c = npa.counters()
    assert c["keepalives_sent"] >= 5 and c["keepalives_received"] >= 5


def test_bye_from_the_sp_ends_the_npa_cleanly(ns, start_npa):
    with SPPeer(ns, SP_ADDR, SP_PORT, TOKEN) as sp:
        npa = start_npa("--route", FIXED_NET)
        npa.ready_line()
        sp.send(wire.MsgType.BYE)
        assert npa.proc.wait(10) == 0
    assert "said BYE" in npa.stderr()
    assert netns.run_in(NS, ["ip", "link", "show", "wl0"], check=False).returncode != 0


def test_existing_device_is_refused(ns, start_npa):
    netns.run_in(NS, ["ip", "link", "add", "wl0", "type", "veth", "peer", "name", "wl0-peer"])
    npa = start_npa()
    assert npa.proc.wait(10) == 1
    assert "a device named wl0 already exists" in npa.stderr()
    assert netns.run_in(NS, ["ip", "link", "show", "wl0"], check=False).returncode == 0


def test_ipv6_address_and_route_and_packet(ns, tmp_path):
    for key in ("all", "default"):
        netns.run_in(NS, ["sysctl", "-q", "-w", f"net.ipv6.conf.{key}.disable_ipv6=0"])
    argv = [str(bin_dir() / "squall-npa"), "--role", "mobile", "--emulator", f"{SP_ADDR}:{SP_PORT}",
            "--token", TOKEN_HEX, "--address", "2001:db8:10::2/64", "--route", "2001:db8:11::/48"]
    out, err = tmp_path / "v6.stdout", tmp_path / "v6.stderr"
    with SPPeer(ns, SP_ADDR, SP_PORT, TOKEN) as sp:
        with open(out, "wb") as o, open(err, "wb") as e:
            npa = NPA(netns.popen_in(ns, argv, stdin=subprocess.DEVNULL, stdout=o, stderr=e), out, err)
        try:
            assert npa.ready_line() == "ready wl0 mtu 1500"
            infos = ip_json("-6", "addr", "show", "wl0")[0]["addr_info"]
            global_addrs = [(a["local"], a["prefixlen"]) for a in infos if a.get("scope") == "global"]
            assert global_addrs == [("2001:db8:10::2", 64)]
            routes = [r["dst"] for r in ip_json("-6", "route", "show", "dev", "wl0")]
            assert "2001:db8:11::/48" in routes and "2001:db8:10::/64" in routes
            with netns.socket_in(NS, socket.AF_INET6, socket.SOCK_DGRAM) as app:
                app.bind(("2001:db8:10::2", 0))
                app.sendto(b"over ipv6", ("2001:db8:11::5", 9000))
                while True:   # skip router/neighbour solicitations the kernel may send
                    packet = sp.wait_for(wire.MsgType.DATA).message.payload
                    if packet[6] == socket.IPPROTO_UDP:
                        break
            assert packet[0] >> 4 == 6
            assert socket.inet_ntop(socket.AF_INET6, packet[24:40]) == "2001:db8:11::5"
            assert packet[48:] == b"over ipv6"
            assert npa.stop() == 0
        finally:
            if npa.proc.poll() is None:
                npa.proc.kill()
                npa.proc.wait()
    assert netns.run_in(NS, ["ip", "link", "show", "wl0"], check=False).returncode != 0


def test_configuration_failure_is_reported_and_undone(ns, start_npa):
    with SPPeer(ns, SP_ADDR, SP_PORT, TOKEN) as sp:
        # The /24 of the peer address already gives 198.19.10.0/24 a route through wl0.
        npa = start_npa("--route", FIXED_NET, "--route", "198.19.10.0/24", "--peer", f"{PEER}/24")
        assert npa.proc.wait(10) == 1
        sp.wait_for(wire.MsgType.BYE)
    assert "cannot add route 198.19.10.0/24 dev wl0" in npa.stderr()
    assert npa.stdout_path.read_text() == ""
    assert netns.run_in(NS, ["ip", "link", "show", "wl0"], check=False).returncode != 0
    assert not [r for r in ip_json("route", "show") if r["dst"] == FIXED_NET]


@pytest.mark.parametrize("gso", [True, False], ids=["gso", "no-gso"])
def test_a_burst_arrives_as_one_data_message_per_packet_in_order(ns, start_npa, gso):
    count, size = 300, 1000
    with SPPeer(ns, SP_ADDR, SP_PORT, TOKEN) as sp:
        npa = start_npa("--route", FIXED_NET, *([] if gso else ["--no-gso"]), role="router")
        npa.ready_line()
        with netns.socket_in(NS, socket.AF_INET, socket.SOCK_DGRAM) as app:
            app.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
            for i in range(count):
                app.sendto(struct.pack("!I", i) * (size // 4), ("198.18.10.5", 9000))
        data = [sp.wait_for(wire.MsgType.DATA).message for _ in range(count)]
        assert npa.stop() == 0
    assert [struct.unpack("!I", m.payload[28:32])[0] for m in data] == list(range(count))
    assert all(len(m.payload) == 28 + size and m.payload[28:] == m.payload[28:32] * (size // 4) for m in data)
    seqs = [m.seq for m in data]
    assert seqs == list(range(seqs[0], seqs[0] + count))
    c = npa.counters()
    assert (c["tun_rx"], c["sp_tx"], c["sp_tx_errors"]) == (count, count, 0)
    assert "refuses UDP GSO" not in npa.stderr()


def test_a_gso_send_of_the_sp_is_cut_into_its_datagrams(ns, start_npa):
    # The emulator sends deliveries due together as one UDP GSO send; with UDP_GRO the NPA
    # receives it as one message and must deliver each datagram in it.
    sol_udp, udp_segment = 17, 103   # linux/udp.h; not in Python 3.11's socket module
    with SPPeer(ns, SP_ADDR, SP_PORT, TOKEN) as sp, udp_receiver(7002) as rx:
        npa = start_npa("--route", FIXED_NET)
        npa.ready_line()
        payloads = [b"gso %d " % i + b"x" * 200 for i in range(3)]
        datagrams = [wire.encode(wire.MsgType.DATA, wire.Role.SP, TOKEN, 100 + i,
                                 ipv4_udp_packet("198.18.10.5", OWN, 9000, 7002, p))
                     for i, p in enumerate(payloads)]
        assert len({len(d) for d in datagrams}) == 1
        sp.sock.sendmsg([b"".join(datagrams)],
                        [(sol_udp, udp_segment, struct.pack("=H", len(datagrams[0])))],
                        0, sp.npa_address)
        assert [rx.recvfrom(2048)[0] for _ in payloads] == payloads
        assert npa.stop() == 0
    c = npa.counters()
    assert (c["sp_rx"], c["tun_tx"], c["rejected"]) == (3, 3, 0)
