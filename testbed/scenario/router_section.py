"""The `[router]` section as the scenario loader sees it: profiles and the link's rate.

`parse_router_section` makes the cell's `router`. `router = "name"` (or `profile = "name"` in the table)
takes a profile from scenarios/profiles/routers.toml; keys beside it override the profile's.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from testbed.errors import ConfigError
from testbed.paths import PROFILE_DIR
from testbed.profiles import ProfileSet
from testbed.router.engines import engine_of
from testbed.router.parse import parse_router
from testbed.router.plan import RouterConfig
from testbed.router.values import positive_rate
from testbed.scenario.link_section import DirectionConfig

PROFILE_KIND = "routers"


def parse_router_section(table: Mapping[str, Any], where: str, downlink: DirectionConfig,
                         profile_dir: Path = PROFILE_DIR) -> RouterConfig:
    """`where` is like `scenarios/x.toml: router`; the router's default rate is the downlink rate."""
    resolved = _with_profile(table, where, profile_dir)
    config = parse_router(resolved, where, _link_rate(resolved, where, downlink))
    # What the engine cannot run is refused now, not when the link opens.
    engine_of(config).check(config, downlink, where)
    return config


def _with_profile(table: Mapping[str, Any], where: str, profile_dir: Path) -> dict[str, Any]:
    if not isinstance(table, Mapping):
        raise ConfigError(where, f"expected a router profile name or a table, found {table!r}")
    return ProfileSet.load(PROFILE_KIND, profile_dir).with_overrides(table, f"{where}.profile")


def _link_rate(table: Mapping[str, Any], where: str, downlink: DirectionConfig) -> int:
    try:
        rate = downlink.rate_bps
    except ValueError:
        rate = None
    if rate is not None:
        return rate
    if "rate" not in table:
        raise ConfigError(f"{where}.rate", "is missing; the link's downlink bandwidth is not one constant "
                                           "rate (a schedule or unlimited), so give the router's rate")
    # Then only RED's default `bandwidth` needs it: the router's own rate is the best guess.
    return positive_rate(table["rate"], f"{where}.rate")

