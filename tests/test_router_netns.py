"""The tc router and the queue monitor on a real veth between two namespaces.

A veth shaped by the router's HTB at 64 kbit/s behaves like the router in front of the
slow link: the sender sits in `sq<lane>-emu` (the router's namespace), the receiver in
`sq<lane>-mobile`. Lanes come from $SQUALL_TEST_ROUTER_LANE (default 60) on.
"""
from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from conftest import require_programs
from support_udp import udp_in, udp_summary
from test_runner import cpu_wait_groups

from testbed import netns
from testbed.lanes.hosts import NamespaceHost
from testbed.paths import bin_dir
from testbed.router import tc_apply
from testbed.router.tc_apply import apply_router, collect_stats, teardown_router
from testbed.router.parse import parse_router
from testbed.router.plan import RouterConfig
from testbed.router.monitor import QueueMonitor, read_queue_samples

WHERE = "test: router"
RATE = 64_000
DEV = "wl0"


def qdisc_available(host: NamespaceHost, config: RouterConfig, kind: str) -> bool:
    """Whether the host's kernel can create qdisc `kind` as `config` uses it: the router's own
    probe, asked directly."""
    return all(tc_apply._probe_once(host, k) is None for k in tc_apply.needed_kinds(config) if k.name == kind)


def router_lane(offset: int) -> int:
    return int(os.environ.get("SQUALL_TEST_ROUTER_LANE", "60")) + offset


@dataclass(frozen=True)
class VethLink:
    sender_ns: str
    receiver_ns: str
    sender_ip: str
    receiver_ip: str

    @property
    def sender(self) -> NamespaceHost:
        """The router's host: its namespace behind the Host interface."""
        return NamespaceHost("emu", self.sender_ns, self.sender_ip)


def _create_veth_link(lane: int) -> VethLink:
    link = VethLink(f"sq{lane}-emu", f"sq{lane}-mobile", f"198.18.{lane}.1", f"198.18.{lane}.2")
    for ns in (link.sender_ns, link.receiver_ns):
        netns.delete(ns)
        netns.create(ns)
    netns.run_in(link.sender_ns, ["ip", "link", "add", DEV, "type", "veth", "peer", "name", DEV,
                                  "netns", link.receiver_ns])
    for ns, ip, peer in ((link.sender_ns, link.sender_ip, link.receiver_ip),
                         (link.receiver_ns, link.receiver_ip, link.sender_ip)):
        netns.run_in(ns, ["ip", "addr", "add", f"{ip}/24", "dev", DEV])
        # Segments as on the wire, not GSO super-packets.
        netns.run_in(ns, ["ethtool", "-K", DEV, "tso", "off", "gso", "off", "gro", "off"])
        netns.run_in(ns, ["ip", "link", "set", DEV, "up"])
    # Static neighbours: no ARP packets sharing (or waiting for) the shaped queue.
    _pin_neighbours(link)
    return link


def _pin_neighbours(link: VethLink) -> None:
    macs = {ns: json.loads(netns.run_in(ns, ["ip", "-j", "link", "show", DEV]).stdout)[0]["address"]
            for ns in (link.sender_ns, link.receiver_ns)}
    netns.run_in(link.sender_ns, ["ip", "neigh", "replace", link.receiver_ip, "lladdr",
                                  macs[link.receiver_ns], "dev", DEV, "nud", "permanent"])
    netns.run_in(link.receiver_ns, ["ip", "neigh", "replace", link.sender_ip, "lladdr",
                                    macs[link.sender_ns], "dev", DEV, "nud", "permanent"])


@pytest.fixture
def veth_link(request: pytest.FixtureRequest) -> Iterator[VethLink]:
    lane = router_lane(request.param)
    try:
        yield _create_veth_link(lane)
    finally:
        for ns in (f"sq{lane}-emu", f"sq{lane}-mobile"):
            netns.delete(ns)
    assert not any(netns.exists(ns) for ns in (f"sq{lane}-emu", f"sq{lane}-mobile"))
    assert not cpu_wait_groups(lane), "a CPU-wait cgroup of the lane left"


