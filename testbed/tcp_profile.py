"""TCP variants (scenarios/profiles/tcp.toml): what a profile says, checked when it is loaded.

One job: read a profile (sysctls, route options initcwnd/initrwnd, cached-metrics policy) into
a `TcpProfile`, refusing anything that is not a plain per-namespace net.* sysctl name or a
plain value, so nothing a scenario says can become part of a command. Applying it to hosts
is testbed/tcp_apply.py; mapping of the studies' variants to this kernel: docs/tcp-variants.md.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from analysis.results.atomic_file import write_text_atomically
from testbed.errors import ConfigError
from testbed.paths import PROFILE_DIR
from testbed.profiles import ProfileSet
from testbed.tcp_bpf import MAX_MS, SETTINGS as BPF_SETTINGS

PROFILE_KEYS = {"sysctl", "optional", "initcwnd", "initrwnd", "flush_metrics", "bpf"}
CONGESTION_KEY = "net.ipv4.tcp_congestion_control"
# Read back on every host whatever the profile sets, so tcp.json compares across profiles.
RECORDED_SYSCTLS = (
    CONGESTION_KEY, "net.ipv4.tcp_sack", "net.ipv4.tcp_dsack", "net.ipv4.tcp_timestamps",
    "net.ipv4.tcp_frto", "net.ipv4.tcp_ecn", "net.ipv4.tcp_no_metrics_save",
    "net.ipv4.tcp_no_ssthresh_metrics_save", "net.ipv4.tcp_early_retrans", "net.ipv4.tcp_recovery",
    "net.ipv4.tcp_window_scaling", "net.ipv4.tcp_slow_start_after_idle", "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
)
# What a profile may name and set: per-namespace sysctls, dotted lower-case words.
SYSCTL_KEY = re.compile(r"net\.(ipv4|ipv6|core)\.[a-z0-9_]+(\.[a-z0-9_]+)*")
# A string value: words of letters, digits and . _ : , - separated by single spaces ("4096 131072 6291456").
SYSCTL_VALUE = re.compile(r"[A-Za-z0-9_.:,-]+( [A-Za-z0-9_.:,-]+)*")
# A congestion control module's name (the kernel's TCP_CA_NAME_MAX is 16 with the NUL).
CONGESTION_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,14}")


@dataclass(frozen=True)
class TcpProfile:
    name: str
    description: str
    sysctls: Mapping[str, int | str]
    optional: frozenset[str]
    initcwnd: int | None
    initrwnd: int | None
    flush_metrics: bool
    bpf: Mapping[str, int]         # testbed/tcp_bpf.py's settings; empty: no program


def load(name: str, directory: Path = PROFILE_DIR) -> TcpProfile:
    profiles = ProfileSet.load("tcp", directory)
    where = f"{profiles.path}: {name}"
    table = profiles.resolve(name, where)
    description = str(profiles.tables[name].get("description", ""))
    return from_table(name, table, where, description)


def names(directory: Path = PROFILE_DIR) -> list[str]:
    return ProfileSet.load("tcp", directory).names()


def _route_option(table: Mapping[str, Any], key: str, where: str) -> int | None:
    value = table.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 1024:
        raise ConfigError(f"{where}.{key}", f"{value!r} is not a number of segments from 0 to 1024")
    return value or None


def from_table(name: str, table: Mapping[str, Any], where: str, description: str = "") -> TcpProfile:
    unknown = sorted(set(table) - PROFILE_KEYS)
    if unknown:
        raise ConfigError(f"{where}.{unknown[0]}", f"unknown key; expected {', '.join(sorted(PROFILE_KEYS))}")
    sysctls = table.get("sysctl", {})
    if not isinstance(sysctls, Mapping):
        raise ConfigError(f"{where}.sysctl", "expected a table of sysctl = value")
    for key, value in sysctls.items():
        _check_sysctl(key, value, f"{where}.sysctl.{key}")
    optional = table.get("optional", [])
    if not isinstance(optional, list) or not all(isinstance(k, str) for k in optional):
        raise ConfigError(f"{where}.optional", "expected a list of sysctl names")
    for i, key in enumerate(optional):
        _check_sysctl_key(key, f"{where}.optional[{i}]")
    flush = table.get("flush_metrics", True)
    if not isinstance(flush, bool):
        raise ConfigError(f"{where}.flush_metrics", f"{flush!r} is not true or false")
    return TcpProfile(name, description, dict(sysctls), frozenset(optional),
                      _route_option(table, "initcwnd", where), _route_option(table, "initrwnd", where), flush,
                      _bpf_settings(table.get("bpf", {}), f"{where}.bpf"))


def _bpf_settings(table: Any, where: str) -> dict[str, int]:
    if not isinstance(table, Mapping):
        raise ConfigError(where, f"expected a table of {', '.join(BPF_SETTINGS)}")
    for key, value in table.items():
        if key not in BPF_SETTINGS:
            raise ConfigError(f"{where}.{key}", f"unknown key; expected {', '.join(BPF_SETTINGS)}")
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_MS:
            raise ConfigError(f"{where}.{key}", f"{value!r} is not a number of milliseconds from 0 to {MAX_MS}")
    return {key: value for key, value in table.items() if value}


def _check_sysctl_key(key: str, where: str) -> None:
    if not SYSCTL_KEY.fullmatch(key):
        raise ConfigError(where, f"{key!r} is not a per-namespace sysctl name; expected net.ipv4.*, net.ipv6.* "
                          "or net.core.* with lower-case letters, digits and _ between the dots")


def _check_sysctl(key: str, value: Any, where: str) -> None:
    _check_sysctl_key(key, where)
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ConfigError(where, f"{value!r} is not an integer or a string")
    if key == CONGESTION_KEY and not (isinstance(value, str) and CONGESTION_NAME.fullmatch(value)):
        raise ConfigError(where, f"{value!r} is not a congestion control name such as \"reno\" or \"bbr\" "
                          "(lower-case letters, digits, _ and -, at most 15)")
    if isinstance(value, str) and not SYSCTL_VALUE.fullmatch(value):
        raise ConfigError(where, f"{value!r} is not a sysctl value; expected an integer or words of letters, "
                          "digits and . _ : , - separated by single spaces")


def write_tcp_json(path: Path, settings: Mapping[str, Any]) -> None:
    """Writes tcp.json completely or not at all."""
    write_text_atomically(path, json.dumps(settings, indent=2, sort_keys=True) + "\n")


def main(argv: list[str] | None = None) -> int:
    """`python -m testbed.tcp_profile list | show NAME` (applying one: `python -m testbed.tcp_apply`)"""
    p = argparse.ArgumentParser(description="TCP profiles of scenarios/profiles/tcp.toml")
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list")
    show = sub.add_parser("show")
    show.add_argument("name")
    args = p.parse_args(argv)
    try:
        if args.cmd == "list":
            for name in names():
                print(f"{name}\t{load(name).description}")
        else:
            prof = load(args.name)
            print(json.dumps({"name": prof.name, "description": prof.description, "sysctl": dict(prof.sysctls),
                              "optional": sorted(prof.optional), "initcwnd": prof.initcwnd,
                              "initrwnd": prof.initrwnd, "flush_metrics": prof.flush_metrics,
                              "bpf": dict(prof.bpf)}, indent=2))
    except ConfigError as e:
        print(f"tcp_profile: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
