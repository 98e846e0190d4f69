"""The router engines end to end on a real lane: tc's HTB on wl0 versus the emulator's router stage.

fixed host --> emu (IP forwarding[, HTB on wl0]) --> router NPA --> emulator[ router stage] --> mobile.
Each engine as the runner drives it: LinkSession (with the router for the emulator engine),
RouterRun, traffic, the link closed, RouterRun.finish(). On a link without ARQ stalls the two
engines agree (drops, deliveries, queue length over time) when the emulator engine is given the
tc engine's bottleneck (send_buffer = mtu, no device queue); the tc engine cannot hold a queue
behind a stalled TUN on current kernels (the last test measures why). Lanes
$SQUALL_TEST_EMU_ROUTER_LANE (default 100) and the next ones, up to +5.
"""
from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from analysis.read.emulog import EmulatorLog, LogEvent, read_emulator_log
from conftest import built_lane, require_programs
from support_udp import udp_in, udp_summary

from testbed.addresses import LaneAddresses
from testbed.scenario.link_section import LinkConfig
from testbed.lanes.hosts import NamespaceTestbed
from testbed.link.session import LinkSession
from testbed.router.monitor import read_queue_samples
from testbed.router.parse import parse_router
from testbed.router.plan import RouterConfig
from testbed.router.emulator_stats import RouterStatsError
from testbed.router.files import EMULATOR_STATS_FILE
from testbed.router.session import RouterRun
from testbed.link.simple import error_free

pytestmark = pytest.mark.netns
RATE_BPS, MTU, DELAY_US = 64_000, 576, 50_000
STUDY_SEND_BUFFER = 9600        # Saarto 2003: the link send buffer behind the router
WHERE = "test: router"
PFIFO_20 = {"queue": {"discipline": "pfifo", "limit": 20}}
EF_BE = {
    "default": "BE",
    "classes": {
        "EF": {"rate": "40kbit", "priority": 0, "queue": {"discipline": "pfifo", "limit": 10}},
        "BE": {"rate": "24kbit", "priority": 1, "queue": {"discipline": "pfifo", "limit": 20}},
    },
    "filters": [{"class": "EF", "dscp": "EF"}],
}


@pytest.fixture
def lane(request: pytest.FixtureRequest):
    with built_lane(int(os.environ.get("SQUALL_TEST_EMU_ROUTER_LANE", "100")) + request.param) as addr:
        yield addr


@dataclass
class Flow:
    port: int
    sender: list[str]           # squall-udp send options after --connect
    sent: int = 0
    received: int = 0


@dataclass
class Outcome:
    flows: list[Flow]
    stats: dict                 # tc-stats.json or router-stats.json
    log: EmulatorLog
    rep: Path


def _run_flows(lane: LaneAddresses, flows: list[Flow]) -> None:
    """UDP senders at the fixed host, receivers at the mobile host; every process ends here."""
    receivers, senders = [], []
    try:
        for flow in flows:
            dest = f"{lane.mobile_wireless.address}:{flow.port}"
            receivers.append(udp_in(lane.ns.mobile, ["recv", "--listen", dest, "--idle-timeout", "3s",
                                                   "--duration", "90s"]))
            line = receivers[-1].stdout.readline()
            assert line.startswith("listening "), f"receiver said {line!r}"
        for flow in flows:
            dest = f"{lane.mobile_wireless.address}:{flow.port}"
            senders.append(udp_in(lane.ns.fixed, ["send", "--connect", dest, *flow.sender]))
        for flow, sender in zip(flows, senders):
            flow.sent = udp_summary(sender, 90)["packets"]
        for flow, receiver in zip(flows, receivers):
            flow.received = udp_summary(receiver, 90)["received"]
    finally:
        for proc in receivers + senders:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def _run(lane: LaneAddresses, link: LinkConfig, config: RouterConfig, rep: Path, flows: list[Flow]) -> Outcome:
    """One replication as the runner does it, for either engine."""
    rep.mkdir()
    with LinkSession(lane, link, rep, router=config) as session:
        with RouterRun(NamespaceTestbed(lane).emu, config, rep, dev=lane.emu_wireless.dev,
                       interval_us=10_000) as router:
            router.start_monitor(t0_realtime_us=session.start_realtime_us)
            _run_flows(lane, flows)
            if config.engine == "emulator":
                with pytest.raises(RouterStatsError, match="close the link before RouterRun.finish"):
                    router.finish()
                assert not (rep / EMULATOR_STATS_FILE).exists()
                session.close()     # STOP: the log's trailer has the per-class lines
            stats = router.finish()
    assert session.result is not None and session.result.stop_acknowledged
    return Outcome(flows, stats, read_emulator_log(session.log_path), rep)


