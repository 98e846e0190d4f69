"""Warnings about scenarios that load but probably do not do what was meant (docs/scenarios.md).

Not errors: such a run is valid and may be intended (an overloaded link is an experiment too),
but it is said on stderr by `squall show` and `squall run`:
- a UDP stream faster than its link (the send buffer overflows; most datagrams are dropped),
  one alone or the UDP streams of one direction together;
- a UDP stream still sending at the timeout, or whose receiver is kept past it for the
  link's worst case for its last datagram (every replication ends as `timeout`);
- a link whose worst case (what its queues hold at its rate, the delay and every ARQ retry,
  testbed/run/drain_bound.py) is longer than the drain may wait: what is still inside at the
  end is cut off;
- a bulk or HTTP flow whose bytes cannot cross the link before the timeout even without errors
  (the flow's own estimate, FlowBase.planned_us: its bytes at the link's rate and its round trips);
- a DiffServ filter that classifies nothing: it matches no packet of the cell's flows, or only
  packets going the other way (`[router]` shapes the downlink, `[router.up]` the uplink), or only
  the other direction's flows' ACKs/requests.
(A class no filter sends packets to is not said: the studies' routers keep their UDP class in the
cells without a UDP stream, and an empty class changes nothing.)
- a flow that marks its packets (dscp, or tos beyond the ECN field) in a cell whose router does not classify by them
  (no router, or one without DiffServ classes): the marking changes nothing;
- a channel (good/bad timeline or trace) while no cell's link has an error probability above 0:
  the channel changes nothing (said once; a scenario whose lossy cells use it is fine).

Which packets a flow sends where follows the flows (testbed/scenario/flows/): flow i (file order)
listens on port(i) at its server/receiver, every program of a flow marks its packets with the
flow's TOS except the HTTP server (nginx), whose responses carry TOS 0.
"""
from __future__ import annotations

from dataclasses import astuple, dataclass

from testbed.router.plan import RouterConfig, RouterFilter
from testbed.run import drain_bound
from testbed.scenario.cell import ResolvedCell
from testbed.scenario.flows import FLOW_TYPES, Flow, UdpFlow
from testbed.scenario.link_section import ChannelConfig, DirectionConfig
from testbed.scenario.loader import Scenario, udp_end_us

IP_UDP_HEADERS = 28          # IPv4 (no options) + UDP header bytes on the link per datagram
UNBOUNDED_US = 1 << 62       # a flow's planned time not cut at the timeout


@dataclass(frozen=True)
class Packets:
    """The packets one side of a flow sends in one direction of the link; None: an ephemeral port."""
    flow: Flow
    link_direction: str          # down | up
    what: str                    # data, ACKs, requests, responses
    protocol: int
    tos: int
    sport: int | None
    dport: int | None


def scenario_warnings(sc: Scenario) -> list[str]:
    """One line per warning, naming the file, the cells it applies to (all when not said) and the key."""
    found: dict[str, list[str]] = {}
    for cell in sc.cells:
        for key, message in cell_warnings(cell, sc.timeout_us):
            found.setdefault(f"{key}: {message}", []).append(cell.cell_id)
    if _channel_unused(sc.cells, sc.timeout_us):
        found["link.channel: no cell's link loses anything (error.good and error.bad are 0 in both "
              "directions), so the channel's good/bad timeline changes nothing"] = [c.cell_id for c in sc.cells]
    lines = []
    for text, cells in found.items():
        scope = ""
        if len(cells) < len(sc.cells):
            scope = f" (cells {', '.join(cells[:3])}{f' and {len(cells) - 3} more' if len(cells) > 3 else ''})"
        lines.append(f"{sc.path}{scope}: {text}")
    return lines


