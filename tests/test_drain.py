"""The drain after a replication's flows (testbed/run/replication.py, docs/runner.md step 8):
it waits for a lost segment's retransmission at the sender's RTO, which can come after the
link's worst case, and no longer than DRAIN_LIMIT_S."""
from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from testbed.link.control import LinkState
from testbed.run import drain_bound, replication
from testbed.scenario import loader
from testbed.scenario.cell import ResolvedCell

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
    monkeypatch.setattr(drain_bound, "DRAIN_LIMIT_S", 0.3)
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


def test_a_link_whose_worst_case_exceeds_the_limit_is_drained_no_longer_than_the_limit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A packet that never leaves (a 30 s delay): the drain ends at DRAIN_LIMIT_S, not at the
    link's worst case (it waited 60 s and more before)."""
    monkeypatch.setattr(drain_bound, "DRAIN_LIMIT_S", 0.3)
    t = time.monotonic()
    drain = replication._drain(BusyLink(60.0), ends(None, None), longest_s=60.2, stop=threading.Event())
    assert drain["ended_by"] == "longest" and drain["pending"] == 1, drain
    assert 0.3 <= time.monotonic() - t < 1.0


def link(tmp_path: Path, text: str) -> ResolvedCell:
    path = tmp_path / "s.toml"
    path.write_text('seed = 1\ntimeout = "60s"\n' + text)
    return loader.load(path).cells[0]


def test_the_send_buffer_and_the_router_stage_count_in_the_worst_case(tmp_path: Path) -> None:
    """What is queued ahead of a packet leaves at the link's rate before it: 12 000 B at
    64 kbit/s is 1.5 s (the UDP receiver was stopped after the delay and 1 s, before the
    link had delivered what its send buffer held); a router's 10 packets of 576 B 0.72 s more."""
    base = ('[link]\nbandwidth = "64kbit"\ndelay = "100ms"\nmtu = "576B"\nsend_buffer = "12000B"\n'
            'arq = { retransmissions = 2, delay = "700ms" }\nerror = { good = 0.0, bad = 0.5 }\n'
            'channel = "iip-short"\n')
    cell = link(tmp_path, base)
    assert drain_bound.queued_s(cell.link, "down") == pytest.approx(1.5)
    assert drain_bound.receiver_wait_s(cell.link, "up") == pytest.approx(1.5 + 0.1 + 1.4 + 1.0)
    routed = link(tmp_path, base + '[router]\nqueue = { discipline = "pfifo", limit = 10 }\n')
    assert drain_bound.queued_s(routed.link, "down", routed.router) == pytest.approx(1.5 + 0.72)
    assert drain_bound.queued_s(routed.link, "up", routed.router) == pytest.approx(1.5)
    assert drain_bound.link_drain_s(routed.link, routed.router) == pytest.approx(
        2 * (1.5 + 0.1 + 1.4) + 0.72 + drain_bound.DRAIN_MARGIN_S)
    # an uplink router ([router.up]) counts on the uplink only; both count in the link's worst case
    both = link(tmp_path, base + '[router]\nengine = "emulator"\nqueue = { discipline = "pfifo", limit = 10 }\n'
                '[router.up]\nqueue = { discipline = "pfifo", limit = 5 }\n')
    assert drain_bound.queued_s(both.link, "up", both.routers) == pytest.approx(1.5 + 0.36)
    assert drain_bound.queued_s(both.link, "down", both.routers) == pytest.approx(1.5 + 0.72)
    assert drain_bound.link_drain_s(both.link, both.routers) == pytest.approx(
        2 * (1.5 + 0.1 + 1.4) + 0.72 + 0.36 + drain_bound.DRAIN_MARGIN_S)


def test_a_udp_receiver_is_kept_until_the_send_buffer_has_drained(tmp_path: Path) -> None:
    """The receiver of a stream that ended is signalled only once the link's worst case for
    its last datagram (send buffer at the rate, delay, retries) is over."""
    cell = link(tmp_path, '[link]\nbandwidth = "64kbit"\ndelay = "100ms"\nmtu = "576B"\nsend_buffer = "12000B"\n'
                          '[flows.voice]\nkind = "udp"\nsize = "132B"\nrate = "16kbit"\nduration = "2s"\n')

    class Receiver:
        signalled: list[int] = []

        class proc:
            returncode = 0

            @staticmethod
            def poll() -> None:
                return None

            @staticmethod
            def send_signal(sig: int) -> None:
                Receiver.signalled.append(sig)

    item = replication.RunningFlow(cell.flows[0], 6001, None, None)
    item.ended_at, item.passive = 100.0, Receiver
    replication._advance(item, cell, 100.0 + 2.5)     # long after the delay and 1 s, the old rule
    replication._advance(item, cell, 100.0 + 1.5 + 0.1 + 1.0 + 0.01)
    assert Receiver.signalled and item.passive_stopped
