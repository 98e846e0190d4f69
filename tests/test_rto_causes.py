"""validation/rto_causes.py: the cause of an unnecessary RTO from when the data and the ACKs
crossed the link (µs on one clock) and what the link did with each ACK."""
from validation.rto_causes import cause

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
