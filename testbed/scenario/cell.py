"""One cell of a scenario's matrix, fully resolved: what a replication runs."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from testbed.router.plan import RouterConfig
from testbed.scenario.flows import Flow
from testbed.scenario.link_section import LinkConfig
from testbed.tcp_profile import TcpProfile


@dataclass(frozen=True)
class ResolvedCell:
    cell_id: str
    labels: Mapping[str, str]
    link: LinkConfig
    router: RouterConfig | None = None        # None: no router (packets go straight to the link)
    tcp: TcpProfile | None = None             # None: the hosts' own settings (linux-default)
    flows: tuple[Flow, ...] = ()
    table: Mapping[str, Any] = field(default_factory=dict)      # the resolved raw table

    def sections(self) -> dict[str, Any]:
        """The optional sections the cell has, by their scenario names (for show and expanded.json)."""
        given = {"flows": self.flows or None, "router": self.router, "tcp": self.tcp}
        return {name: value for name, value in given.items() if value is not None}