def cell_warnings(cell: ResolvedCell, timeout_us: int) -> list[tuple[str, str]]:
    """(key path, message) pairs for one cell."""
    found = _udp_warnings(cell, timeout_us) + _transfer_warnings(cell, timeout_us) + _drain_warnings(cell)
    diffserv = [(d, r) for d, r in cell.routers.items() if r.diffserv]
    for direction, router in diffserv:
        found += _router_warnings(router, cell.flows, direction)
    if not diffserv:
        # Only the DSCP bits: an ECN field alone (tos 1-3: ECT(1), ECT(0), CE) is read by AQMs with ECN.
        found += [(f"flows.{f.name}.dscp", f"marks its packets (TOS {f.tos}), but no router of this cell "
                   "classifies by DiffServ: the marking changes nothing") for f in cell.flows if f.tos >> 2]
    return found


def _channel_unused(cells: tuple[ResolvedCell, ...], timeout_us: int) -> bool:
    """A bad state can come (the default channel of error-free links never leaves `good`), yet
    no cell's link loses anything in either state."""
    def lossless(d: DirectionConfig) -> bool:
        return d.error_good == 0 and d.error_bad == 0
    return (any(_bad_state_possible(c.link.channel, timeout_us) for c in cells)
            and all(lossless(c.link.down) and lossless(c.link.up) for c in cells))


def _bad_state_possible(channel: ChannelConfig, timeout_us: int) -> bool:
    # a running channel may be met at the end of a long good period
    if channel.trace is not None or channel.initial == "bad" or channel.start == "running" or channel.good is None:
        return True
    good = channel.good
    shortest = (good.min_us or 0) if good.kind == "exponential" else good.a_us
    return shortest < timeout_us


# --- UDP streams and the link ------------------------------------------------------------------

def _drain_warnings(cell: ResolvedCell) -> list[tuple[str, str]]:
    worst = drain_bound.link_drain_s(cell.link, cell.routers)
    if worst <= drain_bound.DRAIN_LIMIT_S:
        return []
    return [("link", f"a packet and its acknowledgement can take {worst:.4g} s through the link (the queues "
                     "at its rate, the delay and every ARQ retry, both ways), longer than the drain after the "
                     f"flows may wait ({drain_bound.DRAIN_LIMIT_S:g} s): what is still inside then is cut "
                     "off (pending in the analysis)")]


def _wire_bps(flow: UdpFlow, link: DirectionConfig) -> float:
    """The stream's rate on the link: its payload rate with IP/UDP headers and the link's overhead."""
    size = flow.stream.size
    return flow.stream.rate_bps * (size + IP_UDP_HEADERS + link.overhead) / size


def _fastest_bps(link: DirectionConfig) -> int | None:
    """The link direction's highest rate, None when unlimited at any time."""
    rates = [s.rate_bps for s in link.bandwidth]
    return None if any(r is None for r in rates) else max(r for r in rates if r is not None)


def _udp_warnings(cell: ResolvedCell, timeout_us: int) -> list[tuple[str, str]]:
    found = []
    udp = [f for f in cell.flows if f.FIXED_RATE]
    for flow in udp:
        end = udp_end_us(flow)
        kept = end / 1e6 + drain_bound.receiver_wait_s(cell.link, flow.direction, cell.routers)
        if end >= timeout_us:
            found.append((f"flows.{flow.name}", f"the stream sends until {end / 1e6:g} s, not before the "
                          f"scenario's timeout ({timeout_us / 1e6:g} s): every replication will end as timeout"))
        elif kept * 1e6 >= timeout_us:
            found.append((f"flows.{flow.name}", f"the stream ends at {end / 1e6:g} s, but its receiver is kept "
                          f"until {kept:.4g} s for the link's worst case for its last datagram (the queues "
                          "ahead of it at the link's rate, the delay, every ARQ retry, and 1 s), not before "
                          f"the scenario's timeout ({timeout_us / 1e6:g} s): every replication will end as "
                          "timeout"))
    for direction in ("down", "up"):
        link = cell.link.direction(direction)
        link_bps = _fastest_bps(link)
        streams = [f for f in udp if f.direction == direction]
        if link_bps is None or not streams:
            continue
        for flow in streams:
            wire = _wire_bps(flow, link)
            if wire > link_bps:
                found.append((f"flows.{flow.name}", f"{flow.stream.rate_bps / 1e3:g} kbit/s of UDP payload is "
                              f"{wire / 1e3:.4g} kbit/s on the link with IP/UDP headers, above the {direction}link's "
                              f"{link_bps / 1e3:g} kbit/s: the link's send buffer overflows and the stream loses "
                              "datagrams all along"))
        total = sum(_wire_bps(f, link) for f in streams)
        if len(streams) > 1 and total > link_bps and all(_wire_bps(f, link) <= link_bps for f in streams):
            found.append(("flows", f"the UDP streams {', '.join(f.name for f in streams)} together send "
                          f"{total / 1e3:.4g} kbit/s on the {direction}link (headers included), above its "
                          f"{link_bps / 1e3:g} kbit/s (if they overlap in time, the link drops datagrams)"))
    return found