def _events(log: EmulatorLog, event: str, **match: object) -> list[LogEvent]:
    return [e for e in log.events if e.event == event and e.dir == "down"
            and all(getattr(e, k) == v for k, v in match.items())]


def _flood() -> list[Flow]:
    # 200 datagrams of 528 B IP at twice the link's rate: the queue fills after about 40
    # and then loses about every other one.
    return [Flow(7001, ["--size", "500", "--rate", "128kbit", "--count", "200"])]


def _emulator_backlog(log: EmulatorLog) -> list[tuple[int, int]]:
    """(time, packets in the downlink's router stage after the events of that time): `in` adds
    one, `drop_router`, `drop_mtu` and `enqueue` (into the send buffer) take one away."""
    steps: list[tuple[int, int]] = []
    held = 0
    for e in log.events:
        if e.dir != "down" or e.event not in ("in", "drop_router", "drop_mtu", "enqueue"):
            continue
        held += 1 if e.event == "in" else -1
        if steps and steps[-1][0] == e.time_us:
            steps[-1] = (e.time_us, held)
        else:
            steps.append((e.time_us, held))
    return steps


def _tc_backlog(rep: Path) -> list[tuple[int, int]]:
    """(sample time, packets in the leaf qdisc 10:) from router-queue.tsv."""
    return [(r.time_us, r.backlog_pkts) for r in read_queue_samples(rep / "router-queue.tsv").of("qdisc", "10:")]


def _busy_mean(series: list[tuple[int, int]]) -> tuple[float, int, int]:
    """(time-weighted mean of a step series while the queue is not empty, from its first
    non-empty to its last non-empty point; its maximum; that period in us)."""
    busy = [i for i, (_, n) in enumerate(series) if n > 0]
    first, last = busy[0], busy[-1] + 1
    area = sum(series[i][1] * (series[i + 1][0] - series[i][0]) for i in range(first, min(last, len(series) - 1)))
    period = series[min(last, len(series) - 1)][0] - series[first][0]
    return area / period, max(n for _, n in series), period


@pytest.mark.parametrize("lane", [0], indirect=True)
def test_tail_drop_20_packets_loses_alike_with_both_engines(lane, tmp_path):
    """Same flood, same 20-packet tail drop at the link's rate, on a link without ARQ stalls.
    The tc router drains into the study's 9600 B send buffer at the link's rate, so that buffer
    never overflows and the qdisc is the bottleneck; the emulator engine gets the same
    bottleneck with send_buffer = mtu and no device queue (docs/router.md, "Both engines on one
    link"). Tolerance: 8 of about 80 drops (10 %). HTB's bucket lets a few packets through at
    once (5 in our runs: the send buffer reached 2640 B), so tc loses about 3 fewer, and HTB is
    a token bucket on kernel timers on a shared machine where the emulator serialises each
    packet for exactly 66 ms. The queue behaves alike: both fill to 20 and hold a mean within
    2 packets while busy, for the same time within 10 %. (The emulator engine with Seawind's
    structure, the study's 9600 B send buffer behind the router, loses about 14 fewer: 68.)"""
    require_programs("squall-emulator", "squall-npa", "squall-udp", "squall-queue-monitor")
    tc_config = parse_router(PFIFO_20, WHERE, RATE_BPS)
    emu_config = parse_router({**PFIFO_20, "engine": "emulator"}, WHERE, RATE_BPS)
    tc = _run(lane, error_free(RATE_BPS, DELAY_US, MTU, send_buffer=STUDY_SEND_BUFFER), tc_config,
              tmp_path / "tc", _flood())
    emu = _run(lane, error_free(RATE_BPS, DELAY_US, MTU, send_buffer=MTU), emu_config, tmp_path / "emu", _flood())

    (tc_flow,), (emu_flow,) = tc.flows, emu.flows
    assert tc_flow.sent == emu_flow.sent == 200
    tc_lost, emu_lost = tc_flow.sent - tc_flow.received, emu_flow.sent - emu_flow.received
    tc_drops = next(q for q in tc.stats["qdisc"] if q["handle"] == "10:")["drops"]
    assert tc_drops == tc_lost and not _events(tc.log, "drop_sbuf"), "with tc every loss is the qdisc's"
    assert 60 <= tc_lost <= 100, f"the flood should lose about 80 datagrams, lost {tc_lost}"
    assert abs(tc_lost - emu_lost) <= 8, f"tc lost {tc_lost}, the emulator engine {emu_lost}"

    # The same queue behaviour: tc's samples of the qdisc against the emulator's log.
    tc_mean, tc_max, tc_busy = _busy_mean(_tc_backlog(tc.rep))
    emu_mean, emu_max, emu_busy = _busy_mean(_emulator_backlog(emu.log))
    print(f"lost: tc {tc_lost}, emulator {emu_lost}; queue: tc mean {tc_mean:.1f} max {tc_max} busy {tc_busy} us; "
          f"emulator mean {emu_mean:.1f} max {emu_max} busy {emu_busy} us")
    assert emu_max == 20 and 18 <= tc_max <= 20
    assert abs(tc_mean - emu_mean) <= 2, f"mean backlog tc {tc_mean:.1f}, emulator {emu_mean:.1f}"
    assert abs(tc_busy - emu_busy) <= 0.1 * emu_busy, f"busy tc {tc_busy} us, emulator {emu_busy} us"

    # With the emulator engine every loss is a drop_router event and the class counters
    # are the log's events.
    drops = _events(emu.log, "drop_router")
    assert len(drops) == emu_lost and all(e.dport == 7001 for e in drops)
    assert not _events(emu.log, "drop_sbuf")
    (only,) = emu.stats["class"]
    assert (only["direction"], only["class"]) == ("down", "all")
    assert only["drops"] == only["tail_drops"] == len(drops) and only["red_drops"] == only["marks"] == 0
    assert only["arrivals"] == len(_events(emu.log, "in"))
    assert only["enqueued"] == len(_events(emu.log, "enqueue")) == only["arrivals"] - only["drops"]
    assert only["backlog_pkts"] == only["backlog_bytes"] == 0
    assert emu.stats["events"] == {"down": {"drop_router": len(drops), "ecn_mark": 0}}
    assert json.loads((emu.rep / EMULATOR_STATS_FILE).read_text()) == emu.stats
    assert sorted(p.name for p in emu.rep.iterdir() if p.suffix in (".tc", ".json", ".tsv")) == [
        "router-stats.json", "router.tc"]
    assert (emu.rep / "router.tc").read_text().startswith('# router engine = "emulator"')
    # The router never held more than 20: at most 20 waiting plus the one in the send buffer.
    assert max(e.sbuf for e in _events(emu.log, "enqueue")) <= MTU


