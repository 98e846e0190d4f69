"""Profiles: named TOML tables in scenarios/profiles/*.toml that scenarios refer to.

A profile may name another with `base = "..."`; tables merge key by key, deepest
last, so an override can change one key of a nested table (e.g. arq.retransmissions).
"""
from __future__ import annotations

import stat
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from testbed.errors import ConfigError
from testbed.paths import PROFILE_DIR



def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def load_toml(path: Path) -> dict[str, Any]:
    return parse_toml(read_text(path), path)


# Far above any scenario or testbed file; a file this large is a mistake (a capture, a log).
MAX_TOML_BYTES = 16 * 1024 * 1024


def read_text(path: Path) -> str:
    """The file as UTF-8 text (what TOML is); a ConfigError naming the file otherwise. Only a
    regular file is read: a device or a pipe would never end."""
    try:
        st = Path(path).stat()
        if stat.S_ISDIR(st.st_mode):
            raise ConfigError(str(path), "is a directory; expected a TOML file")
        if not stat.S_ISREG(st.st_mode):
            raise ConfigError(str(path), "is not a regular file (a device, a pipe or a socket); expected a TOML file")
        if st.st_size > MAX_TOML_BYTES:
            raise ConfigError(str(path), f"is {st.st_size} bytes; a TOML file here is at most {MAX_TOML_BYTES} bytes")
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise ConfigError(str(path), "file not found") from None
    except OSError as e:
        raise ConfigError(str(path), f"cannot be read: {e.strerror or e}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise ConfigError(str(path), f"line {line}: byte 0x{data[e.start]:02x} is not UTF-8; "
                          "a TOML file is UTF-8 text") from None


def parse_toml(text: str, path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(str(path), f"not valid TOML: {e}") from None
    except RecursionError:
        raise ConfigError(str(path), "not valid TOML: nested too deeply") from None


_PARSED: dict[Path, tuple[tuple[int, int], dict[str, Any]]] = {}


def _load_cached(path: Path) -> dict[str, Any]:
    """A profile file, parsed once while it stays unchanged (a scenario's cells each read the
    same few files). Shared, not copied: a matrix of 10 000 cells would copy every file 10 000
    times; ProfileSet.resolve gives each caller its own copy of the one profile it asks for."""
    try:
        st = path.stat()
        stamp = (st.st_mtime_ns, st.st_size)
    except OSError:
        return load_toml(path)          # its error names the file
    cached = _PARSED.get(path)
    if cached is None or cached[0] != stamp:
        cached = _PARSED[path] = (stamp, load_toml(path))
    return cached[1]


def _copied(value: Any) -> Any:
    """A copy of TOML data (tables, arrays, and immutable scalars and dates)."""
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copied(v) for v in value]
    return value


@dataclass(frozen=True)
class ProfileSet:
    """The profiles of one kind (links, channels, ...) from one file."""
    kind: str
    path: Path
    tables: Mapping[str, Mapping[str, Any]]     # shared by every load of the file: read, never changed

    @classmethod
    def load(cls, kind: str, directory: Path = PROFILE_DIR) -> "ProfileSet":
        path = directory / f"{kind}.toml"
        return cls(kind, path, _load_cached(path))

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
        return _copied(merged)

    def with_overrides(self, table: Mapping[str, Any], where: str) -> dict[str, Any]:
        """`table` on top of the profile its `profile` key names (resolved), or `table` alone
        without one: `[link] profile = "r2"` plus keys that override the profile's."""
        if "profile" not in table:
            return dict(table)
        overrides = {k: v for k, v in table.items() if k != "profile"}
        return deep_merge(self.resolve(table["profile"], where), overrides)