def _start_receiver(link: VethLink, port: int, idle: str = "3s") -> subprocess.Popen:
    proc = udp_in(link.receiver_ns, ["recv", "--listen", f"{link.receiver_ip}:{port}", "--idle-timeout", idle,
                                     "--duration", "60s"])
    line = proc.stdout.readline()
    assert line.startswith("listening "), f"receiver said {line!r}; stderr: {proc.stderr.read()}"
    return proc


def _summary(proc: subprocess.Popen) -> dict:
    return udp_summary(proc, 60)


def _stop_all(*procs: subprocess.Popen) -> None:
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()


def _qdisc_stats(link: VethLink, handle: str) -> dict:
    return next(q for q in collect_stats(link.sender, DEV)["qdisc"] if q["handle"] == handle)


PFIFO_20 = {"queue": {"discipline": "pfifo", "limit": 20}}


@pytest.mark.netns
@pytest.mark.parametrize("veth_link", [0], indirect=True)
def test_pfifo_20_never_holds_more_than_20_packets_and_counts_every_drop(veth_link, tmp_path):
    require_programs("squall-queue-monitor", "squall-udp")
    link = veth_link
    batch = apply_router(link.sender, parse_router(PFIFO_20, WHERE, RATE), DEV)
    assert "pfifo limit 20" in batch
    receiver = _start_receiver(link, 6001)
    monitor = QueueMonitor.start(link.sender, tmp_path / "router-queue.tsv",
                                 interval_us=1000)
    try:
        sender = udp_in(link.sender_ns, ["send", "--connect", f"{link.receiver_ip}:6001", "--size", "500",
                                         "--rate", "max", "--count", "200"])
        sent = _summary(sender)
        received = _summary(receiver)
    finally:
        monitor.stop()
        _stop_all(receiver)
    leaf = _qdisc_stats(link, "10:")
    packets_sent = sent["packets"]
    assert packets_sent == 200
    assert received["received"] < packets_sent, "the burst should have overflowed the 20-packet queue"
    assert leaf["drops"] == packets_sent - received["received"]

    samples = read_queue_samples(monitor.output)
    assert samples.interval_us == 1000 and samples.samples is not None
    pfifo_rows = samples.of("qdisc", "10:")
    assert len(pfifo_rows) == samples.samples > 100
    assert max(r.backlog_pkts for r in pfifo_rows) == 20, "the queue should have filled up to exactly its limit"
    assert pfifo_rows[-1].drops == leaf["drops"]
    assert all(r.marks is None for r in pfifo_rows)
    times = [r.time_us for r in pfifo_rows]
    assert times == sorted(times)
    teardown_router(link.sender, DEV)
    assert _root_kind(link) != "htb"


@pytest.mark.netns
@pytest.mark.parametrize("veth_link", [0], indirect=True)
def test_head_drop_keeps_the_newest_packets_of_a_burst(veth_link):
    """The same burst as above into a 20-packet head_drop (tc's pfifo_head_drop): the kernel
    drops from the front, so the burst's last datagram arrives (a tail drop loses it)."""
    require_programs("squall-udp")
    link = veth_link
    config = parse_router({"queue": {"discipline": "head_drop", "limit": 20}}, WHERE, RATE)
    if not qdisc_available(link.sender, config, "head_drop"):
        pytest.skip("this kernel has no pfifo_head_drop (sch_fifo)")
    assert "pfifo_head_drop limit 20" in apply_router(link.sender, config, DEV)
    receiver = _start_receiver(link, 6001)
    try:
        sender = udp_in(link.sender_ns, ["send", "--connect", f"{link.receiver_ip}:6001", "--size", "500",
                                         "--rate", "max", "--count", "200"])
        sent = _summary(sender)
        received = _summary(receiver)
    finally:
        _stop_all(receiver)
    leaf = _qdisc_stats(link, "10:")
    assert sent["packets"] == 200
    assert 20 <= received["received"] < 200, "the burst should have overflowed the 20-packet queue"
    assert received["expected"] == 200, "the newest datagram must have been kept"
    assert leaf["drops"] == 200 - received["received"]
    teardown_router(link.sender, DEV)


def _root_kind(link: VethLink) -> str:
    qdiscs = json.loads(netns.run_in(link.sender_ns, ["tc", "-j", "qdisc", "show", "dev", DEV]).stdout)
    return next(q["kind"] for q in qdiscs if q.get("root"))


