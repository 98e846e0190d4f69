"""validation/rto_causes.py: the cause of an unnecessary RTO from when the data and the ACKs
crossed the link (µs on one clock) and what the link did with each ACK."""
from collections import Counter
from pathlib import Path

import pytest

from test_analysis_support import FIXED, MOBILE, ScriptedLink, tcp
from validation.rto_causes import cause, replication_causes

RTO_AT = 1_000_000


def test_data_still_in_the_link_at_the_rto() -> None:
    assert cause(RTO_AT, 1_200_000, [(1_210_000, True)], [1_600_000]) == "data late"
    assert cause(RTO_AT, None, [], []) == "data late"


def test_receiver_had_it_but_acknowledged_only_after_the_rto() -> None:
    assert cause(RTO_AT, 900_000, [(1_100_000, True)], [1_500_000]) == "receiver late"


def test_the_ack_was_on_its_way_back_at_the_rto() -> None:
    # sent at 0.7 s, arrived at 1.05 s; the next ACK left only at 1.3 s
    assert cause(RTO_AT, 600_000, [(700_000, True), (1_300_000, True)], [1_050_000, 1_650_000]) == "ack in flight"


def test_an_ack_held_by_the_uplink_arq_past_a_later_one_is_in_flight_not_lost() -> None:
    """Sent at 0.7 s and delivered by the link, but only at 2.4 s, after the ACK sent at 1.3 s
    had left: arrival order alone would call it lost."""
    assert cause(RTO_AT, 600_000, [(700_000, True), (1_300_000, True)], [2_400_000, 2_410_000]) == "ack in flight"


def test_the_ack_was_lost_and_a_later_one_covered_the_data() -> None:
    # sent at 0.7 s, dropped by the link; the first arrival (1.65 s) is the ACK sent at 1.3 s
    assert cause(RTO_AT, 600_000, [(700_000, False), (1_300_000, True)], [1_650_000]) == "ack lost"
    assert cause(RTO_AT, 600_000, [(700_000, False)], []) == "ack lost"


def test_an_ack_that_arrived_before_the_rto_is_named_apart() -> None:
    assert cause(RTO_AT, 600_000, [(700_000, True)], [950_000]) == "acked before"


def test_an_ack_the_log_says_nothing_of_is_not_called_lost() -> None:
    """Still in the link at STOP or not joined: neither delivered nor dropped."""
    assert cause(RTO_AT, 600_000, [(700_000, None)], []) == "ack unknown"
    assert cause(RTO_AT, 600_000, [(700_000, False), (800_000, None)], []) == "ack unknown"
    assert cause(RTO_AT, 600_000, [(700_000, None), (800_000, True)], [1_400_000]) == "ack in flight"


# --- each ACK's fate, joined from the emulator log (replication_causes) ----------------------
# The mobile host fetches from the fixed host: one 500-byte segment at 0.3 s reaches it at
# 0.4 s; its ACK leaves at 0.45 s with the fate under test. The fixed host times out at 1 s
# and resends (unnecessary: the original was delivered); the duplicate reaches the mobile
# host at 1.1 s, whose second ACK leaves then and arrives at 1.2 s.

MS = 1000
C_ISN, S_ISN, CPORT, SPORT = 1000, 5000, 40000, 8080


def fetch(ack_fate: str, **ack: object) -> ScriptedLink:
    link = ScriptedLink()
    link.send(0, tcp(MOBILE, FIXED, CPORT, SPORT, C_ISN, 0, "S"))
    link.send(100 * MS, tcp(FIXED, MOBILE, SPORT, CPORT, S_ISN, C_ISN + 1, "SA"))
    link.send(200 * MS, tcp(MOBILE, FIXED, CPORT, SPORT, C_ISN + 1, S_ISN + 1, "A"))
    link.send(300 * MS, tcp(FIXED, MOBILE, SPORT, CPORT, S_ISN + 1, C_ISN + 1, "PA", 500))
    link.send(450 * MS, tcp(MOBILE, FIXED, CPORT, SPORT, C_ISN + 1, S_ISN + 501, "A"), ack_fate, **ack)
    link.send(1000 * MS, tcp(FIXED, MOBILE, SPORT, CPORT, S_ISN + 1, C_ISN + 1, "PA", 500))
    link.send(1100 * MS, tcp(MOBILE, FIXED, CPORT, SPORT, C_ISN + 1, S_ISN + 501, "A"))
    return link


@pytest.mark.parametrize("ack_fate, ack, expected", [
    ("drop_err", {"hits": 3}, "ack lost"),           # the link says it dropped it
    ("drop_sbuf", {}, "ack lost"),
    ("pending", {}, "ack unknown"),                  # still inside at STOP: neither
    ("out", {"in_log": False}, "ack unknown"),       # never joined (the log never saw it)
    # delivered at 1.95 s, after the ACK sent at 1.1 s had arrived (1.2 s): arrival order
    # alone would call it lost; the link held it, so the RTO came too early
    ("out", {"delay_us": 1500 * MS}, "ack in flight"),
])
def test_each_acks_fate_comes_from_the_link_log(tmp_path: Path, ack_fate: str, ack: dict, expected: str) -> None:
    fetch(ack_fate, **ack).write(tmp_path)
    assert replication_causes(tmp_path) == Counter({expected: 1})
