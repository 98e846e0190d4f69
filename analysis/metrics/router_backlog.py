"""The emulator's router stage's backlog over time, per direction, from the log's events.

The router stage logs no samples: a packet is in it from its `in` until it leaves for the
send buffer (`enqueue`) or is dropped (any `drop_*`; a head drop takes a queued packet
later). Counting those lives gives its exact backlog in packets (the class queues and the
device queue together) at every event. Without a router stage a packet's `in` and
`enqueue` have one time, so the backlog stays 0. emulator/LOG_FORMAT.md, "Events".
"""
from __future__ import annotations

from dataclasses import dataclass

from analysis.read.emulog import EmulatorLog

_LEAVES = frozenset({"enqueue", "drop_mtu", "drop_sbuf", "drop_router", "drop_loss"})


@dataclass(frozen=True)
class Backlog:
    times_us: tuple[int, ...]       # from t = 0, one per change
    packets: tuple[int, ...]        # the backlog from that time on

    @property
    def max_packets(self) -> int:
        return max(self.packets, default=0)


def router_directions(log: EmulatorLog) -> tuple[str, ...]:
    """The directions with a router stage (a `# router DIR CLASS` trailer line), down first."""
    found = {key.split(" ")[1] for key in log.trailer if key.startswith("router ")}
    return tuple(d for d in ("down", "up") if d in found)


def router_backlog(log: EmulatorLog, direction: str) -> Backlog:
    """The router stage's backlog of `direction` over the run, in packets."""
    inside: set[int] = set()
    times: list[int] = []
    packets: list[int] = []
    for e in log.events:
        if e.dir != direction or e.pkt_id is None:
            continue
        if e.event == "in":
            inside.add(e.pkt_id)
        elif e.event in _LEAVES and e.pkt_id in inside:
            inside.discard(e.pkt_id)
        else:
            continue
        if times and times[-1] == e.time_us:
            packets[-1] = len(inside)
        else:
            times.append(e.time_us)
            packets.append(len(inside))
    return Backlog(tuple(times), tuple(packets))