def _ef_be_config(filter_kind: str) -> dict:
    ef_match = {"dscp": "EF"} if filter_kind == "dscp" else {"protocol": "udp", "dport": 6001}
    return {
        "default": "BE",
        "classes": {
            "EF": {"rate": "40kbit", "priority": 0, "queue": {"discipline": "pfifo", "limit": 20}},
            "BE": {"rate": "24kbit", "priority": 1, "queue": {"discipline": "pfifo", "limit": 20}},
        },
        "filters": [{"class": "EF", **ef_match}],
    }


def _ef_share_under_flood(link: VethLink, config: RouterConfig) -> float:
    """Delivered fraction of a 32 kbit/s EF stream (132 B IP packets, TOS EF) sent for 4 s
    while a 256 kbit/s UDP flood in best effort saturates the 64 kbit/s router."""
    apply_router(link.sender, config, DEV)
    ef_rx = _start_receiver(link, 6001)
    be_rx = _start_receiver(link, 6002)
    try:
        flood = udp_in(link.sender_ns, ["send", "--connect", f"{link.receiver_ip}:6002", "--size", "500",
                                        "--rate", "256kbit", "--duration", "4s"])
        ef = udp_in(link.sender_ns, ["send", "--connect", f"{link.receiver_ip}:6001", "--size", "104",
                                     "--rate", "32kbit", "--duration", "4s", "--tos", "0xb8"])
        ef_sent, flood_sent = _summary(ef), _summary(flood)
        ef_got, be_got = _summary(ef_rx), _summary(be_rx)
    finally:
        _stop_all(ef_rx, be_rx)
    assert be_got["received"] < flood_sent["packets"] / 2, "the flood should have saturated the router"
    return ef_got["received"] / ef_sent["packets"]


@pytest.mark.netns
@pytest.mark.parametrize("veth_link,filter_kind", [(1, "dscp"), (2, "port")], indirect=["veth_link"])
def test_diffserv_keeps_the_ef_stream_under_a_best_effort_flood(veth_link, filter_kind):
    require_programs("squall-udp")
    share = _ef_share_under_flood(veth_link, parse_router(_ef_be_config(filter_kind), WHERE, RATE))
    assert share >= 0.95
    ef_class = next(c for c in collect_stats(veth_link.sender, DEV)["class"] if c["handle"] == "1:10")
    assert ef_class["drops"] == 0


@pytest.mark.netns
@pytest.mark.parametrize("veth_link", [3], indirect=True)
def test_without_diffserv_the_flood_takes_most_of_the_ef_stream(veth_link):
    require_programs("squall-udp")
    share = _ef_share_under_flood(veth_link, parse_router(PFIFO_20, WHERE, RATE))
    assert share < 0.5


RED_ECN = {"queue": {"discipline": "red", "limit": "11000B", "min": "2000B", "max": "6000B",
                     "avpkt": "500B", "ecn": True}}


@pytest.mark.netns
@pytest.mark.parametrize("veth_link", [4], indirect=True)
def test_red_is_applied_or_refused_with_the_reason(veth_link, tmp_path):
    from testbed.router.tc_apply import RouterError

    link = veth_link
    config = parse_router(RED_ECN, WHERE, RATE)
    if not qdisc_available(link.sender, config, "red"):
        with pytest.raises(RouterError, match=r"needs a `red` qdisc, and the kernel of namespace \S+ cannot create "
                                              r"one \(tc: \"Error: Specified qdisc kind is unknown.\".*"
                                              r"engine = \"emulator\""):
            apply_router(link.sender, config, DEV)
        assert _root_kind(link) != "htb", "nothing may be applied when the kernel cannot take it"
        pytest.skip("this kernel has no sch_red (tc: qdisc kind unknown); checked the refusal message only")
    require_programs("squall-queue-monitor", "squall-udp")
    apply_router(link.sender, config, DEV)
    receiver = _start_receiver(link, 6001)
    monitor = QueueMonitor.start(link.sender, tmp_path / "router-queue.tsv",
                                 interval_us=1000)
    try:
        sent = _summary(udp_in(link.sender_ns, ["send", "--connect", f"{link.receiver_ip}:6001", "--size", "500",
                                                "--rate", "256kbit", "--duration", "3s"]))
        received = _summary(receiver)
    finally:
        monitor.stop()
        _stop_all(receiver)
    red = _qdisc_stats(link, "10:")
    assert red["drops"] == sent["packets"] - received["received"]
    rows = read_queue_samples(monitor.output).of("qdisc", "10:")
    assert max(r.backlog_bytes for r in rows) <= 11000
    assert all(r.marks is not None for r in rows), "RED rows carry the kernel's mark count"


