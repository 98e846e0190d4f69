"""The emulator's router stage's backlog per direction, counted from the log's events."""
from __future__ import annotations

from types import SimpleNamespace

from analysis.metrics.router_backlog import router_backlog, router_directions
from analysis.read.emulog import LogEvent


def event(time_us: int, what: str, direction: str, pkt_id: int) -> LogEvent:
    return LogEvent(time_us, what, direction, pkt_id, 1500, None, None, None, None, "tcp", None, None, None,
                    None, None, None, None, None, None, None, 0)


def test_packets_count_from_in_until_enqueue_or_drop_per_direction():
    events = [
        event(0, "in", "up", 1), event(0, "enqueue", "up", 1),       # through at once: no backlog
        event(10, "in", "up", 2), event(20, "in", "up", 3), event(20, "in", "down", 9),
        event(25, "ecn_mark", "up", 3),                               # marked, still queued
        event(30, "in", "up", 4), event(30, "drop_router", "up", 4),  # tail drop at arrival
        event(40, "enqueue", "up", 2), event(50, "drop_router", "up", 3),   # a head drop later
        event(60, "tx", "up", 2), event(70, "out", "up", 2),
    ]
    log = SimpleNamespace(events=events, trailer={"router up all": {}, "end": {}})
    up = router_backlog(log, "up")
    assert list(zip(up.times_us, up.packets)) == [(0, 0), (10, 1), (20, 2), (30, 2), (40, 1), (50, 0)]
    assert up.max_packets == 2
    assert router_backlog(log, "down").packets == (1,)
    assert router_directions(log) == ("up",)
