"""Release at the NPA end to end (emulator/README.md, "Release at the NPA"): with
`release_ahead`, the emulator sends decided packets ahead to the NPAs of its lane (they share
its clock), the NPAs write them at their release time, and the link still takes the time its
parameters predict. Run on the lane of $SQUALL_TEST_LANE_BASE like the other lane tests."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import require_programs
from testbed.lanes.link_measure import ping_rtts_us, predicted_ping_rtt_us
from testbed.link.session import MOBILE_NPA, ROUTER_NPA, LinkSession
from testbed.link.simple import error_free
from test_link_arq import TYPICAL_US, assert_on_time

RATE_BPS, DELAY_US, MTU = 1_000_000, 20_000, 1500
pytestmark = pytest.mark.netns


def counters(stderr: str) -> dict[str, int]:
    line = next(l for l in stderr.splitlines() if "counters" in l)
    return {k: int(v) for k, v in (w.split("=") for w in line.split() if "=" in w)}


def test_pings_are_released_by_the_npas_on_time(lane, tmp_path: Path) -> None:
    require_programs("squall-emulator", "squall-npa")
    predicted_us = predicted_ping_rtt_us(RATE_BPS, DELAY_US)
    with LinkSession(lane, error_free(RATE_BPS, DELAY_US, MTU), tmp_path, release_ahead_us=2000) as session:
        rtts = ping_rtts_us(lane, tmp_path, count=5, interval_s=0.2)
    assert len(rtts) == 5
    assert_on_time([rtt - predicted_us for rtt in rtts], f"RTTs {rtts} µs; predicted {predicted_us} µs",
                   typical_us=2 * TYPICAL_US)
    result = session.result
    assert result.stop_acknowledged and result.exit_codes["emulator"] == 0
    log = result.log_path.read_text()
    sent = re.search(r"^# sent_ahead down (\d+) up (\d+)$", log, re.M)
    assert sent and int(sent[1]) >= 5 and int(sent[2]) >= 5, sent
    assert re.search(r"^# config release_ahead = 2000us$", log, re.M)
    outs = len(re.findall(r"^\d+\tout\t", log, re.M))
    late = re.search(r"^# lateness_us n (\d+) ", log, re.M)
    assert late and int(late[1]) == outs - int(sent[1]) - int(sent[2])   # only the others
    # the delivery threads' lock: its holders' time includes the system calls made holding it
    lock = re.search(r"^# standby cpu -?\d+ takeovers \d+ locked_us (\d+) receiving_us (\d+) sending_us (\d+)$", log, re.M)
    assert lock, log[-600:]
    held, receiving, sending = (int(x) for x in lock.groups())
    assert receiving > 0 and sending > 0 and held >= receiving + sending, lock[0]
    for npa in (ROUTER_NPA, MOBILE_NPA):
        c = counters(result.stderr[npa])
        assert c["release_held"] >= 5 and c["release_full"] == 0, c
        assert c["release_late_n"] + c["release_flushed"] == c["release_held"], c
