"""The `tcp` section as the scenario loader sees it: a profile of scenarios/profiles/tcp.toml.

    tcp = "iw4"                                   # a profile name
    [tcp]                                         # or a profile with overrides
    profile = "baseline"
    sysctl = { "net.ipv4.tcp_dsack" = 1 }

`parse_tcp_section` makes the cell's `tcp`, a `tcp_profile.TcpProfile`. The matrix shorthand `tcp = [...]` sets `tcp.profile`.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from testbed import tcp_profile
from testbed.errors import ConfigError
from testbed.paths import PROFILE_DIR
from testbed.profiles import ProfileSet


def parse_tcp_section(table: Mapping[str, Any], where: str, profile_dir: Path = PROFILE_DIR) -> tcp_profile.TcpProfile:
    if not isinstance(table, Mapping):
        raise ConfigError(where, f"expected a TCP profile name or a table, found {table!r}")
    if "profile" not in table:
        return tcp_profile.from_table("custom", table, where)
    profiles = ProfileSet.load("tcp", profile_dir)
    name = table["profile"]
    merged = profiles.with_overrides(table, f"{where}.profile")
    merged.pop("description", None)
    description = str(profiles.tables[name].get("description", ""))
    label = name if len(table) == 1 else f"{name}+overrides"
    return tcp_profile.from_table(label, merged, where, description)

