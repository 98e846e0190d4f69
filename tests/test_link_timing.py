"""Real traffic through an emulated link takes the time the link parameters predict."""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import require_programs
from testbed.link.session import LinkSession
from testbed.lanes.link_measure import (bulk_transfer, ping_rtts_us, predicted_goodput_bps, predicted_ping_rtt_us,
                             set_congestion_control, tcp_options_len)
from testbed.link.simple import error_free
from test_link_arq import TYPICAL_US, assert_on_time

RATE_BPS, DELAY_US, MTU = 64_000, 300_000, 576
pytestmark = pytest.mark.netns


def test_predictions_follow_the_link_parameters() -> None:
    assert predicted_ping_rtt_us(RATE_BPS, DELAY_US) == pytest.approx(621_000)
    assert predicted_goodput_bps(RATE_BPS, MTU, 12) == pytest.approx(64_000 * 524 / 576)


def test_ping_rtt_equals_serialisation_both_ways_plus_twice_the_delay(lane, tmp_path: Path) -> None:
    require_programs("squall-emulator", "squall-npa")
    # 84-byte pings: 2 x 10.5 ms (84 B at 64 kbit/s) + 2 x 300 ms = 621 ms.
    predicted_us = predicted_ping_rtt_us(RATE_BPS, DELAY_US)
    with LinkSession(lane, error_free(RATE_BPS, DELAY_US, MTU), tmp_path) as session:
        assert session.mtu == {"npa-router": MTU, "npa-mobile": MTU}
        rtts = ping_rtts_us(lane, tmp_path, count=5)
    assert len(rtts) == 5
    # the model is exact; real-time delivery adds its error (test_link_arq.assert_on_time), here
    # four times (both directions' ingress and egress) and ping's own user-space timing
    assert_on_time([rtt - predicted_us for rtt in rtts], f"RTTs {rtts} µs; predicted {predicted_us} µs",
                   typical_us=2 * TYPICAL_US)
    assert session.result.stop_acknowledged and session.result.exit_codes["emulator"] == 0


def test_bulk_tcp_goodput_is_what_the_mss_to_mtu_ratio_allows(lane, tmp_path: Path) -> None:
    require_programs("squall-emulator", "squall-npa", "squall-bulk")
    # Goodput = rate x (MTU - 40 - TCP options) / MTU: with timestamps each 576-byte
    # segment carries 576 - 20 (IP) - 20 (TCP) - 12 (options) = 524 bytes -> 58 222 bit/s.
    # Measured = 8 x bytes received / (last - first data segment on the receiver's wl0).
    options = tcp_options_len(lane.ns.fixed)
    # The prediction needs a sender that keeps the link busy: a loss-based congestion
    # control. (BBR, a common default, drains the queue every 10 s in ProbeRTT on purpose.)
    set_congestion_control(lane.ns.fixed, "reno")
    predicted_bps = predicted_goodput_bps(RATE_BPS, MTU, options)
    count, length = 100, 2096   # 209 600 bytes
    # A send buffer larger than the transfer: no congestion drop on the error-free link.
    link = error_free(RATE_BPS, DELAY_US, MTU, send_buffer=1_000_000)
    with LinkSession(lane, link, tmp_path / "link") as session:
        result = bulk_transfer(lane, tmp_path / "bulk", count=count, length=length, timeout_s=120)
    assert result.sender["bytes"] == result.bytes == count * length
    assert result.goodput_bps == pytest.approx(predicted_bps, rel=0.03), \
        f"goodput {result.goodput_bps:.0f} bit/s; predicted {predicted_bps:.0f} bit/s (TCP options {options} B)"
    assert session.result.exit_codes["emulator"] == 0
