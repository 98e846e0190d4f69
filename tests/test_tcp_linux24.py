"""The `linux-2.4` TCP profile (scenarios/profiles/tcp.toml) against what the kernel does on the
wire: SYN retransmission times and a data retransmission's timeout read with tshark from a
capture, the kernel's own counters (/proc/net/netstat), and the BPF program's removal on every
path (bpftool). Each timing is also checked under a profile without it, so the test can fail."""
from __future__ import annotations

import statistics
from dataclasses import replace
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import require_programs, workload_lane
from testbed import netns, tcp_apply, tcp_bpf, tcp_profile
from testbed.lanes.capture import Capture
from testbed.lanes.hosts import NamespaceHost
from testbed.paths import bin_dir
from support_testnet import VethNet, veth_net

# The TCP profile tests' lane: this file and test_tcp_profile.py run one after the other.
LANE = workload_lane(2)
PORT = 5002
SERVER = ("import socket,sys\ns=socket.socket();s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n"
          "s.bind((sys.argv[1],int(sys.argv[2])));s.listen();print('listening',flush=True)\n"
          "c,_=s.accept()\nwhile c.recv(65536):pass\n")
# Connects, says so, sends two 100-byte segments when told (a line on stdin), closes after 2 s.
CLIENT = ("import socket,sys,time\nc=socket.create_connection((sys.argv[1],int(sys.argv[2])),timeout=30)\n"
          "c.setsockopt(socket.IPPROTO_TCP,socket.TCP_NODELAY,1);print('connected',flush=True)\n"
          "sys.stdin.readline();c.sendall(b'x'*100);c.sendall(b'y'*100);time.sleep(2);c.close()\n")


# Sends 40 pushed 100-byte segments 100 ms apart to whoever connects (the receiver only reads).
TRICKLE = ("import socket,sys,time\ns=socket.socket();s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n"
           "s.bind((sys.argv[1],int(sys.argv[2])));s.listen();print('listening',flush=True)\n"
           "c,_=s.accept();c.setsockopt(socket.IPPROTO_TCP,socket.TCP_NODELAY,1)\n"
           "for i in range(40):\n c.sendall(b'z'*100);time.sleep(0.1)\nc.close()\n")
# Reads once a second: a reader that has taken everything ACKs a small segment at once
# (tcp_cleanup_rbuf, 2.4's too), one that has not leaves it to the delayed-ACK timer.
READER = ("import socket,sys,time\nc=socket.create_connection((sys.argv[1],int(sys.argv[2])),timeout=30)\n"
          "while c.recv(65536):time.sleep(1)\n")


def hosts(net: VethNet, restorable: bool = False) -> list[tcp_apply.HostTcp]:
    return [tcp_apply.HostTcp(NamespaceHost("fixed", net.fixed_ns, net.fixed_addr), restorable=restorable),
            tcp_apply.HostTcp(NamespaceHost("mobile", net.mobile_ns, net.mobile_addr), restorable=restorable)]


def silence(ns: str, peer: str) -> None:
    """Everything the namespace sends to peer is lost (a blackhole route) until listen()."""
    netns.run_in(ns, ["ip", "route", "add", "blackhole", f"{peer}/32"])


def listen(ns: str, peer: str) -> None:
    netns.run_in(ns, ["ip", "route", "del", "blackhole", f"{peer}/32"])


