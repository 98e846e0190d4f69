"""What a router engine is: one way to run a scenario's router during a replication.

An engine says what it needs and where it sits (class attributes, read by the link, the
runner and the replication instead of the engine's name), checks at parse time what it cannot
express, and runs the router of one replication: apply, monitor, collect, tear down.
`engines.py` is the one table of engines; `session.RouterRun` is what a replication holds.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Protocol

if TYPE_CHECKING:      # annotations only: the interface depends on no implementation
    from testbed.hosts import Host
    from testbed.router.directions import Routers
    from testbed.router.plan import RouterConfig


class LinkDirection(Protocol):
    """What the router needs of the link direction it feeds (a scenario's DirectionConfig)."""
    mtu: int              # bytes
    send_buffer: int      # bytes

    @property
    def rate_bps(self) -> int | None:
        """The constant rate, or None if unlimited; ValueError for a schedule."""


@dataclass(frozen=True)
class RouterPlace:
    """Where one replication's router runs and writes."""
    host: Host                 # the emulation host
    rep_dir: Path              # the replication's results directory
    dev: str                   # the router-side TUN on the host
    interval_us: int           # queue sampling interval
    emulator_log: Path         # the run's emulator log
    probe_kernel: bool         # first ask the host's kernel for every qdisc kind


class RouterEngine(Protocol):
    name: ClassVar[str]                  # `engine = "NAME"` in a scenario
    summary: ClassVar[str]               # what it is, for messages
    in_emulator: ClassVar[bool]          # the emulator's configuration carries the router
    on_host_path: ClassVar[bool]         # it queues on a host device, between the capture points
    needs_tc: ClassVar[bool]             # the emulation host needs iproute2 tc and the kernel's qdiscs
    finishes_after_link: ClassVar[bool]  # finish() reads what the emulator writes when it stops
    device_queue_refusal: ClassVar[str]  # "" if it takes `device_queue`, else why not

    @classmethod
    def check(cls, config: RouterConfig, link: LinkDirection, where: str, direction: str = "down") -> None:
        """ConfigError (naming the key under `where`) for what this engine cannot run in front of
        `link`, the link's `direction` ("down" or "up")."""

    def __init__(self, routers: Routers, place: RouterPlace) -> None:
        """`routers`: the replication's routers by direction, each run by this engine."""

    def apply(self) -> str:
        """Sets the router up; returns the text kept as router.tc."""

    def start_monitor(self, t0_realtime_us: int | None) -> None:
        """Starts sampling the queues, if this engine samples them."""

    def finish(self) -> dict:
        """Stops the monitor, stores and returns the final statistics."""

    def tear_down(self) -> None:
        """Undoes apply() and stops what still runs; also after a failure, harmless twice."""
