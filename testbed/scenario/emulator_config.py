"""Writes the emulator's configuration file (emulator/CONFIG.md) for one replication."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from testbed.router.directions import Routers, as_routers
from testbed.router.emulator_stage import emulator_router
from testbed.scenario.link_section import DirectionConfig, LinkConfig, Outages, RateStep
from testbed.router.plan import RouterConfig

REDACTED = "<redacted>"       # emulator/CONFIG.md: the file names no token


@dataclass(frozen=True)
class EmulatorRun:
    """What varies per replication besides the link."""
    seed: int
    replication: int
    token: str | None     # 16 hex digits; None: `token = <redacted>` (given with --token-file)
    log_path: Path
    listen: str = "0.0.0.0:5300"
    control: str | None = None          # the emulator's control socket (START/STOP)
    keepalive_us: int = 1_000_000
    peer_timeout_us: int = 5_000_000
    # Decided packets go this long ahead to an NPA on the emulator's clock, which releases
    # them (emulator/README.md, "Release at the NPA"); 0 = off. The emulator checks the bound.
    release_ahead_us: int = 0
    # A cell of this many mobile hosts sharing the link (emulator/CONFIG.md `[cell]`); 1: none.
    hosts: int = 1
    addresses: tuple[str, ...] = ()   # the hosts' addresses, host 1 first (the downlink's routes)


def _rate(step: RateStep) -> str:
    return "unlimited" if step.rate_bps is None else f"{step.rate_bps}bit"


def _bandwidth(steps: tuple[RateStep, ...]) -> str:
    if len(steps) == 1 and steps[0].at_us == 0:
        return _rate(steps[0])
    return ", ".join(f"{s.at_us}us:{_rate(s)}" for s in steps)


def _outage_lines(outages: Outages | None) -> list[str]:
    if outages is None:
        return []
    return [f"outage_every = {outages.every.render()}", f"outage_length = {outages.length.render()}"]


def _direction_lines(d: DirectionConfig) -> list[str]:
    bandwidth = f"mahimahi({d.capacity.path})" if d.capacity is not None else _bandwidth(d.bandwidth)
    return [
        f"mtu = {d.mtu}B",
        f"bandwidth = {bandwidth}",
        f"delay = {d.delay_us}us",
        f"send_buffer = {d.send_buffer}B",
        f"recv_buffer = {d.recv_buffer}B",
        f"overhead = {d.overhead}B",
        f"error_good = {d.error_good!r}",
        f"error_bad = {d.error_bad!r}",
        f"arq_retransmissions = {d.arq_retransmissions}",
        f"arq_delay = {d.arq_delay_us}us",
        f"in_order = {'true' if d.in_order else 'false'}",
        *_outage_lines(d.outages),
        *(d.netem.lines() if d.netem else []),
    ]


def render(link: LinkConfig, run: EmulatorRun, *, router: Routers | RouterConfig | None = None) -> str:
    """With `router` (routers by direction; a RouterConfig alone is the downlink's), each of its
    directions gets the emulator's router stage (testbed/router/emulator_stage.py), whatever the
    router's engine: the caller decides which engine runs it."""
    ch = link.channel
    lines = [
        f"# squall-emulator configuration: link {link.name}, replication {run.replication}",
        f"listen = {run.listen}",
        f"token = {run.token if run.token is not None else REDACTED}",
        f"log = {run.log_path}",
        *([f"control = {run.control}"] if run.control else []),
        f"seed = {run.seed}",
        f"replication = {run.replication}",
        f"keepalive = {run.keepalive_us}us",
        f"peer_timeout = {run.peer_timeout_us}us",
        f"release_ahead = {run.release_ahead_us}us",
        "",
        "[channel]",
    ]
    if ch.trace is not None:
        lines.append(f"trace = {ch.trace}")      # absolute and resolved (link_section.parse_channel)
    else:
        lines += [f"initial = {ch.initial}", f"start = {ch.start}", f"good = {ch.good.render()}",
                  f"bad = {ch.bad.render()}"]
    lines += _outage_lines(link.outages)
    if ch.error_draws != "per_frame":
        lines += [f"error_draws = {ch.error_draws}", f"error_grid = {ch.error_grid_us}us"]
    for name in ("down", "up"):
        lines += ["", f"[{name}]", *_direction_lines(link.direction(name))]
    if run.hosts > 1:
        lines += ["", "[cell]", f"hosts = {run.hosts}"]
        if run.addresses:
            lines.append(f"addresses = {', '.join(run.addresses)}")
    text = "\n".join(lines) + "\n"
    for direction, config in as_routers(router).items():
        text += "\n" + emulator_router(config, link=link.direction(direction), direction=direction).text
    return text


def write(path: Path, link: LinkConfig, run: EmulatorRun, *, router: Routers | RouterConfig | None = None) -> Path:
    path.write_text(render(link, run, router=router))
    return path
