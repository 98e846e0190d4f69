"""One cell of a scenario's matrix, fully resolved: what a replication runs."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from testbed.router.directions import Routers
from testbed.router.plan import RouterConfig
from testbed.scenario.flows import Flow
from testbed.scenario.link_section import LinkConfig
from testbed.tcp_profile import TcpProfile


@dataclass(frozen=True)
class ResolvedCell:
    cell_id: str
    labels: Mapping[str, str]
    link: LinkConfig
    router: RouterConfig | None = None        # the downlink's; None: packets go straight to the link
    tcp: TcpProfile | None = None             # None: the hosts' own settings (linux-default)
    flows: tuple[Flow, ...] = ()
    table: Mapping[str, Any] = field(default_factory=dict)      # the resolved raw table
    router_up: RouterConfig | None = None     # the uplink's (`[router.up]`, on the mobile host's side)

    @property
    def routers(self) -> Routers:
        return Routers(self.router, self.router_up)

    def sections(self) -> dict[str, Any]:
        """The optional sections the cell has, by their scenario names (for show and expanded.json)."""
        given = {"flows": self.flows or None, "router": self.router, "router_up": self.router_up, "tcp": self.tcp}
        return {name: value for name, value in given.items() if value is not None}
