"""Profiles: named TOML tables in scenarios/profiles/*.toml that scenarios refer to.

A profile may name another with `base = "..."`; tables merge key by key, deepest
last, so an override can change one key of a nested table (e.g. arq.retransmissions).
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from .errors import ConfigError

PROFILE_DIR = Path(__file__).resolve().parent.parent / "scenarios" / "profiles"


def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def load_toml(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise ConfigError(str(path), "file not found")
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(str(path), f"not valid TOML: {e}")


@dataclass(frozen=True)
class ProfileSet:
    """The profiles of one kind (links, channels, ...) from one file."""
    kind: str
    path: Path
    tables: Mapping[str, Mapping[str, Any]]

    @classmethod
    def load(cls, kind: str, directory: Path = PROFILE_DIR) -> "ProfileSet":
        path = directory / f"{kind}.toml"
        return cls(kind, path, load_toml(path))

    def names(self) -> list[str]:
        return sorted(self.tables)

    def resolve(self, name: object, where: str) -> dict[str, Any]:
        """The profile with its base chain merged in, without `base`/`description`."""
        chain: list[str] = []
        current = name
        while current is not None:
            if not isinstance(current, str) or current not in self.tables:
                raise ConfigError(where, f"unknown {self.kind} profile {current!r}; "
                                  f"{self.path.name} has {', '.join(self.names())}")
            if current in chain:
                raise ConfigError(f"{self.path}: {current}", f"base chain loops: {' -> '.join(chain + [current])}")
            chain.append(current)
            current = self.tables[current].get("base")
        merged: dict[str, Any] = {}
        for profile in reversed(chain):
            merged = deep_merge(merged, self.tables[profile])
        merged.pop("base", None)
        merged.pop("description", None)
        return merged

    def with_overrides(self, table: Mapping[str, Any], where: str) -> dict[str, Any]:
        """`table` on top of the profile its `profile` key names (resolved), or `table` alone
        without one: `[link] profile = "r2"` plus keys that override the profile's."""
        if "profile" not in table:
            return dict(table)
        overrides = {k: v for k, v in table.items() if k != "profile"}
        return deep_merge(self.resolve(table["profile"], where), overrides)
