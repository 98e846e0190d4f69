"""Links given by a few numbers, for tests, the demo and benchmarks.

Scenario links come from TOML profiles (testbed/scenario/link_section.py); these build the same
LinkConfig from parameters directly.
"""
from __future__ import annotations

from testbed.scenario.link_section import ChannelConfig, DirectionConfig, Distribution, LinkConfig, RateStep

SECOND_US = 1_000_000
# A channel that stays good for the length of any test run (an error-free link).
ALWAYS_GOOD = ChannelConfig("good", Distribution("fixed", 1_000_000 * SECOND_US),
                            Distribution("fixed", SECOND_US))


def direction(rate_bps: int | None, delay_us: int, mtu: int, *, send_buffer: int = 65536,
              recv_buffer: int = 65536, error_good: float = 0.0, error_bad: float = 0.0,
              arq_retransmissions: int = 0, arq_delay_us: int = 0, in_order: bool = True,
              overhead: int = 0) -> DirectionConfig:
    """rate_bps None = unlimited bandwidth."""
    return DirectionConfig(bandwidth=(RateStep(0, rate_bps),), delay_us=delay_us, mtu=mtu,
                           send_buffer=send_buffer, recv_buffer=recv_buffer, overhead=overhead,
                           error_good=error_good, error_bad=error_bad,
                           arq_retransmissions=arq_retransmissions, arq_delay_us=arq_delay_us,
                           in_order=in_order)


def symmetric(name: str, d: DirectionConfig, channel: ChannelConfig = ALWAYS_GOOD) -> LinkConfig:
    return LinkConfig(name, channel, d, d)


def error_free(rate_bps: int | None, delay_us: int, mtu: int, **kw) -> LinkConfig:
    """Both directions alike, no errors; kw as for direction()."""
    rate = "unlimited" if rate_bps is None else f"{rate_bps}bit/s"
    return symmetric(f"error-free {rate} {delay_us}us mtu {mtu}", direction(rate_bps, delay_us, mtu, **kw))


def periodic_channel(good_us: int, bad_us: int, initial: str = "good") -> ChannelConfig:
    """Good and bad periods of fixed lengths, alternating from t = 0."""
    return ChannelConfig(initial, Distribution("fixed", good_us), Distribution("fixed", bad_us))
