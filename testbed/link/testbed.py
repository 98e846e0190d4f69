"""The testbed a replication runs on: three `Host`s, the link between them and the router.

testbed/run/replication.py talks only to a `Testbed`; testbed/lanes/hosts.py implements it on
the network namespaces of one lane, testbed/lab/hosts.py on three lab hosts over SSH. It is
here, not beside `Host` (testbed/hosts.py), because it takes and hands out the link's, the
router's and the scenario's types, and `link/` is the lowest part that stands on all three.
"""
from __future__ import annotations

from pathlib import Path
from typing import Protocol

from testbed.hosts import Host, Router
from testbed.link.control import LinkState
from testbed.router.directions import Routers
from testbed.router.plan import RouterConfig
from testbed.scenario.link_section import LinkConfig
from testbed.tcp_profile import TcpProfile


class Link(Protocol):
    """The emulator and the two NPAs of one replication (testbed/link/session.py)."""
    start_realtime_us: int | None

    def bring_up(self) -> None:
        """Programs running and ready, the TUNs up; packets are dropped until start()."""

    def start(self) -> int:
        """START: t = 0; returns its CLOCK_REALTIME µs."""

    def close(self) -> object: ...

    def dead_programs(self) -> dict[str, tuple[int, str]]: ...

    def state(self) -> LinkState:
        """What is inside the link now: packets, and how long none went in or out."""


class Testbed(Protocol):
    label: str                       # for messages, e.g. "lane 70"
    fixed: Host
    emu: Host
    mobile: Host
    capture_points: dict[str, tuple[Host, str]]   # file stem -> (host, device)

    def link(self, link: LinkConfig, workdir: Path, seed: int, replication: int,
             router: Routers | RouterConfig | None = None) -> Link:
        """`router` (by direction; a RouterConfig alone is the downlink's): each with engine
        "emulator" becomes the emulator's router stage of its direction."""

    def router(self, config: Routers | RouterConfig, rep_dir: Path) -> Router: ...

    def apply_tcp(self, profile: TcpProfile) -> dict: ...

    def describe(self) -> dict: ...
