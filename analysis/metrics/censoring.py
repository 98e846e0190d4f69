"""A replication that reached its scenario's timeout is a result of the link, not a failure.

The IIP study's tests ran under a deadline too, and its tables count the tests that missed it
(e.g. a minimum throughput of 0). squall does the same. In a replication whose status is
`timeout`, a TCP connection that had not completed by the deadline has an elapsed and a
response time of `inf` (right-censored: it would have taken longer than the timeout, by how
much is unknown) and a throughput of 0 (its object over an infinite time); a page with such a
connection has a page time of `inf`. Counts (drops, retransmissions) and a UDP stream's
values (throughput, jitter, loss against what its sender sent) are those up to the deadline. Rank statistics stay exact as long as the rank lies below the censored values (the
median of 10 page times with one `inf` is a finite number); a mean over a censored value is
`inf`. Leaving such replications out, or running them again until they finish, would keep
only the lucky draws of the link.

A timed-out replication whose every connection completed ran over for another reason (a
program, not the network): nothing in it is censored and it stays out of the statistics.
"""
from __future__ import annotations

import math
from typing import Mapping

UNFINISHED_S = math.inf            # the time of what had not finished at the deadline
UNFINISHED_BYTES_PER_S = 0.0       # and its throughput
UNFINISHED_TEXT = "∞"              # how tables print such a time


def time_s(us: int | None, finished: bool, timed_out: bool) -> float | None:
    """A duration in seconds; `inf` for what had not finished when the replication timed out."""
    return _or_unfinished(None if us is None else us / 1e6, UNFINISHED_S, finished, timed_out)


def throughput(bytes_per_s: float | None, finished: bool, timed_out: bool) -> float | None:
    return _or_unfinished(bytes_per_s, UNFINISHED_BYTES_PER_S, finished, timed_out)


def _or_unfinished(value: float | None, unfinished: float, finished: bool, timed_out: bool) -> float | None:
    if value is not None:
        return value
    return unfinished if timed_out and not finished else None


def censored(values: Mapping[str, float | None]) -> bool:
    """Something in the replication had not finished at its deadline."""
    return any(v == UNFINISHED_S for v in values.values())


def counts(status: str, analysed: bool, values: Mapping[str, float | None]) -> bool:
    """Whether a replication enters the statistics: an ok one, and a timed-out one the network
    held up (something in it unfinished)."""
    return analysed and (status == "ok" or (status == "timeout" and censored(values)))