@pytest.mark.parametrize("lane", [3], indirect=True)
def test_diffserv_priority_agrees_between_the_engines(lane, tmp_path):
    """DiffServ at the link's rate, EF (priority 0, 40 kbit/s guaranteed) and BE (priority 1),
    20-packet tail drop each: a 32 kbit/s EF stream and a 128 kbit/s best-effort flood for 5 s.
    HTB serves EF within its rate and lends the rest to BE; the emulator engine serves EF first
    (strict priority). Both keep EF whole and drop best effort alike (within 10 %)."""
    require_programs("squall-emulator", "squall-npa", "squall-udp", "squall-queue-monitor")
    outcomes = {}
    for engine, send_buffer in (("tc", STUDY_SEND_BUFFER), ("emulator", MTU)):
        config = parse_router({**EF_BE, "engine": engine}, WHERE, RATE_BPS)
        ef = Flow(7001, ["--size", "104", "--rate", "32kbit", "--duration", "5s", "--tos", "0xb8"])
        be = Flow(7002, ["--size", "500", "--rate", "128kbit", "--duration", "5s"])
        outcomes[engine] = _run(lane, error_free(RATE_BPS, DELAY_US, MTU, send_buffer=send_buffer), config,
                                tmp_path / engine, [ef, be])
    lost = {}
    for engine, out in outcomes.items():
        ef, be = out.flows
        assert ef.received == ef.sent, f"{engine}: EF got {ef.received} of {ef.sent}"
        assert not _events(out.log, "drop_sbuf"), engine
        lost[engine] = be.sent - be.received
    print(f"best effort lost: {lost}")
    assert lost["tc"] > 20
    assert abs(lost["tc"] - lost["emulator"]) <= 0.1 * lost["emulator"], lost
    classes = {c["class"]: c for c in outcomes["emulator"].stats["class"]}
    assert classes["EF"]["drops"] == 0 and classes["BE"]["drops"] == lost["emulator"]
    tc_leaves = {q["handle"]: q for q in outcomes["tc"].stats["qdisc"]}
    assert tc_leaves["10:"]["drops"] == 0 and tc_leaves["20:"]["drops"] == lost["tc"]