@pytest.mark.netns
@pytest.mark.parametrize("veth_link", [9], indirect=True)
@pytest.mark.parametrize("kind", ["codel", "fq_codel"])
def test_codel_is_applied_or_refused_before_anything_is_created(veth_link, kind):
    """On a kernel without sch_codel / sch_fq_codel (this machine's kind) the tc engine refuses
    the scenario, naming the qdisc and the emulator engine, and leaves the device as it was;
    with it, the class's leaf is the kernel's qdisc."""
    from testbed.router.tc_apply import RouterError

    link = veth_link
    config = parse_router({"queue": {"discipline": kind}}, WHERE, RATE)
    if qdisc_available(link.sender, config, kind):
        apply_router(link.sender, config, DEV)
        qdiscs = json.loads(netns.run_in(link.sender_ns, ["tc", "-j", "qdisc", "show", "dev", DEV]).stdout)
        assert any(q["kind"] == kind and q["handle"] == "10:" for q in qdiscs)
        return
    with pytest.raises(RouterError, match=rf"needs a `{kind}` qdisc, and the kernel of namespace \S+ cannot create "
                                          rf"one \(tc: [^)]*lacks sch_{kind}\)\. Set `engine = \"emulator\"`"):
        apply_router(link.sender, config, DEV)
    assert _root_kind(link) != "htb", "nothing may be applied when the kernel cannot take it"


@pytest.mark.netns
@pytest.mark.parametrize("veth_link", [5], indirect=True)
def test_monitor_times_on_the_given_t0_and_stops_after_its_duration(veth_link, tmp_path):
    require_programs("squall-queue-monitor")
    import time

    link = veth_link
    apply_router(link.sender, parse_router(PFIFO_20, WHERE, RATE), DEV)
    t0 = time.time_ns() // 1000
    out = tmp_path / "q.tsv"
    proc = netns.run_in(link.sender_ns, [str(bin_dir() / "squall-queue-monitor"), "--dev", DEV, "--output",
                                         str(out), "--interval", "2ms", "--duration", "200ms",
                                         "--t0-realtime-us", str(t0)])
    assert proc.stdout == "ready\n"
    samples = read_queue_samples(out)
    assert samples.t0_realtime_us == t0 and samples.interval_us == 2000
    assert samples.samples == 101 - samples.missed
    # Four objects per sample: root qdisc 1:, leaf 10:, classes 1:1 and 1:10.
    assert {(r.object, r.handle) for r in samples.rows} == {
        ("class", "1:1"), ("class", "1:10"), ("qdisc", "1:"), ("qdisc", "10:")}
    assert len(samples.rows) == 4 * samples.samples
    first, last = samples.rows[0].time_us, samples.rows[-1].time_us
    assert 0 <= first < last
    assert last - first >= 200_000 - 2 * 2000


@pytest.mark.netns
@pytest.mark.parametrize("veth_link", [6], indirect=True)
def test_monitor_refuses_a_missing_device_by_name(veth_link, tmp_path):
    require_programs("squall-queue-monitor")
    from testbed.router.monitor import QueueMonitorError

    with pytest.raises(QueueMonitorError, match=r'device "nowhere0" not found in this network namespace'):
        QueueMonitor.start(veth_link.sender, tmp_path / "q.tsv", dev="nowhere0")


@pytest.mark.netns
@pytest.mark.parametrize("veth_link", [7], indirect=True)
def test_a_tc_failure_names_the_batch_line(veth_link):
    from testbed.router.tc_apply import RouterError

    link = veth_link
    section = {"default": "BE", "classes": {
        "EF": {"rate": "32kbit", "queue": {"discipline": "pfifo", "limit": 10}},
        "BE": {"rate": "32kbit", "queue": {"discipline": "pfifo", "limit": 20}}}}
    config = parse_router(section, WHERE, RATE)
    with pytest.raises(RouterError, match=r"failed at tc batch line 1 `qdisc add dev nowhere0 root handle 1: "
                                          r"htb default 20`: .*Cannot find device"):
        apply_router(link.sender, config, "nowhere0")
    assert _root_kind(link) != "htb", "the real device was not touched"


