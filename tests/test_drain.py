"""The drain after a replication's flows (testbed/run/replication.py, docs/runner.md step 8):
it waits for a lost segment's retransmission at the sender's RTO, which can come after the
link's worst case, and no longer than DRAIN_LIMIT_S."""
from __future__ import annotations

import threading
import time

import pytest

from testbed.link.control import LinkState
from testbed.run import replication

HEADER = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
FIXED, MOBILE = "011412C6", "021412C6"       # 198.18.20.1, .2 as the tables write them


class EmptyLink:
    def state(self) -> LinkState:
        return LinkState(pending=0, last_us=0, now_us=10_000_000)


class Host:
    """The mobile host: a FIN in LAST_ACK (retransmitted at `retransmit_at`, acknowledged
    `settle_after` s after that) or nothing; the fixed host: nothing."""
    def __init__(self, address: str, peer_hex: str, own_hex: str, retransmit_in_s: float | None = None,
                 settles_in_s: float | None = None) -> None:
        self.address, self.peer_hex, self.own_hex = address, peer_hex, own_hex
        t = time.monotonic()
        self.retransmit_at = None if retransmit_in_s is None else t + retransmit_in_s
        self.settles_at = None if settles_in_s is None else t + settles_in_s

    def read_proc(self, paths) -> str:
        now = time.monotonic()
        if self.retransmit_at is None or (self.settles_at is not None and now >= self.settles_at):
            return HEADER
        ticks = max(0, round((self.retransmit_at - now) * 100))
        return HEADER + (f"   0: {self.own_hex}:138B {self.peer_hex}:C4DE 09 00000000:00000000 01:{ticks:08X} "
                         "00000002 0 0 1 1\n")


class BusyLink:
    """A packet stays inside until `empty_in_s` (an ACK that entered late in the drain)."""
    def __init__(self, empty_in_s: float) -> None:
        self.empty_at = time.monotonic() + empty_in_s

    def state(self) -> LinkState:
        return LinkState(pending=int(time.monotonic() < self.empty_at), last_us=0, now_us=10_000_000)


def ends(retransmit_in_s: float | None, settles_in_s: float | None):
    return (Host("198.18.20.1", MOBILE, FIXED),
            Host("198.18.20.2", FIXED, MOBILE, retransmit_in_s, settles_in_s))


def test_a_fin_retransmitted_after_the_links_worst_case_is_waited_for() -> None:
    drain = replication._drain(EmptyLink(), ends(0.4, 0.5), longest_s=0.1, stop=threading.Event())
    assert drain["ended_by"] == "settled", drain
    assert 0.45 <= drain["waited_for_retransmission_s"] < 2.0


def test_a_settled_end_within_the_worst_case_says_nothing_more() -> None:
    drain = replication._drain(EmptyLink(), ends(None, None), longest_s=0.1, stop=threading.Event())
    assert drain == {"ended_by": "settled", "longest_s": 0.1}


def test_the_wait_for_a_retransmission_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(replication, "DRAIN_LIMIT_S", 0.3)
    t = time.monotonic()
    drain = replication._drain(EmptyLink(), ends(60.0, None), longest_s=0.1, stop=threading.Event())
    assert drain["ended_by"] == "longest" and drain["unsettled_connections"] == 1, drain
    assert drain["unsettled"] == ["mobile: LAST_ACK 0 B queued, retransmit"]    # what it waited on
    assert 0.3 <= time.monotonic() - t < 1.5
    assert drain["waited_for_retransmission_s"] >= 0.3


def test_a_fin_acknowledged_in_time_is_not_a_wait_for_its_retransmission() -> None:
    """Every unacknowledged FIN has its timer armed; only one still waiting after the link's
    worst case extends the drain."""
    drain = replication._drain(EmptyLink(), ends(5.0, 0.1), longest_s=0.3, stop=threading.Event())
    assert drain == {"ended_by": "settled", "longest_s": 0.3}


def test_a_timed_out_replication_does_not_wait_for_retransmissions() -> None:
    """Its flows' connections still send; the link's worst case is all it gets."""
    t = time.monotonic()
    drain = replication._drain(EmptyLink(), ends(0.4, 0.5), longest_s=0.1, stop=threading.Event(),
                               wait_for_retransmissions=False)
    assert drain["ended_by"] == "longest" and "waited_for_retransmission_s" not in drain, drain
    assert time.monotonic() - t < 0.35


def test_a_packet_still_in_the_link_at_the_worst_case_does_not_hide_a_waiting_fin() -> None:
    """The client's ACK of the server's FIN was lost and a later ACK entered the link just
    before the worst case was up: the FIN's retransmission is still waited for (it ended the
    drain with the FIN unacknowledged and the main object's throughput undefined)."""
    drain = replication._drain(BusyLink(0.2), ends(0.4, 0.5), longest_s=0.1, stop=threading.Event())
    assert drain["ended_by"] == "settled", drain
    assert 0.45 <= drain["waited_for_retransmission_s"] < 2.0