def _transfer_warnings(cell: ResolvedCell, timeout_us: int) -> list[tuple[str, str]]:
    found = []
    for flow in cell.flows:
        if not flow.SIZED_BY_BYTES:
            continue
        need_us = flow.start_us + flow.planned_us(cell.link, UNBOUNDED_US)
        if need_us >= timeout_us:
            rates = [s.rate_bps for s in cell.link.direction(flow.direction).bandwidth if s.rate_bps]
            rate = f" at {min(rates) / 1e3:g} kbit/s" if rates else ""
            found.append((f"flows.{flow.name}", f"its bytes cross the {flow.direction}link{rate} (with its round "
                          f"trips) by {need_us / 1e6:.4g} s at the earliest on an error-free link (start "
                          f"{flow.start_us / 1e6:g} s), not before the scenario's timeout ({timeout_us / 1e6:g} s): "
                          "every replication will end as timeout"))
    return found


# --- DiffServ filters and classes ------------------------------------------------------------

def flow_packets(flow: Flow, index: int) -> list[Packets]:
    """What each side of flow number `index` sends, in which direction of the link."""
    return [Packets(flow, *astuple(sent)) for sent in flow.link_packets(index)]


def _matches(f: RouterFilter, p: Packets) -> bool:
    return ((f.dscp is None or f.dscp == p.tos >> 2) and (f.protocol is None or f.protocol == p.protocol)
            and (f.sport is None or f.sport == p.sport) and (f.dport is None or f.dport == p.dport))


def _router_warnings(router: RouterConfig, flows: tuple[Flow, ...], direction: str) -> list[tuple[str, str]]:
    """The filters of `direction`'s router (`[router]` down, `[router.up]` up) against the packets
    the flows send that way."""
    packets = [p for i, flow in enumerate(flows) for p in flow_packets(flow, i)]
    other = "up" if direction == "down" else "down"
    found = []
    for i, f in enumerate(router.filters):
        if f.src is not None or f.dst is not None:
            continue      # addresses depend on the testbed (lane or lab hosts): not judged here
        here = [p for p in packets if p.link_direction == direction and _matches(f, p)]
        there = [p for p in packets if p.link_direction == other and _matches(f, p)]
        key = f"router{'.up' if direction == 'up' else ''}.filters[{i}]"
        if not here and not there:
            ports = ", ".join(f"{t.TITLE} {t.PORT_BASE}{' + i' if t.PORT_PER_FLOW else ''}"
                              for t in FLOW_TYPES.values())
            found.append((key, "matches no packet of this cell's flows, so it classifies nothing (ports: "
                          f"{ports} for flow i in file order, on the server/receiver)"))
        elif not here:
            hint = ""
            if direction == "down" and any(p.what == "requests" for p in there):   # only HTTP clients send requests
                hint = " (the HTTP server does not mark its responses with the flow's DSCP)"
            found.append((key, f"matches only packets going {other} ({_described(there)}); this router shapes the "
                          f"{direction}link only, so it classifies nothing{hint}"))
        elif all(p.flow.direction == other for p in here):
            found.append((key, f"matches only {other}link flows ({', '.join(sorted({p.flow.name for p in here}))}); "
                          f"this router shapes the {direction}link only, where they send just their {_whats(here)}"))
    return found


def _described(packets: list[Packets]) -> str:
    return ", ".join(f"{p.flow.name} {p.what}" for p in packets)


def _whats(packets: list[Packets]) -> str:
    return " and ".join(sorted({p.what for p in packets}))