def python_in(ns: str, script: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-c", script, *args],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def tshark_times(pcap: Path, display_filter: str) -> list[float]:
    out = subprocess.run(["tshark", "-r", str(pcap), "-Y", display_filter, "-T", "fields", "-e", "frame.time_epoch"],
                         check=True, capture_output=True, text=True).stdout
    return [float(line) for line in out.split()]


def retransmission_delay(pcap: Path, sender: str) -> float:
    """From the sender's last new data segment to its first retransmission (any data segment
    that starts below the highest sequence number sent: the kernel may collapse two into one)."""
    out = subprocess.run(["tshark", "-r", str(pcap), "-Y", f"ip.src == {sender} && tcp.len > 0", "-T", "fields",
                          "-e", "frame.time_epoch", "-e", "tcp.seq", "-e", "tcp.len"],
                         check=True, capture_output=True, text=True).stdout
    highest, last_new = 0, 0.0
    for line in out.splitlines():
        when, seq, length = float(line.split()[0]), *map(int, line.split()[1:])
        if seq < highest:
            return when - last_new
        highest, last_new = seq + length, when
    raise AssertionError(f"{pcap}: no retransmission by {sender}:\n{out}")


def ack_delays(pcap: Path, receiver: str) -> list[float]:
    """For each data segment the receiver got, the time until its next ACK that covers it."""
    out = subprocess.run(["tshark", "-r", str(pcap), "-Y", "tcp", "-T", "fields", "-e", "frame.time_epoch",
                          "-e", "ip.src", "-e", "tcp.seq", "-e", "tcp.len", "-e", "tcp.ack"],
                         check=True, capture_output=True, text=True).stdout
    waiting: list[tuple[float, int]] = []       # (arrival, end sequence number) not yet ACKed
    delays = []
    for line in out.splitlines():
        when, src, seq, length, ack = line.split("\t")
        if src != receiver and int(length) > 0:
            waiting.append((float(when), int(seq) + int(length)))
        elif src == receiver:
            delays += [float(when) - t for t, end in waiting if end <= int(ack)]
            waiting = [(t, end) for t, end in waiting if end > int(ack)]
    return delays


def tcp_ext(ns: str) -> dict[str, int]:
    """The namespace's TcpExt counters (/proc/net/netstat: a line of names, a line of values)."""
    lines = [line.split() for line in netns.run_in(ns, ["cat", "/proc/net/netstat"]).stdout.splitlines()]
    names, values = [pair for pair in zip(lines, lines[1:]) if pair[0][0] == "TcpExt:"][0]
    return dict(zip(names[1:], map(int, values[1:])))


def within(measured: list[float], gaps: list[float]) -> bool:
    """A timer of seconds may fire late by up to 1/8 of its length (the timer wheel's coarser
    levels since Linux 4.8; 2.4's timers were exact to its 10 ms jiffy)."""
    return len(measured) == len(gaps) and all(g - 0.02 <= m <= g * 1.125 + 0.05 for g, m in zip(gaps, measured))


def program_exists(program_id: int) -> bool:
    return subprocess.run(["bpftool", "prog", "show", "id", str(program_id)], capture_output=True).returncode == 0


def gone_within(program_id: int, seconds: float = 3.0) -> bool:
    deadline = time.monotonic() + seconds
    while program_exists(program_id):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


@pytest.mark.netns
@pytest.mark.parametrize("profile, gaps", [("linux-2.4", [3.0, 6.0]), ("baseline", [1.0, 2.0, 4.0])])
def test_a_dropped_syn_is_sent_again_after_the_profiles_initial_rto(tmp_path: Path, profile: str,
                                                                    gaps: list[float]) -> None:
    """The server's SYN-ACKs are lost for the first 5 s: the client's SYN times out as on Linux
    2.4 after 3 s, then 6 s (initial RTO 3 s, doubling); under the baseline after 1, 2, 4 s."""
    require_programs(tcp_bpf.LOADER)
    pcap = tmp_path / "syn.pcap"
    with veth_net(LANE) as net:
        settings = tcp_apply.apply(tcp_profile.load(profile), hosts(net))
        silence(net.mobile_ns, net.fixed_addr)
        server = python_in(net.mobile_ns, SERVER, net.mobile_addr, str(PORT))
        try:
            assert server.stdout and server.stdout.readline().strip() == "listening"
            with Capture(net.fixed_ns, "eth0", pcap, f"tcp port {PORT}"):
                client = python_in(net.fixed_ns, CLIENT, net.mobile_addr, str(PORT))
                time.sleep(5.0)
                listen(net.mobile_ns, net.fixed_addr)
                assert client.stdout and client.stdout.readline().strip() == "connected"
                client.communicate("\n", timeout=30)
        finally:
            server.kill()
    sent = tshark_times(pcap, "tcp.flags.syn == 1 && tcp.flags.ack == 0")
    measured = [b - a for a, b in zip(sent, sent[1:])]
    assert within(measured, gaps), measured
    bpf = settings["hosts"]["fixed"]["bpf"]
    assert (bpf and bpf["settings"]) == (tcp_profile.load(profile).bpf or None)


# A SYN from scapy at link level (no socket: nothing answers the SYN-ACK; the kernel's RST goes
# to the blackhole route).
RAW_SYN = ("import sys\nfrom scapy.all import Ether, IP, TCP, sendp\n"
           "sendp(Ether(dst=sys.argv[1])/IP(src=sys.argv[2],dst=sys.argv[3])/TCP(sport=40404,dport=int(sys.argv[4]),"
           "flags='S',seq=1000),iface='eth0',verbose=False)\n")


@pytest.mark.netns
@pytest.mark.parametrize("profile, gaps", [("linux-2.4", [3.0, 6.0]), ("baseline", [1.0, 2.0, 4.0])])
def test_an_unanswered_syn_ack_is_sent_again_after_the_profiles_initial_rto(tmp_path: Path, profile: str,
                                                                            gaps: list[float]) -> None:
    """The listener's request socket: its SYN-ACK, never ACKed, goes out again after 3 s, then
    6 s under linux-2.4 (2.4's TCP_TIMEOUT_INIT for the SYN-ACK too), after 1, 2, 4 s under
    the baseline. Watched for 10 s at the server."""
    require_programs(tcp_bpf.LOADER)
    pcap = tmp_path / "synack.pcap"
    with veth_net(LANE) as net:
        tcp_apply.apply(tcp_profile.load(profile), hosts(net))
        silence(net.fixed_ns, net.mobile_addr)
        mac = netns.run_in(net.mobile_ns, ["cat", "/sys/class/net/eth0/address"]).stdout.strip()
        server = python_in(net.mobile_ns, SERVER, net.mobile_addr, str(PORT))
        try:
            assert server.stdout and server.stdout.readline().strip() == "listening"
            with Capture(net.mobile_ns, "eth0", pcap, f"tcp port {PORT}"):
                netns.run_in(net.fixed_ns, [sys.executable, "-c", RAW_SYN, mac, net.fixed_addr, net.mobile_addr,
                                            str(PORT)])
                time.sleep(10.0)
        finally:
            server.kill()
    sent = tshark_times(pcap, "tcp.flags.syn == 1 && tcp.flags.ack == 1")
    measured = [b - a for a, b in zip(sent, sent[1:])]
    assert within(measured, gaps), measured


@pytest.mark.netns
@pytest.mark.parametrize("profile, probes", [("linux-2.4", False), ("linux-default", True)])
def test_a_lone_lost_segment_waits_for_the_minimum_rto_without_a_loss_probe(tmp_path: Path, profile: str,
                                                                           probes: bool) -> None:
    """The ACKs of the last two segments of an established connection are lost (no later
    segment, so no duplicate ACK): 2.4 sent the first again when the RTO of at least 200 ms
    (TCP_RTO_MIN) expired; today's default sends a tail loss probe after two RTTs first."""
    pcap = tmp_path / "rto.pcap"
    with veth_net(LANE) as net:
        tcp_apply.apply(tcp_profile.load(profile), hosts(net))
        server = python_in(net.mobile_ns, SERVER, net.mobile_addr, str(PORT))
        try:
            assert server.stdout and server.stdout.readline().strip() == "listening"
            with Capture(net.fixed_ns, "eth0", pcap, f"tcp port {PORT}"):
                client = python_in(net.fixed_ns, CLIENT, net.mobile_addr, str(PORT))
                assert client.stdout and client.stdout.readline().strip() == "connected"
                before = tcp_ext(net.fixed_ns)
                silence(net.mobile_ns, net.fixed_addr)
                assert client.stdin
                client.stdin.write("\n")
                client.stdin.flush()
                time.sleep(0.1)
                listen(net.mobile_ns, net.fixed_addr)
                client.communicate(timeout=30)
                after = tcp_ext(net.fixed_ns)
        finally:
            server.kill()
    first_retransmission = retransmission_delay(pcap, net.fixed_addr)
    loss_probes = after["TCPLossProbes"] - before["TCPLossProbes"]
    if probes:
        assert first_retransmission < 0.1 and loss_probes >= 1
    else:
        assert 0.2 <= first_retransmission < 0.3
        assert loss_probes == 0 and after["TCPTimeouts"] - before["TCPTimeouts"] >= 1


@pytest.mark.netns
@pytest.mark.parametrize("delack_max_ms, expected_s", [(200, 0.040), (20, 0.020)])
def test_the_delayed_ack_timer_is_capped_by_the_profile(tmp_path: Path, delack_max_ms: int,
                                                         expected_s: float) -> None:
    """Small pushed segments 100 ms apart, after the quick ACKs of the connection's start: the
    receiver ACKs each when its delayed-ACK timer fires, 40 ms (TCP_ATO_MIN, 2.4's and today's)
    when the cap is linux-2.4's 200 ms, which is never reached on this short path, and at the
    cap when a profile sets it below that (20 ms: the program's setting takes effect)."""
    require_programs(tcp_bpf.LOADER)
    profile = tcp_profile.load("linux-2.4")
    profile = replace(profile, bpf={**profile.bpf, "delack_max_ms": delack_max_ms})
    pcap = tmp_path / "acks.pcap"
    with veth_net(LANE) as net:
        tcp_apply.apply(profile, hosts(net))
        server = python_in(net.fixed_ns, TRICKLE, net.fixed_addr, str(PORT))
        try:
            assert server.stdout and server.stdout.readline().strip() == "listening"
            with Capture(net.mobile_ns, "eth0", pcap, f"tcp port {PORT}"):
                reader = python_in(net.mobile_ns, READER, net.fixed_addr, str(PORT))
                reader.communicate(timeout=30)
        finally:
            server.kill()
    delays = ack_delays(pcap, net.mobile_addr)[-20:]          # after the quick ACKs
    assert len(delays) == 20 and abs(statistics.median(delays) - expected_s) < 0.008, delays


@pytest.mark.netns
def test_the_program_is_removed_with_the_namespace_on_restore_and_on_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    require_programs(tcp_bpf.LOADER)
    profile = tcp_profile.load("linux-2.4")
    real_attach = tcp_bpf.attach
    with veth_net(LANE) as net:
        settings = tcp_apply.apply(profile, hosts(net))
        in_namespace = [settings["hosts"][role]["bpf"]["program_id"] for role in ("fixed", "mobile")]
        assert all(map(program_exists, in_namespace))
        restorable = hosts(net, restorable=True)[0]
        restored = restorable.apply(profile)["bpf"]["program_id"]
        assert restorable.restore() == [] and gone_within(restored)
        attached: list[dict] = []
        monkeypatch.setattr(tcp_bpf, "attach", lambda *a: attached.append(real_attach(*a)) or attached[-1])
        failing = hosts(net)[0]
        monkeypatch.setattr(failing, "effective", lambda *a: (_ for _ in ()).throw(tcp_apply.TcpProfileError("x")))
        with pytest.raises(tcp_apply.TcpProfileError):
            failing.apply(profile)
        assert failing.bpf_pid is None and gone_within(attached[0]["program_id"])
    assert all(gone_within(program_id) for program_id in in_namespace)
    attached = subprocess.run(["bpftool", "cgroup", "tree"], capture_output=True, text=True).stdout
    assert all(f"{program_id} " not in attached for program_id in in_namespace)


def test_bad_bpf_settings_are_refused_naming_the_key() -> None:
    with pytest.raises(Exception, match=r"test\.bpf\.syn_rto: unknown key"):
        tcp_profile.from_table("x", {"bpf": {"syn_rto": 3000}}, "test")
    with pytest.raises(Exception, match=r"test\.bpf\.delack_max_ms: 'x' is not a number of milliseconds"):
        tcp_profile.from_table("x", {"bpf": {"delack_max_ms": "x"}}, "test")
    assert tcp_profile.from_table("x", {"bpf": {"syn_rto_ms": 0}}, "test").bpf == {}


def test_the_loader_refuses_bad_settings_and_names_a_missing_object(tmp_path: Path) -> None:
    require_programs(tcp_bpf.LOADER)
    loader = str(bin_dir() / tcp_bpf.LOADER)
    bad = subprocess.run([loader, str(bin_dir() / tcp_bpf.OBJECT), "syn_rto_ms=3s"], capture_output=True, text=True)
    assert bad.returncode == 2 and "syn_rto_ms=3s: expected syn_rto_ms=N or delack_max_ms=N" in bad.stderr
    missing = subprocess.run([loader, str(tmp_path / "none.bpf.o")], capture_output=True, text=True)
    assert missing.returncode == 1 and f"{tmp_path / 'none.bpf.o'}: cannot open the BPF object" in missing.stderr
