"""How long a packet sent now can still be inside the link, and so how long a replication can
last after its flows and after its timeout (docs/runner.md, "One replication", steps 7-8).

A packet waits behind what is queued ahead of it: the router stage's queues (its direction's,
either engine) and the link's send buffer, each emptied at the slowest rate it can have; then
the propagation delay and every ARQ retry. One rule, used by the replication (when to stop a
UDP receiver; how long the drain waits), by the lint (what cannot fit) and by `squall show`
(the bound it prints per cell)."""
from __future__ import annotations

from testbed.lanes.capture import STOP_GRACE_S as CAPTURE_STOP_GRACE_S
from testbed.router.directions import Routers, as_routers
from testbed.router.plan import RouterConfig
from testbed.scenario.cell import ResolvedCell
from testbed.scenario.link_section import DirectionConfig, LinkConfig
from testbed.units import format_time_us

DRAIN_MARGIN_S = 0.2
# A receiver of datagrams is stopped this long after the last one can have arrived.
RECEIVER_MARGIN_S = 1.0
# A connection still waiting when the link's worst case is over has lost a segment (often the
# last FIN) and retransmits it at its RTO, seconds on a slow link; the drain waits for that
# retransmission, and never longer than this after the flows, whatever the link's worst case.
DRAIN_LIMIT_S = 30.0
# SIGTERM to a program still running after the drain, then SIGKILL this long after.
STOP_GRACE_S = 3.0
# The most the ending can take after the drain: the flows' programs, then the tcp_info
# samplers (each group its grace), then the two captures (each its own).
STOPPING_S = 2 * STOP_GRACE_S + 2 * CAPTURE_STOP_GRACE_S


def _slowest_bps(d: DirectionConfig) -> int | None:
    rates = [s.rate_bps for s in d.bandwidth if s.rate_bps]
    return min(rates) if rates else None


def router_bytes(router: RouterConfig, mtu: int) -> int:
    """What the router stage can hold: every class's queue (a packet limit in packets of the
    MTU) and the device queue between it and the link."""
    return sum(c.queue.most_bytes(mtu) for c in router.classes) + router.device_queue * mtu


def queued_s(link: LinkConfig, direction: str, router: Routers | RouterConfig | None = None) -> float:
    """How long what can be queued ahead of a packet takes to leave: the send buffer (and the
    direction's router, `router` being the routers by direction or the downlink's alone) at the
    slowest rate; 0 on an unlimited link."""
    d = link.direction(direction)
    rate = _slowest_bps(d)
    if rate is None:
        return 0.0
    ahead = d.send_buffer * 8 / rate
    mine = as_routers(router).of(direction)
    if mine is not None:
        ahead += router_bytes(mine, d.mtu) * 8 / min(rate, mine.rate_bps)
    return ahead


def one_way_s(link: LinkConfig, direction: str, router: Routers | RouterConfig | None = None) -> float:
    """The longest a packet sent now can take through one direction of the link: the queues
    ahead of it, the delay and every ARQ retry."""
    d = link.direction(direction)
    return (queued_s(link, direction, router)
            + (d.delay_us + d.arq_retransmissions * d.arq_delay_us) / 1e6)


def receiver_wait_s(link: LinkConfig, direction: str, router: Routers | RouterConfig | None = None) -> float:
    """How long after its sender ended a datagram receiver is kept: the last datagram's
    longest way, and a margin."""
    return one_way_s(link, direction, router) + RECEIVER_MARGIN_S


def link_drain_s(link: LinkConfig, router: Routers | RouterConfig | None = None) -> float:
    """The link's worst case for a segment sent now to be acknowledged: the last FIN one way,
    its ACK the other."""
    return one_way_s(link, "down", router) + one_way_s(link, "up", router) + DRAIN_MARGIN_S


def drain_s(link: LinkConfig, router: Routers | RouterConfig | None = None) -> float:
    """How long the drain waits for the link's worst case: at most DRAIN_LIMIT_S."""
    return min(link_drain_s(link, router), DRAIN_LIMIT_S)


def after_timeout_s(link: LinkConfig, router: Routers | RouterConfig | None, tcp: bool) -> float:
    """The longest a replication lasts after its timeout (counted from t = 0): the drain (up
    to DRAIN_LIMIT_S when a TCP connection may wait for a retransmission; else the link's
    worst case, capped the same) and the stopping (STOPPING_S)."""
    return (DRAIN_LIMIT_S if tcp else drain_s(link, router)) + STOPPING_S


def cell_after_timeout_s(cell: ResolvedCell) -> float:
    """after_timeout_s for a cell: TCP unless every flow is a squall-udp stream."""
    return after_timeout_s(cell.link, cell.routers, any(f.OPENS_TCP for f in cell.flows))


def bound_text(cell: ResolvedCell, timeout_us: int) -> str:
    """What `squall show` prints per cell: when a replication has ended at the latest."""
    tcp = any(f.OPENS_TCP for f in cell.flows)
    drain = DRAIN_LIMIT_S if tcp else drain_s(cell.link, cell.routers)
    return (f"  ends: at the latest {format_time_us(round((timeout_us / 1e6 + cell_after_timeout_s(cell)) * 1e6))}"
            f" after t = 0: the timeout {format_time_us(timeout_us)}, the drain up to "
            f"{format_time_us(round(drain * 1e6))} (the link's worst case "
            f"{format_time_us(round(link_drain_s(cell.link, cell.routers) * 1e6))}"
            f"{', longer for a TCP retransmission' if tcp else ''}, at most "
            f"{format_time_us(round(DRAIN_LIMIT_S * 1e6))}), stopping the programs and captures up to "
            f"{format_time_us(round(STOPPING_S * 1e6))}")
