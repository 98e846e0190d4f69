"""The router engines end to end on a real lane: tc's HTB on wl0 versus the emulator's router stage.

fixed host --> emu (IP forwarding[, HTB on wl0]) --> router NPA --> emulator[ router stage] --> mobile.
Each engine as the runner drives it: LinkSession (with the router for the emulator engine),
RouterRun, traffic, the link closed, RouterRun.finish(). Lanes $SQUALL_TEST_EMU_ROUTER_LANE
(default 100) and the next ones, up to +9.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from analysis.emulog import EmulatorLog, LogEvent, read_emulator_log
from conftest import built_lane, require_programs
from support_udp import udp_in, udp_summary

from testbed.addresses import LaneAddresses
from testbed.link import LinkConfig
from testbed.link_session import LinkSession, bin_dir
from testbed.router_config import RouterConfig, parse_router
from testbed.router_session import EMULATOR_STATS_FILE, RouterRun, RouterStatsError
from testbed.simple_link import error_free

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
        with RouterRun(lane.ns.emu, config, rep, bin_dir=bin_dir(), dev=lane.emu_wireless.dev,
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


@pytest.mark.parametrize("lane", [0], indirect=True)
def test_tail_drop_20_packets_loses_alike_with_both_engines(lane, tmp_path):
    """Same flood, same 20-packet tail drop at the link's rate. The tc router drains into the
    study's 9600 B send buffer at the link's rate, so that buffer never overflows; the
    emulator engine gets send_buffer = mtu (docs/router.md) so that its router queue is
    the bottleneck as well. Tolerance: 8 of about 80 drops (10 %). HTB's bucket lets a few
    packets through at once (5 in our runs: the send buffer reached 2640 B), so tc loses
    about 3 fewer, and HTB is a token bucket on kernel timers on a shared machine where
    the emulator serialises each packet for exactly 66 ms. The emulator engine with the
    study's 9600 B send buffer loses about 14 fewer (68): outside the tolerance."""
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
    (TOS 0x02) at four times the link's rate: RED signals by marking, never by dropping; only
    the 11000 B hard limit drops. The class counters are the log's events."""
    require_programs("squall-emulator", "squall-npa", "squall-udp")
    red = {"engine": "emulator", "queue": {"discipline": "red", "limit": "11000B", "min": "2000B",
                                           "max": "6000B", "avpkt": "500B", "ecn": True}}
    flood = Flow(7001, ["--size", "500", "--rate", "256kbit", "--count", "300", "--tos", "0x02"])
    out = _run(lane, error_free(RATE_BPS, DELAY_US, MTU, send_buffer=MTU), parse_router(red, WHERE, RATE_BPS),
               tmp_path / "rep", [flood])

    (only,) = out.stats["class"]
    marks, drops = _events(out.log, "ecn_mark"), _events(out.log, "drop_router")
    assert only["marks"] == len(marks) > 0, "the average queue should have passed min"
    assert only["red_drops"] == 0, "ECN-capable packets are marked, not dropped"
    assert only["drops"] == only["tail_drops"] == len(drops) == flood.sent - flood.received > 0
    assert out.stats["events"] == {"down": {"drop_router": len(drops), "ecn_mark": len(marks)}}
    assert {e.pkt_id for e in marks}.isdisjoint(e.pkt_id for e in drops)
