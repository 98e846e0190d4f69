"""A cell's routers by link direction: `[router]` is the downlink's last-hop router (in front of
the link towards the mobile host), `[router.up]` the uplink's (on the mobile host's side, in front
of the link towards the router). docs/router.md, "A router on the uplink"."""
from __future__ import annotations

from dataclasses import dataclass

from testbed.router.plan import RouterConfig

DIRECTIONS = ("down", "up")


@dataclass(frozen=True)
class Routers:
    down: RouterConfig | None = None
    up: RouterConfig | None = None

    def of(self, direction: str) -> RouterConfig | None:
        if direction not in DIRECTIONS:
            raise ValueError(f"direction {direction!r}: expected one of {', '.join(DIRECTIONS)}")
        return self.down if direction == "down" else self.up

    def items(self) -> tuple[tuple[str, RouterConfig], ...]:
        """(direction, router) of each direction that has one, downlink first."""
        return tuple((d, r) for d in DIRECTIONS if (r := self.of(d)) is not None)

    def __bool__(self) -> bool:
        return bool(self.items())


def as_routers(routers: Routers | RouterConfig | None) -> Routers:
    """Routers by direction; a RouterConfig alone is the downlink's (`[router]`), None is none."""
    if isinstance(routers, RouterConfig):
        return Routers(down=routers)
    return routers if routers is not None else Routers()