@pytest.mark.parametrize("lane", [1], indirect=True)
def test_diffserv_in_the_emulator_keeps_the_ef_stream_under_a_flood(lane, tmp_path):
    """A 32 kbit/s EF stream (132 B IP, TOS 0xb8) and a 256 kbit/s best-effort UDP flood for
    4 s through the emulator's router stage at 64 kbit/s: strict priority keeps EF whole."""
    require_programs("squall-emulator", "squall-npa", "squall-udp")
    config = parse_router({**EF_BE, "engine": "emulator"}, WHERE, RATE_BPS)
    ef = Flow(7001, ["--size", "104", "--rate", "32kbit", "--duration", "4s", "--tos", "0xb8"])
    be = Flow(7002, ["--size", "500", "--rate", "256kbit", "--duration", "4s"])
    out = _run(lane, error_free(RATE_BPS, DELAY_US, MTU, send_buffer=MTU), config, tmp_path / "rep", [ef, be])

    assert be.received < be.sent / 2, "the flood should have saturated the link"
    assert ef.received >= 0.95 * ef.sent, f"EF got {ef.received} of {ef.sent}"
    classes = {c["class"]: c for c in out.stats["class"]}
    assert set(classes) == {"EF", "BE"}
    assert classes["EF"]["arrivals"] == len(_events(out.log, "in", dport=7001)) == ef.sent
    assert classes["EF"]["drops"] == 0
    assert classes["BE"]["arrivals"] == len(_events(out.log, "in")) - ef.sent
    drops = _events(out.log, "drop_router")
    assert classes["BE"]["drops"] == len(drops) == be.sent - be.received
    assert all(e.dport == 7002 for e in drops)
    assert sum(c["enqueued"] for c in classes.values()) == len(_events(out.log, "enqueue"))


@pytest.mark.parametrize("lane", [2], indirect=True)
def test_red_with_ecn_in_the_emulator_marks_ect_packets_and_counts_them(lane, tmp_path):
    """This kernel has no sch_red: the emulator engine runs the IIP RED queue. An ECT(0) flood
    (TOS 0x02) at eight times the link's rate: RED signals by marking, never by dropping; only
    the 11000 B hard limit drops. The class counters are the log's events. With w_q = 1/512 the
    average passes min only after about 140 arrivals and, as every arrival counts but only one
    in eight is admitted, 300 arrivals gave 0 or 1 marks; 600 take it past max, where every
    admitted packet is marked."""
    require_programs("squall-emulator", "squall-npa", "squall-udp")
    red = {"engine": "emulator", "queue": {"discipline": "red", "limit": "11000B", "min": "2000B",
                                           "max": "6000B", "avpkt": "500B", "ecn": True}}
    flood = Flow(7001, ["--size", "500", "--rate", "512kbit", "--count", "600", "--tos", "0x02"])
    out = _run(lane, error_free(RATE_BPS, DELAY_US, MTU, send_buffer=MTU), parse_router(red, WHERE, RATE_BPS),
               tmp_path / "rep", [flood])

    (only,) = out.stats["class"]
    marks, drops = _events(out.log, "ecn_mark"), _events(out.log, "drop_router")
    print(f"sent {flood.sent}, received {flood.received}; class {only}")
    assert only["marks"] == len(marks) >= 10, "the average queue should have passed max"
    assert only["red_drops"] == 0, "ECN-capable packets are marked, not dropped"
    assert only["drops"] == only["tail_drops"] == len(drops) == flood.sent - flood.received > 0
    assert out.stats["events"] == {"down": {"drop_router": len(drops), "ecn_mark": len(marks)}}
    assert {e.pkt_id for e in marks}.isdisjoint(e.pkt_id for e in drops)


TUNSETIFF = 0x400454CA
IFF_TUN_NO_PI = 0x0001 | 0x1000


