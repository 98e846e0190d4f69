"""The `[router]` section as the scenario loader sees it: profiles, the link's rates, the uplink.

`parse_router_section` makes the cell's routers. `[router]` is the downlink's router; its table
`[router.up]` (keys as `[router]`'s, or a profile name) is the uplink's, on the mobile host's
side. `router = "name"` (or `profile = "name"` in a table) takes a profile from
scenarios/profiles/routers.toml; keys beside it override the profile's. docs/router.md.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from testbed.errors import ConfigError
from testbed.paths import PROFILE_DIR
from testbed.profiles import ProfileSet
from testbed.router.directions import Routers
from testbed.router.emulator_engine import EmulatorEngine
from testbed.router.engines import engine_of
from testbed.router.parse import parse_router
from testbed.router.plan import RouterConfig
from testbed.router.values import positive_rate
from testbed.scenario.link_section import DirectionConfig, LinkConfig

PROFILE_KIND = "routers"
UP_KEY = "up"
# The only engine that can sit in front of the uplink (docs/router.md, "A router on the uplink").
UP_ENGINE = EmulatorEngine.name
UP_TC_REFUSAL = (
    "the uplink's router runs only in the emulator (engine = \"emulator\", the default here): "
    "uplink packets enter the emulation host after the link, through the router-side TUN's "
    "ingress, so no interface there holds them before the link; the mobile host's own TUN is "
    "on the mobile host, and its qdisc never holds a backlog on current kernels (the TUN drops "
    "at a full ring)")


def parse_router_section(table: Mapping[str, Any], where: str, link: LinkConfig,
                         profile_dir: Path = PROFILE_DIR) -> Routers:
    """`where` is like `scenarios/x.toml: router`; a router's default rate is its direction's."""
    if not isinstance(table, Mapping):
        raise ConfigError(where, f"expected a router profile name or a table, found {table!r}")
    down_table = {k: v for k, v in table.items() if k != UP_KEY}
    down = None
    if down_table or UP_KEY not in table:
        down = _parse_direction(down_table, where, link.down, "down", profile_dir)
    up = _parse_up(table[UP_KEY], f"{where}.{UP_KEY}", link.up, profile_dir) if UP_KEY in table else None
    return Routers(down, up)


def _parse_up(value: Any, where: str, uplink: DirectionConfig, profile_dir: Path) -> RouterConfig:
    table = {"profile": value} if isinstance(value, str) else value
    if not isinstance(table, Mapping):
        raise ConfigError(where, f"expected a router profile name or a table, found {value!r}")
    resolved = _with_profile(table, where, profile_dir)
    if resolved.get("engine", UP_ENGINE) != UP_ENGINE:
        raise ConfigError(f"{where}.engine", f"is {resolved['engine']!r}; {UP_TC_REFUSAL}")
    return _parse_direction({**table, "engine": UP_ENGINE}, where, uplink, "up", profile_dir)


def _parse_direction(table: Mapping[str, Any], where: str, link: DirectionConfig, direction: str,
                     profile_dir: Path) -> RouterConfig:
    resolved = _with_profile(table, where, profile_dir)
    config = parse_router(resolved, where, _link_rate(resolved, where, link, direction))
    # What the engine cannot run is refused now, not when the link opens.
    engine_of(config).check(config, link, where, direction)
    return config


def _with_profile(table: Mapping[str, Any], where: str, profile_dir: Path) -> dict[str, Any]:
    return ProfileSet.load(PROFILE_KIND, profile_dir).with_overrides(table, f"{where}.profile")


def _link_rate(table: Mapping[str, Any], where: str, link: DirectionConfig, direction: str) -> int:
    try:
        rate = link.rate_bps
    except ValueError:
        rate = None
    if rate is not None:
        return rate
    if "rate" not in table:
        raise ConfigError(f"{where}.rate", f"is missing; the link's {direction}link bandwidth is not one "
                                           "constant rate (a schedule or unlimited), so give the router's rate")
    # Then only RED's default `bandwidth` needs it: the router's own rate is the best guess.
    return positive_rate(table["rate"], f"{where}.rate")
