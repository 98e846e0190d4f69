"""TCP profiles applied to real namespaces: the first flight has IW segments, SYN options
follow the profile, cached metrics are flushed or kept, bad profiles are refused (also
names and values that could smuggle a command)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from scapy.layers.inet import IP, TCP

from conftest import require_programs, run_to_completion, workload_lane
from testbed import netns, tcp_apply, tcp_profile
from testbed.lanes.capture import Capture, read_packets
from testbed.errors import ConfigError
from testbed.lanes.hosts import NamespaceHost
from testbed.paths import bin_dir
from testbed.processes import ProgramGroup
from support_testnet import VethNet, shape, veth_net

LANE = workload_lane(2)
PORT = 5001


def apply(profile: tcp_profile.TcpProfile, net: VethNet, roles: tuple[str, ...] = ("fixed", "mobile")) -> dict:
    """The profile on the net's namespaces, as a lane applies it (tcp.json's dict, keyed by role)."""
    hosts = {"fixed": NamespaceHost("fixed", net.fixed_ns, net.fixed_addr),
             "mobile": NamespaceHost("mobile", net.mobile_ns, net.mobile_addr)}
    return tcp_apply.apply(profile, [tcp_apply.HostTcp(hosts[role], restorable=False) for role in roles])


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
@pytest.mark.parametrize("profile, segments", [("baseline", 2), ("iw4", 4), ("linux-2.4", 2)])
def test_first_flight_has_initial_window_segments(tmp_path: Path, profile: str, segments: int) -> None:
    with veth_net(LANE) as net:
        settings = apply(tcp_profile.load(profile), net)
        # Slow ACKs (the mobile host's egress at 16 kbit/s, a one-ACK bucket) keep the first
        # ACK away until the whole initial window has left the sender.
        shape(net.mobile_ns, "eth0", "16kbit", burst="100", limit="10000")
        packets = transfer(net, tmp_path, profile)
    assert first_flight(packets, net.fixed_addr) == segments
    routes = settings["hosts"]["fixed"]["routes"]
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
        apply(prof, net)
        packets = transfer(net, tmp_path, profile)
    for host in (net.fixed_addr, net.mobile_addr):  # SYN and SYN-ACK
        opts = {name for name, _ in next(p for p in packets if p.src == host and p[TCP].flags.S)[TCP].options}
        assert opts & {"SAckOK", "Timestamp"} == expected, host


def cached_metrics(ns: str) -> str:
    return netns.run_in(ns, ["ip", "tcp_metrics", "show"]).stdout


@pytest.mark.netns
def test_cbi_keeps_metrics_across_replications_baseline_flushes(tmp_path: Path) -> None:
    with veth_net(LANE) as net:
        apply(tcp_profile.load("cbi"), net)
        transfer(net, tmp_path, "rep1")
        assert net.mobile_addr in cached_metrics(net.fixed_ns)
        apply(tcp_profile.load("cbi"), net)  # the next replication
        assert net.mobile_addr in cached_metrics(net.fixed_ns), "CBI must not flush the cached metrics"
        settings = apply(tcp_profile.load("baseline"), net)
        assert cached_metrics(net.fixed_ns).strip() == ""
        transfer(net, tmp_path, "rep2")
        assert cached_metrics(net.fixed_ns).strip() == ""  # tcp_no_metrics_save = 1
    eff = settings["hosts"]["fixed"]["sysctl"]
    assert eff["net.ipv4.tcp_congestion_control"] == "reno"
    assert (eff["net.ipv4.tcp_dsack"], eff["net.ipv4.tcp_frto"], eff["net.ipv4.tcp_sack"]) == ("0", "0", "1")
    assert settings["hosts"]["fixed"]["metrics_flushed"] is True


@pytest.mark.netns
def test_missing_sysctl_and_congestion_control(tmp_path: Path) -> None:
    with veth_net(LANE) as net:
        missing = tcp_profile.from_table("x", {"sysctl": {"net.ipv4.tcp_no_such_knob": 1}}, "test")
        with pytest.raises(tcp_apply.TcpProfileError, match="net.ipv4.tcp_no_such_knob does not exist"):
            apply(missing, net, ("fixed",))
        optional = tcp_profile.from_table("x", {"sysctl": {"net.ipv4.tcp_no_such_knob": 1, "net.ipv4.tcp_sack": 1},
                                                "optional": ["net.ipv4.tcp_no_such_knob"]}, "test")
        settings = apply(optional, net, ("fixed",))
        assert "net.ipv4.tcp_no_such_knob" in settings["hosts"]["fixed"]["not_applied"]
        absent_cc = tcp_profile.from_table("x", {"sysctl": {"net.ipv4.tcp_congestion_control": "no-such-cc"}},
                                           "test")
        with pytest.raises(tcp_apply.TcpProfileError, match="congestion control 'no-such-cc' is not available"):
            apply(absent_cc, net, ("fixed",))
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


@pytest.mark.parametrize("key", ["net.ipv4.tcp_sack$(id)", "net.ipv4.tcp_sack;reboot", "net.ipv4.tcp sack",
                                 "net.ipv4.tcp_sack`id`", "net.ipv4..tcp_sack", "net/ipv4/tcp_sack",
                                 "net.ipv4.tcp_sack'", "net.ipv4.TCP_SACK", "net.netfilter.nf_conntrack_max"])
def test_a_sysctl_name_that_is_not_a_plain_net_sysctl_is_refused_naming_it(key: str) -> None:
    with pytest.raises(ConfigError) as err:
        tcp_profile.from_table("x", {"sysctl": {key: 1}}, "tcp.toml: x")
    assert err.value.where == f"tcp.toml: x.sysctl.{key}" and repr(key) in err.value.detail
    with pytest.raises(ConfigError) as err:
        tcp_profile.from_table("x", {"optional": ["net.ipv4.tcp_sack", key]}, "tcp.toml: x")
    assert err.value.where == "tcp.toml: x.optional[1]"


@pytest.mark.parametrize("key, value", [
    ("net.ipv4.tcp_congestion_control", "reno; id"), ("net.ipv4.tcp_congestion_control", "$(id)"),
    ("net.ipv4.tcp_congestion_control", "../../x"), ("net.ipv4.tcp_congestion_control", 1),
    ("net.ipv4.tcp_congestion_control", "a_name_of_16_chr"), ("net.ipv4.tcp_rmem", "4096 $(id) 1"),
    ("net.ipv4.tcp_rmem", "4096\n131072"), ("net.ipv4.tcp_rmem", ""),
])
def test_a_value_that_is_not_plain_is_refused(key: str, value: object) -> None:
    with pytest.raises(ConfigError) as err:
        tcp_profile.from_table("x", {"sysctl": {key: value}}, "tcp.toml: x")
    assert err.value.where == f"tcp.toml: x.sysctl.{key}"


def test_plain_names_and_values_pass() -> None:
    prof = tcp_profile.from_table("x", {"sysctl": {"net.ipv4.tcp_congestion_control": "no-such-cc",
                                                   "net.ipv4.tcp_rmem": "4096 131072 6291456",
                                                   "net.ipv6.conf.all.disable_ipv6": 1, "net.core.somaxconn": -1}},
                                  "tcp.toml: x")
    assert prof.sysctls["net.ipv4.tcp_rmem"] == "4096 131072 6291456"


def test_a_scenario_smuggling_a_command_in_a_sysctl_is_refused_at_load(tmp_path: Path) -> None:
    from testbed.scenario import loader
    path = tmp_path / "evil.toml"
    path.write_text('seed = 1\nlink = "e0"\n[tcp]\nprofile = "baseline"\n'
                    '[tcp.sysctl]\n"net.ipv4.tcp_sack$(id)" = 1\n'
                    '[flows.bulk]\nkind = "bulk"\ncount = 2\nlength = "2096B"\n')
    with pytest.raises(ConfigError) as err:
        loader.load(path)
    assert err.value.where == f"{path}: tcp.sysctl.net.ipv4.tcp_sack$(id)", err.value.where
    assert "'net.ipv4.tcp_sack$(id)' is not a per-namespace sysctl name" in str(err.value)


def test_cli_unknown_profile_exits_non_zero() -> None:
    r = subprocess.run([sys.executable, "-m", "testbed.tcp_profile", "show", "vegas-2004"], capture_output=True,
                       text=True, cwd=Path(__file__).resolve().parent.parent)
    assert r.returncode == 2 and "unknown tcp profile 'vegas-2004'" in r.stderr
