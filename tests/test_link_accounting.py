"""Every packet the fixed host sends is accounted for by the emulator log.

Captures on the fixed host's eth0 and the mobile host's wl0 are joined with the log
by packet identity (emulator/LOG_FORMAT.md), never by time.
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from analysis.read.emulog import read_emulator_log
from analysis.join.by_identity import join_capture
from analysis.read.pcap import read_packets
from conftest import require_programs, run_to_completion
from testbed.lanes.capture import Capture
from testbed.link.session import LinkSession
from testbed.paths import program_path
from testbed.processes import ProgramGroup
from testbed.link.simple import direction, periodic_channel, symmetric

pytestmark = pytest.mark.netns
DROPS = ("drop_mtu", "drop_sbuf", "drop_router", "drop_err")


def lossy_link():
    # Bad half of the time with 80 % frame errors and no ARQ (error drops), and a send
    # buffer of two packets under a sender faster than the link (congestion drops).
    d = direction(64_000, 100_000, 576, send_buffer=1100, error_bad=0.8)
    return symmetric("lossy", d, periodic_channel(good_us=700_000, bad_us=700_000))


def test_every_sent_packet_is_delivered_with_an_out_event_or_dropped_with_a_drop_event(lane, tmp_path: Path) -> None:
    require_programs("squall-emulator", "squall-npa", "squall-udp")
    udp = str(program_path("squall-udp"))
    target = f"{lane.mobile_host}:6001"
    sent_pcap, recv_pcap = tmp_path / "fixed.pcap", tmp_path / "mobile.pcap"
    with LinkSession(lane, lossy_link(), tmp_path / "link") as session, \
            ProgramGroup(tmp_path / "workload") as group, \
            Capture(lane.ns.fixed, lane.fixed_eth.dev, sent_pcap, f"udp and dst host {lane.mobile_host}"), \
            Capture(lane.ns.mobile, lane.mobile_wireless.dev, recv_pcap, "udp"):
        group.start("udp-recv", lane.ns.mobile, [udp, "recv", "--listen", target])
        group.wait_ready("udp-recv", "listening", 5)
        # 500 B payload = 528 B packets every 50 ms: 84 kbit/s into a 64 kbit/s link.
        run_to_completion(group, "udp-send", lane.ns.fixed,
                          [udp, "send", "--connect", target, "--size", "500", "--rate", "20pps",
                           "--count", "80"], timeout_s=30)
        time.sleep(0.5)   # let the link drain: 2 packets in the buffer + 100 ms delay
    log = read_emulator_log(session.result.log_path)
    assert not log.cut_short
    # The log alone says which link produced it.
    assert log.config["down.send_buffer"] == "1100B" and float(log.config["down.error_bad"]) == 0.8
    # joined by packet identity: sent packets with `in` events, received ones with `out`
    sent = read_packets(sent_pcap)
    fates = join_capture(sent, log, "fixed")
    fate_of = {fates[p.frame_no].pkt_id: fates[p.frame_no].fate for p in sent}
    received = read_packets(recv_pcap)
    arrivals = join_capture(received, log, "mobile")
    received_ids = [arrivals[p.frame_no].pkt_id for p in received]
    delivered = {e.pkt_id for e in log.events if e.dir == "down" and e.event == "out"}

    assert len(sent) == 80 and len(fate_of) == 80 and None not in fate_of, \
        "every packet the fixed host sent must have entered the link once"
    assert None not in received_ids, "a packet reached the mobile host without an `out` event"
    assert sorted(received_ids) == sorted(delivered), \
        "an `out` event without the packet at the mobile host (or twice)"
    assert all(fate_of.get(pkt_id) == "out" for pkt_id in delivered), \
        "a packet at the mobile host that the fixed host did not send, or that was also dropped"
    lost = {pkt_id: fate for pkt_id, fate in fate_of.items() if pkt_id not in delivered}
    assert all(fate in DROPS for fate in lost.values()), f"lost without a drop_* event: {lost}"
    causes = set(lost.values())
    assert {"drop_sbuf", "drop_err"} <= causes, f"the profile should cause both kinds of drop, got {causes}"
