"""A resolved cell as `squall show` prints it: every value with its unit (kbit/s, ms, B), one
line per thing, no Python reprs. `squall show --json` prints expanded.json's form instead.

Flows describe themselves (FlowBase.describe); the link, the router and the TCP variant are
described here, from their typed configurations.
"""
from __future__ import annotations

from analysis.report.printable import escaped
from testbed.router.plan import PROTOCOL_NUMBERS, RouterConfig, RouterFilter
from testbed.scenario.cell import ResolvedCell
from testbed.scenario.link_section import ChannelConfig, DirectionConfig, Distribution, LinkConfig, Outages
from testbed.units import format_rate_bps, format_size, format_time_us
from testbed.tcp_profile import TcpProfile

_PROTOCOL_NAMES = {number: name for name, number in PROTOCOL_NUMBERS.items()}


def cell_lines(cell: ResolvedCell) -> list[str]:
    """The cell, indented under its id."""
    lines = [f"[{cell.cell_id}]"]
    if cell.labels:
        lines.append("  axes: " + ", ".join(f"{axis} = {label}" for axis, label in cell.labels.items()))
    lines += link_lines(cell.link)
    on = " on the downlink" if cell.router_up is not None else ""
    lines += router_lines(cell.router) if cell.router is not None else [f"  router: none{on} (packets go straight "
                                                                         "to the link)"]
    if cell.router_up is not None:
        lines += router_lines(cell.router_up, "router.up (uplink)")
    lines += tcp_lines(cell.tcp) if cell.tcp is not None else ["  tcp: the hosts' own settings (linux-default)"]
    if cell.flows:
        lines.append("  flows:")
        lines += [f"    {flow.describe()}" for flow in cell.flows]
    else:
        lines.append("  flows: none")
    return lines


# --- the link ----------------------------------------------------------------------------------

def link_lines(link: LinkConfig) -> list[str]:
    down, up = direction_text(link.down), direction_text(link.up)
    lines = [f"  link {link.name}:"]
    if down == up:
        lines.append(f"    down and up: {down}")
    else:
        lines += [f"    down: {down}", f"    up: {up}"]
    lines.append(f"    channel: {channel_text(link.channel)}")
    if link.outages is not None:
        lines.append(f"    outages (both directions): {outages_text(link.outages)}")
    return lines


def outages_text(o: Outages) -> str:
    return (f"time between outages {distribution_text(o.every)}; length {distribution_text(o.length)}; "
            "nothing sent during one gets through (the ARQ retries or drops what it meets)")


def direction_text(d: DirectionConfig) -> str:
    if d.capacity is not None:
        rate = d.capacity.summary(tuple(s.rate_bps or 0 for s in d.bandwidth))
    elif len(d.bandwidth) == 1:
        rate = format_rate_bps(d.bandwidth[0].rate_bps)
    else:
        rate = "schedule " + ", ".join(f"{format_rate_bps(s.rate_bps)} from {format_time_us(s.at_us)}"
                                       for s in d.bandwidth)
    arq = "no ARQ" if d.arq_retransmissions == 0 else \
        f"ARQ {d.arq_retransmissions} retransmission{'s' if d.arq_retransmissions > 1 else ''} " \
        f"{format_time_us(d.arq_delay_us)} apart"
    parts = [rate, f"delay {format_time_us(d.delay_us)}", f"MTU {format_size(d.mtu)}",
             f"send buffer {format_size(d.send_buffer)}", f"receive buffer {format_size(d.recv_buffer)}"]
    if d.overhead:
        parts.append(f"overhead {format_size(d.overhead)} per packet")
    parts.append("no errors" if d.error_good == d.error_bad == 0 else
                 f"frame error probability {d.error_good:g} good, {d.error_bad:g} bad")
    parts.append(arq)
    if not d.in_order:
        parts.append("delivered out of order")
    if d.outages is not None:
        parts.append(f"its own outages: {outages_text(d.outages)}")
    if d.netem:
        parts.append("netem " + " ".join(f"{k} {v}" for k, v in vars(d.netem).items() if v is not None))
    return ", ".join(parts)


def channel_text(ch: ChannelConfig) -> str:
    draws = "" if ch.error_draws == "per_frame" else \
        f"; frame errors drawn by time on a {format_time_us(ch.error_grid_us)} grid"
    if ch.trace:
        return f"trace {ch.trace} (replayed cyclically){draws}"
    assert ch.good is not None and ch.bad is not None
    begins = f"starts {ch.initial}" if ch.start == "fresh" else \
        "running (t = 0 at a random point of its cycle)"
    return f"{begins}; good {distribution_text(ch.good)}, bad {distribution_text(ch.bad)}{draws}"


def distribution_text(d: Distribution) -> str:
    if d.kind == "fixed":
        return f"fixed {format_time_us(d.a_us)}"
    if d.kind == "uniform":
        assert d.b_us is not None
        return f"uniform {format_time_us(d.a_us)} to {format_time_us(d.b_us)}"
    text = f"exponential, mean {format_time_us(d.a_us)}"
    if d.min_us is not None and d.max_us is not None:
        text += f", truncated to {format_time_us(d.min_us)} .. {format_time_us(d.max_us)}"
    return text


# --- the router --------------------------------------------------------------------------------

def router_lines(r: RouterConfig, title: str = "router") -> list[str]:
    kind = "DiffServ" if r.diffserv else "one class, no DiffServ"
    lines = [f"  {title}: engine {r.engine}, {format_rate_bps(r.rate_bps)}, {kind}"]
    for c in r.classes:
        default = ", the default class" if r.diffserv and c.name == r.default_class else ""
        lines.append(f"    class {c.name}: rate {format_rate_bps(c.rate_bps)}, ceil {format_rate_bps(c.ceil_bps)}, "
                     f"priority {c.priority}, quantum {format_size(c.quantum_bytes)}, {c.queue.describe()}{default}")
    lines += [f"    filter: {filter_text(f)}" for f in r.filters]
    return lines


def filter_text(f: RouterFilter) -> str:
    match = []
    if f.dscp is not None:
        match.append(f"DSCP {f.dscp}")
    if f.protocol is not None:
        match.append(_PROTOCOL_NAMES.get(f.protocol, f"protocol {f.protocol}"))
    for what, value in (("source port", f.sport), ("destination port", f.dport), ("from", f.src), ("to", f.dst)):
        if value is not None:
            match.append(f"{what} {value}")
    return f"{', '.join(match) or 'every packet'} -> class {f.target}"


# --- the TCP variant ---------------------------------------------------------------------------

def tcp_lines(t: TcpProfile) -> list[str]:
    lines = [f"  tcp {t.name}" + (f": {escaped(t.description)}" if t.description else "")]
    window = []
    if t.initcwnd is not None:
        window.append(f"initial congestion window {t.initcwnd} segments")
    if t.initrwnd is not None:
        window.append(f"initial receive window {t.initrwnd} segments")
    window.append("metrics cache flushed before each replication" if t.flush_metrics
                  else "metrics cache kept from one replication to the next")
    lines.append(f"    {', '.join(window)}")
    if t.sysctls:
        settings = [f"{name.removeprefix('net.ipv4.')} = {value}" + (" (if the kernel has it)"
                                                                    if name in t.optional else "")
                    for name, value in t.sysctls.items()]
        lines.append(f"    sysctls: {', '.join(settings)}")
    return lines
