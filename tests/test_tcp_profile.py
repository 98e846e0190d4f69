"""TCP profiles applied to real namespaces: the first flight has IW segments, SYN options
follow the profile, cached metrics are flushed or kept, bad profiles are refused."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from scapy.layers.inet import IP, TCP

from conftest import require_programs, run_to_completion
from testbed import netns, tcp_profile
from testbed.capture import Capture, read_packets
from testbed.errors import ConfigError
from testbed.link_session import bin_dir
from testbed.processes import ProgramGroup
from testbed.workload_testnet import VethNet, shape, veth_net

LANE = 45
PORT = 5001


def transfer(net: VethNet, tmp_path: Path, name: str) -> list[IP]:
    """A 20 × 2096 B bulk transfer fixed → mobile, captured at the fixed host."""
    require_programs("squall-bulk")
    bulk = str(bin_dir() / "squall-bulk")
    pcap = tmp_path / f"{name}.pcap"
    with ProgramGroup(tmp_path / name) as group, Capture(net.fixed_ns, "eth0", pcap, f"tcp port {PORT}"):
        group.start("recv", net.mobile_ns, [bulk, "recv", "--listen", f"{net.mobile_addr}:{PORT}"])
        group.wait_ready("recv", "listening", 5)
        run_to_completion(group, "send", net.fixed_ns,
                          [bulk, "send", "--connect", f"{net.mobile_addr}:{PORT}", "--count", "20"], 60)
        assert group.wait_exit("recv", 10) == 0
    return read_packets(pcap)


def first_flight(packets: list[IP], sender: str) -> int:
    """Data segments the sender sent before the first ACK that covers data came back."""
    syn = next(p for p in packets if p.src == sender and p[TCP].flags.S)
    isn = syn[TCP].seq
    count = 0
    for p in packets:
        if p.src == sender and len(p[TCP].payload) > 0:
            count += 1
        elif p.src != sender and p[TCP].flags.A and p[TCP].ack > isn + 1:
            break
    return count


@pytest.mark.netns
@pytest.mark.parametrize("profile, segments", [("baseline", 2), ("iw4", 4)])
def test_first_flight_has_initial_window_segments(tmp_path: Path, profile: str, segments: int) -> None:
    with veth_net(LANE) as net:
        settings = tcp_profile.apply(tcp_profile.load(profile), [net.fixed_ns, net.mobile_ns])
        # Slow ACKs (the mobile host's egress at 16 kbit/s, a one-ACK bucket) keep the first
        # ACK away until the whole initial window has left the sender.
        shape(net.mobile_ns, "eth0", "16kbit", burst="100", limit="10000")
        packets = transfer(net, tmp_path, profile)
    assert first_flight(packets, net.fixed_addr) == segments
    routes = settings["hosts"][net.fixed_ns]["routes"]
    assert routes and all(r["initcwnd"] == segments for r in routes)


@pytest.mark.netns
@pytest.mark.parametrize("profile, expected", [
    ("baseline", {"SAckOK", "Timestamp"}),
    ("baseline-nots", {"SAckOK"}),
    ("no-sack", {"Timestamp"}),
])
def test_syn_options_follow_the_profile(tmp_path: Path, profile: str, expected: set[str]) -> None:
    if profile == "no-sack":
        prof = tcp_profile.from_table("no-sack", {"sysctl": {"net.ipv4.tcp_sack": 0, "net.ipv4.tcp_timestamps": 1}},
                                      "test")
    else:
        prof = tcp_profile.load(profile)
    with veth_net(LANE) as net:
        tcp_profile.apply(prof, [net.fixed_ns, net.mobile_ns])
        packets = transfer(net, tmp_path, profile)
    for host in (net.fixed_addr, net.mobile_addr):  # SYN and SYN-ACK
        opts = {name for name, _ in next(p for p in packets if p.src == host and p[TCP].flags.S)[TCP].options}
        assert opts & {"SAckOK", "Timestamp"} == expected, host


def cached_metrics(ns: str) -> str:
    return netns.run_in(ns, ["ip", "tcp_metrics", "show"]).stdout


@pytest.mark.netns
def test_cbi_keeps_metrics_across_replications_baseline_flushes(tmp_path: Path) -> None:
    with veth_net(LANE) as net:
        hosts = [net.fixed_ns, net.mobile_ns]
        tcp_profile.apply(tcp_profile.load("cbi"), hosts)
        transfer(net, tmp_path, "rep1")
        assert net.mobile_addr in cached_metrics(net.fixed_ns)
        tcp_profile.apply(tcp_profile.load("cbi"), hosts)  # the next replication
        assert net.mobile_addr in cached_metrics(net.fixed_ns), "CBI must not flush the cached metrics"
        settings = tcp_profile.apply(tcp_profile.load("baseline"), hosts)
        assert cached_metrics(net.fixed_ns).strip() == ""
        transfer(net, tmp_path, "rep2")
        assert cached_metrics(net.fixed_ns).strip() == ""  # tcp_no_metrics_save = 1
    eff = settings["hosts"][net.fixed_ns]["sysctl"]
    assert eff["net.ipv4.tcp_congestion_control"] == "reno"
    assert (eff["net.ipv4.tcp_dsack"], eff["net.ipv4.tcp_frto"], eff["net.ipv4.tcp_sack"]) == ("0", "0", "1")
    assert settings["hosts"][net.fixed_ns]["metrics_flushed"] is True


@pytest.mark.netns
def test_missing_sysctl_and_congestion_control(tmp_path: Path) -> None:
    with veth_net(LANE) as net:
        missing = tcp_profile.from_table("x", {"sysctl": {"net.ipv4.tcp_no_such_knob": 1}}, "test")
        with pytest.raises(tcp_profile.TcpProfileError, match="net.ipv4.tcp_no_such_knob does not exist"):
            tcp_profile.apply(missing, [net.fixed_ns])
        optional = tcp_profile.from_table("x", {"sysctl": {"net.ipv4.tcp_no_such_knob": 1, "net.ipv4.tcp_sack": 1},
                                                "optional": ["net.ipv4.tcp_no_such_knob"]}, "test")
        settings = tcp_profile.apply(optional, [net.fixed_ns])
        assert "net.ipv4.tcp_no_such_knob" in settings["hosts"][net.fixed_ns]["not_applied"]
        absent_cc = tcp_profile.from_table("x", {"sysctl": {"net.ipv4.tcp_congestion_control": "no-such-cc"}},
                                           "test")
        with pytest.raises(tcp_profile.TcpProfileError, match="congestion control 'no-such-cc' is not available"):
            tcp_profile.apply(absent_cc, [net.fixed_ns])
        tcp_profile.write_tcp_json(tmp_path / "tcp.json", settings)
    assert json.loads((tmp_path / "tcp.json").read_text())["profile"] == "x"


def test_every_profile_loads_and_bad_ones_name_the_key() -> None:
    for name in tcp_profile.names():
        tcp_profile.load(name)
    with pytest.raises(ConfigError, match="unknown tcp profile 'vegas-2004'"):
        tcp_profile.load("vegas-2004")
    with pytest.raises(ConfigError) as err:
        tcp_profile.from_table("x", {"initcwnd": -1}, "tcp.toml: x")
    assert err.value.where == "tcp.toml: x.initcwnd"
    with pytest.raises(ConfigError) as err:
        tcp_profile.from_table("x", {"sysctls": {}}, "tcp.toml: x")
    assert err.value.where == "tcp.toml: x.sysctls"
    with pytest.raises(ConfigError) as err:
        tcp_profile.from_table("x", {"sysctl": {"kernel.panic": 1}}, "tcp.toml: x")
    assert err.value.where == "tcp.toml: x.sysctl.kernel.panic"


def test_cli_unknown_profile_exits_non_zero() -> None:
    r = subprocess.run([sys.executable, "-m", "testbed.tcp_profile", "show", "vegas-2004"], capture_output=True,
                       text=True, cwd=Path(__file__).resolve().parent.parent)
    assert r.returncode == 2 and "unknown tcp profile 'vegas-2004'" in r.stderr
