"""Which replications a run selects: first..last.

A run usually selects 1..N. One may start past the first (`--first-replication K`): a later
sitting of a long study on another machine runs replication K alone, and since a
replication's number fixes its channel timeline and seeds, it is the same replication K
whatever machine or sitting runs it. A CBI chain starting past its first replication warms
its lane up first (run/unit.py).
"""
from __future__ import annotations

from testbed.errors import ConfigError


def replication_numbers(first: int | None, last: int, last_from: str) -> range:
    """The replications a run selects: first..last. A run may start past 1 (--first-replication):
    a later sitting of a study on another machine, where replication k keeps its channel timeline.
    `last_from` says where `last` came from (`--replications`, the scenario's `replications`)."""
    first = first or 1
    if first > last:
        # only an explicit --first-replication can pass the last
        raise ConfigError("--first-replication", f"replication {first} is past the last one the run selects, "
                                                 f"{last} ({last_from}); the first must be at most the last")
    return range(first, last + 1)


def describe(reps: range) -> str:
    """`5 replications`, or `replications 3..5` when the run starts past the first."""
    if reps.start == 1:
        return f"{len(reps)} replications"
    return f"replication {reps.start}" if len(reps) == 1 else f"replications {reps.start}..{reps.stop - 1}"