@pytest.mark.netns
@pytest.mark.parametrize("veth_link", [8], indirect=True)
def test_a_replication_leaves_complete_router_files_or_none(veth_link, tmp_path):
    require_programs("squall-queue-monitor")
    from testbed.router.session import RouterRun

    link = veth_link
    config = parse_router(PFIFO_20, WHERE, RATE)
    done = tmp_path / "rep-01"
    done.mkdir()
    with RouterRun(link.sender, config, done, dev=DEV, interval_us=1000) as router:
        assert _root_kind(link) == "htb"
        router.start_monitor(t0_realtime_us=1)
        stats = router.finish()
    assert _root_kind(link) != "htb"
    assert sorted(p.name for p in done.iterdir()) == ["router-queue.tsv", "router.tc", "tc-stats.json"]
    assert (done / "router.tc").read_text() == router.batch
    assert json.loads((done / "tc-stats.json").read_text()) == stats
    assert {q["handle"] for q in stats["qdisc"]} == {"1:", "10:"}
    assert read_queue_samples(done / "router-queue.tsv").samples

    failed = tmp_path / "rep-02"
    failed.mkdir()
    with pytest.raises(RuntimeError, match="flow failed"):
        with RouterRun(link.sender, config, failed, dev=DEV) as router:
            router.start_monitor()
            raise RuntimeError("flow failed")
    assert sorted(p.name for p in failed.iterdir()) == ["router.tc"]
    assert _root_kind(link) != "htb"
    assert netns.pids(link.sender_ns) == [], "the monitor was left running"


@pytest.mark.netns
@pytest.mark.parametrize("veth_link", [7], indirect=True)
def test_a_tc_warning_is_an_error_and_the_router_is_removed(veth_link, monkeypatch):
    import re

    import testbed.router.tc_apply as router_module
    from testbed.router.tc_apply import RouterError
    from testbed.router.tc_render import render_tc_batch

    link = veth_link
    config = parse_router(PFIFO_20, WHERE, RATE)
    # Without the explicit quantum the renderer writes, HTB computes 8000 B/s / r2q 10 = 800 B
    # at 64 kbit/s and warns.
    monkeypatch.setattr(router_module, "render_tc_batch",
                        lambda c, d: re.sub(r" quantum \d+", "", render_tc_batch(c, d)))
    with pytest.raises(RouterError, match=r"but warned: .*quantum of class 10010 is small.*removed again"):
        apply_router(link.sender, config, DEV)
    assert _root_kind(link) != "htb"
    monkeypatch.undo()
    # The renderer's own quantum at the same rate gives no warning (apply_router would raise).
    apply_router(link.sender, config, DEV)
    assert _root_kind(link) == "htb"


@pytest.mark.netns
@pytest.mark.parametrize("veth_link", [9], indirect=True)
@pytest.mark.parametrize("discipline", ["pie", "dualpi2"])
def test_an_aqm_is_applied_or_refused_naming_it(veth_link, discipline):
    """Where the kernel lacks the AQM's qdisc (this machine kind), the tc engine refuses before
    anything is created, naming the qdisc and pointing to the emulator engine; where it has
    it, the qdisc is the router's leaf."""
    from testbed.router.tc_apply import RouterError

    link = veth_link
    config = parse_router({"queue": {"discipline": discipline}}, WHERE, RATE)
    if not qdisc_available(link.sender, config, discipline):
        with pytest.raises(RouterError, match=rf"needs a `{discipline}` qdisc, and the kernel of namespace \S+ "
                                              rf"cannot create one \(tc: .*lacks sch_{discipline}\)\..*"
                                              r"engine = \"emulator\""):
            apply_router(link.sender, config, DEV)
        assert _root_kind(link) != "htb", "nothing may be applied when the kernel cannot take it"
        return
    apply_router(link.sender, config, DEV)
    shown = subprocess.run(["ip", "netns", "exec", link.sender_ns, "tc", "qdisc", "show", "dev", DEV],
                           capture_output=True, text=True, check=True).stdout
    assert f"qdisc {discipline} 10:" in shown
