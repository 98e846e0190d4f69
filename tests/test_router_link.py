"""The tc router where it belongs: on the router-side TUN of a real emulated link.

fixed host --> emu (IP forwarding, HTB on wl0) --> router NPA --> emulator --> mobile NPA --> mobile host.
The link runs at 64 kbit/s with a send buffer too large to overflow, so every drop is the
router's. Lane $SQUALL_TEST_ROUTER_LANE + 9 (default 69).
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import built_lane, require_programs
from support_udp import udp_in, udp_summary

from analysis.read.emulog import read_emulator_log
from testbed.lanes.hosts import NamespaceTestbed
from testbed.link.session import LinkSession
from testbed.router.parse import parse_router
from testbed.router.monitor import read_queue_samples
from testbed.router.session import RouterRun
from testbed.link.simple import error_free

pytestmark = pytest.mark.netns
RATE_BPS, MTU = 64_000, 576


@pytest.fixture
def router_lane():
    with built_lane(int(os.environ.get("SQUALL_TEST_ROUTER_LANE", "60")) + 9) as addr:
        yield addr


def test_pfifo_20_in_front_of_the_emulated_link(router_lane, tmp_path: Path) -> None:
    require_programs("squall-emulator", "squall-npa", "squall-udp", "squall-queue-monitor")
    lane = router_lane
    config = parse_router({"queue": {"discipline": "pfifo", "limit": 20}}, "test: router", RATE_BPS)
    link = error_free(RATE_BPS, 50_000, MTU, send_buffer=1_000_000)
    rep = tmp_path / "rep"
    rep.mkdir()
    dest = f"{lane.mobile_wireless.address}:7001"
    with LinkSession(lane, link, tmp_path / "link") as session:
        with RouterRun(NamespaceTestbed(lane).emu, config, rep, dev=lane.emu_wireless.dev,
                       interval_us=1000) as router:
            router.start_monitor(t0_realtime_us=session.start_realtime_us)
            receiver = udp_in(lane.ns.mobile, ["recv", "--listen", dest, "--idle-timeout", "3s", "--duration", "60s"])
            try:
                assert receiver.stdout.readline().startswith("listening ")
                sent = udp_summary(udp_in(lane.ns.fixed, ["send", "--connect", dest, "--size", "500",
                                                       "--rate", "max", "--count", "100"]), 60)
                received = udp_summary(receiver, 60)
            finally:
                if receiver.poll() is None:
                    receiver.kill()
                    receiver.wait()
            stats = router.finish()
    leaf = next(q for q in stats["qdisc"] if q["handle"] == "10:")
    assert sent["packets"] == 100
    assert 20 <= received["received"] < 100
    assert leaf["drops"] == sent["packets"] - received["received"]
    # The router's drops are exactly the datagrams that never reached the emulator.
    log = read_emulator_log(session.result.log_path)
    entered = sum(1 for e in log.events if e.event == "in" and e.dir == "down" and e.dport == 7001)
    assert leaf["drops"] == sent["packets"] - entered
    assert not [e for e in log.events if e.event.startswith("drop_")]
    samples = read_queue_samples(rep / "router-queue.tsv")
    rows = samples.of("qdisc", "10:")
    assert max(r.backlog_pkts for r in rows) == 20
    assert rows[-1].drops == leaf["drops"]
    # Times are on the emulator log's clock: the monitor started after t = 0.
    assert samples.t0_realtime_us == session.start_realtime_us
    assert 0 <= rows[0].time_us < rows[-1].time_us
    # The shaped queue drains at the link rate: 528-byte IP packets at 64 kbit/s, 66 ms each.
    busy = [r.time_us for r in rows if r.backlog_pkts > 0]
    drained_us = busy[-1] - busy[0]
    assert drained_us >= 19 * 66_000 * 0.9, f"queue busy for {drained_us} µs; received {received['received']}"