def test_a_stalled_tun_drops_and_its_qdisc_never_holds_a_backlog():
    """Why the tc engine cannot be Seawind's router on a current kernel: a TUN nobody reads
    (the NPA stopped reading because the link's send buffer is full) with a 1000-packet pfifo
    on its egress. 600 datagrams go in; the qdisc passes every one at once (backlog 0, no
    drop) and the TUN drops all that do not fit its ring of tx_queue_len packets (20 here:
    581 drops; with the default 500: 101). Linux 2.4's tun stopped the device queue at 10
    packets instead, and the qdisc held the rest (docs/router.md)."""
    ns = f"sq{int(os.environ.get('SQUALL_TEST_EMU_ROUTER_LANE', '100')) + 4}-tunstall"
    subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        done = subprocess.run(["ip", "netns", "exec", ns, "python3", "-c", _STALLED_TUN], capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    print(result)
    assert result["qdisc"]["packets"] == 600 and result["qdisc"]["drops"] == 0
    assert result["qdisc"]["backlog_pkts"] == 0
    assert result["tun_tx_dropped"] >= 600 - 20


# Run inside the namespace: a TUN held open and never read, pfifo 1000 on its egress.
_STALLED_TUN = f"""
import fcntl, json, os, socket, struct, subprocess, time
fd = os.open("/dev/net/tun", os.O_RDWR)
fcntl.ioctl(fd, {TUNSETIFF}, struct.pack("16sH", b"sqstall0", {IFF_TUN_NO_PI}))
def sh(*a): return subprocess.run(a, check=True, capture_output=True, text=True).stdout
sh("ip", "link", "set", "lo", "up")
sh("ip", "addr", "add", "198.18.250.1/24", "dev", "sqstall0")
sh("ip", "link", "set", "sqstall0", "txqueuelen", "20", "up")
sh("tc", "qdisc", "replace", "dev", "sqstall0", "root", "pfifo", "limit", "1000")
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(600):
    s.sendto(b"x" * 132, ("198.18.250.2", 9))
time.sleep(0.3)
q = json.loads(sh("tc", "-s", "-j", "qdisc", "show", "dev", "sqstall0"))[0]
tx = json.loads(sh("ip", "-s", "-j", "link", "show", "sqstall0"))[0]["stats64"]["tx"]
print(json.dumps({{"qdisc": {{"packets": q["packets"], "drops": q["drops"], "backlog_pkts": q["qlen"]}},
                  "tun_tx_dropped": tx["dropped"]}}))
"""


@pytest.mark.parametrize("lane", [5], indirect=True)
def test_dualpi2_in_the_emulator_gives_the_ect1_flow_the_l_queue(lane, tmp_path):
    """A classic UDP flood (Not-ECT, 1.05 Mbit/s of 528 B IP) and an L4S-marked UDP flow
    (squall-udp --tos 0x01: ECT(1) on the wire, 64 kbit/s) into a 1 Mbit/s link with DualPI2
    in the emulator's router stage. The ECT(1) packets take the L queue: they wait about one
    classic packet's transmission (4.2 ms) while the flood's wait around the 15 ms target
    (measured: medians 2.1 ms and 15.9 ms); the flood loses what the link cannot carry (p'^2
    of it, 10-20 %), the L flow is marked instead (k p' and the 1 ms step). With p' near 0.4,
    k p' passes 1 now and then, and an L packet is then dropped with p'^2: 5 of 128 here (7 with
    a 1.1 Mbit/s flood); bound: at most 10 %."""
    require_programs("squall-emulator", "squall-npa", "squall-udp")
    rate = 1_000_000
    dualpi2 = {"engine": "emulator", "queue": {"discipline": "dualpi2"}}
    classic = Flow(7001, ["--size", "500", "--rate", "1050kbit", "--duration", "8s"])
    l4s = Flow(7002, ["--size", "500", "--rate", "64kbit", "--duration", "8s", "--tos", "0x01"])
    out = _run(lane, error_free(rate, DELAY_US, MTU, send_buffer=MTU), parse_router(dualpi2, WHERE, rate),
               tmp_path / "rep", [classic, l4s])

    arrived = {e.pkt_id: e.time_us for e in _events(out.log, "in")}
    def waits(port: int) -> list[int]:
        return sorted(e.time_us - arrived[e.pkt_id] for e in _events(out.log, "enqueue", dport=port))
    l_waits, c_waits = waits(7002), waits(7001)
    marked = {e.pkt_id for e in _events(out.log, "ecn_mark")}
    l_ids = {e.pkt_id for e in _events(out.log, "in", dport=7002)}
    print(f"classic {classic.sent}/{classic.received}, l4s {l4s.sent}/{l4s.received}, L marked "
          f"{len(marked & l_ids)}, L median wait {l_waits[len(l_waits) // 2]} us, C {c_waits[len(c_waits) // 2]} us")
    assert l4s.sent > 100 and classic.sent - classic.received > 0.05 * classic.sent
    assert l4s.sent - l4s.received <= 0.1 * l4s.sent
    assert len(marked & l_ids) > 0.5 * l4s.sent, "ECT(1) packets are marked, not dropped"
    assert not marked - l_ids, "the classic flood is Not-ECT: dropped, never marked"
    assert l_waits[len(l_waits) // 2] < 6_000 < c_waits[len(c_waits) // 2] < 40_000
