"""TCP variants (scenarios/profiles/tcp.toml) applied to the hosts' namespaces.

One job: set a profile's per-namespace sysctls, route options (initcwnd/initrwnd) and
cached-metrics policy, then read back what is in effect — the dict saved as tcp.json.
Mapping of the studies' variants to this kernel: docs/tcp-variants.md.
"""
from __future__ import annotations

import argparse
import json
import platform
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from . import netns
from .errors import ConfigError
from .profiles import PROFILE_DIR, ProfileSet

PROFILE_KEYS = {"sysctl", "optional", "initcwnd", "initrwnd", "flush_metrics"}
CONGESTION_KEY = "net.ipv4.tcp_congestion_control"
# Read back on every host whatever the profile sets, so tcp.json compares across profiles.
RECORDED_SYSCTLS = (
    CONGESTION_KEY, "net.ipv4.tcp_sack", "net.ipv4.tcp_dsack", "net.ipv4.tcp_timestamps",
    "net.ipv4.tcp_frto", "net.ipv4.tcp_ecn", "net.ipv4.tcp_no_metrics_save",
    "net.ipv4.tcp_no_ssthresh_metrics_save", "net.ipv4.tcp_early_retrans", "net.ipv4.tcp_recovery",
    "net.ipv4.tcp_window_scaling", "net.ipv4.tcp_slow_start_after_idle", "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
)
_ROUTE_OPTION = re.compile(r"\s+(initcwnd|initrwnd)\s+(\d+)")
# Flags `ip route show` prints that `ip route change` does not accept back.
_ROUTE_STATUS_FLAGS = {"linkdown", "dead", "offload", "trap", "rt_offload", "rt_trap", "rt_offload_failed"}


class TcpProfileError(RuntimeError):
    """A profile cannot be applied on this kernel/namespace (message names the setting)."""


@dataclass(frozen=True)
class TcpProfile:
    name: str
    description: str
    sysctls: Mapping[str, int | str]
    optional: frozenset[str]
    initcwnd: int | None
    initrwnd: int | None
    flush_metrics: bool


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
        if not key.startswith("net."):
            raise ConfigError(f"{where}.sysctl.{key}", "only per-namespace net.* sysctls can be part of a profile")
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise ConfigError(f"{where}.sysctl.{key}", f"{value!r} is not an integer or a string")
    optional = table.get("optional", [])
    if not isinstance(optional, list) or not all(isinstance(k, str) for k in optional):
        raise ConfigError(f"{where}.optional", "expected a list of sysctl names")
    flush = table.get("flush_metrics", True)
    if not isinstance(flush, bool):
        raise ConfigError(f"{where}.flush_metrics", f"{flush!r} is not true or false")
    return TcpProfile(name, description, dict(sysctls), frozenset(optional),
                      _route_option(table, "initcwnd", where), _route_option(table, "initrwnd", where), flush)


# --- applying ---------------------------------------------------------------------------

def _sysctl_path(key: str) -> str:
    return "/proc/sys/" + key.replace(".", "/")


def read_sysctl(ns: str, key: str) -> str | None:
    """The value in ns (whitespace normalised), None when the kernel has no such sysctl."""
    proc = netns.run_in(ns, ["cat", _sysctl_path(key)], check=False)
    return " ".join(proc.stdout.split()) if proc.returncode == 0 else None


def _ensure_congestion_control(ns: str, name: str) -> str | None:
    """None if available (loading its module if possible), else why not."""
    available = (read_sysctl(ns, "net.ipv4.tcp_available_congestion_control") or "").split()
    if name in available:
        return None
    probe = netns.run(["modprobe", f"tcp_{name}"], check=False)
    available = (read_sysctl(ns, "net.ipv4.tcp_available_congestion_control") or "").split()
    if name in available:
        return None
    return (f"congestion control {name!r} is not available on this kernel ({platform.release()}): "
            f"tcp_available_congestion_control is {' '.join(available) or '(empty)'}, and "
            f"`modprobe tcp_{name}` failed: {probe.stderr.strip() or f'exit {probe.returncode}'}")


def _set_sysctl(profile: TcpProfile, ns: str, key: str, value: int | str) -> str | None:
    """Sets key; returns None on success, the reason when it cannot be set."""
    if read_sysctl(ns, key) is None:
        return f"sysctl {key} does not exist on this kernel ({platform.release()})"
    if key == CONGESTION_KEY:
        missing = _ensure_congestion_control(ns, str(value))
        if missing:
            return missing
    proc = netns.run_in(ns, ["sysctl", "-q", "-w", f"{key}={value}"], check=False)
    if proc.returncode != 0:
        return f"sysctl -w {key}={value} failed: {proc.stderr.strip()}"
    return None


def _routes(ns: str) -> list[str]:
    return [line.strip() for line in netns.run_in(ns, ["ip", "route", "show", "table", "main"]).stdout.splitlines()
            if line.strip()]


def _set_route_options(profile: TcpProfile, ns: str) -> None:
    options = []
    if profile.initcwnd:
        options += ["initcwnd", str(profile.initcwnd)]
    if profile.initrwnd:
        options += ["initrwnd", str(profile.initrwnd)]
    if not options:
        return
    routes = _routes(ns)
    if not routes:
        raise TcpProfileError(f"TCP profile {profile.name!r}: namespace {ns} has no routes to set "
                              f"{' '.join(options)} on; apply the profile after the network is up")
    for route in routes:
        base = [word for word in _ROUTE_OPTION.sub("", route).split() if word not in _ROUTE_STATUS_FLAGS]
        netns.run_in(ns, ["ip", "route", "change", *base, *options])


def route_options(ns: str) -> list[dict[str, Any]]:
    result = []
    for route in _routes(ns):
        opts = dict((k, int(v)) for k, v in _ROUTE_OPTION.findall(" " + route))
        result.append({"route": _ROUTE_OPTION.sub("", route), "initcwnd": opts.get("initcwnd"),
                       "initrwnd": opts.get("initrwnd")})
    return result


def flush_metrics(ns: str) -> None:
    """Forgets cached per-destination metrics (ssthresh, RTT, cwnd) in ns."""
    netns.run_in(ns, ["ip", "tcp_metrics", "flush"], check=False)


def apply(profile: TcpProfile, namespaces: Sequence[str]) -> dict[str, Any]:
    """Applies the profile to every namespace, then reads back the effective settings.

    Raises TcpProfileError naming the setting when a non-optional sysctl or congestion
    control is missing; optional ones are recorded under "not_applied"."""
    hosts = {}
    for ns in namespaces:
        not_applied: dict[str, str] = {}
        for key, value in profile.sysctls.items():
            problem = _set_sysctl(profile, ns, key, value)
            if problem and key not in profile.optional:
                raise TcpProfileError(f"TCP profile {profile.name!r} in {ns}: {problem}; mark {key} "
                                      "optional in scenarios/profiles/tcp.toml to record it as not applied")
            if problem:
                not_applied[key] = problem
        _set_route_options(profile, ns)
        if profile.flush_metrics:
            flush_metrics(ns)
        hosts[ns] = effective(profile, ns, not_applied)
    return {"profile": profile.name, "description": profile.description, "kernel": platform.release(),
            "requested": {"sysctl": dict(profile.sysctls), "initcwnd": profile.initcwnd,
                          "initrwnd": profile.initrwnd, "flush_metrics": profile.flush_metrics},
            "hosts": hosts}


def effective(profile: TcpProfile, ns: str, not_applied: Mapping[str, str]) -> dict[str, Any]:
    keys = list(dict.fromkeys([*RECORDED_SYSCTLS, *profile.sysctls]))
    values = {key: read_sysctl(ns, key) for key in keys}
    mismatched = {key: {"requested": str(profile.sysctls[key]), "effective": values[key]}
                  for key in profile.sysctls
                  if key not in not_applied and values[key] != " ".join(str(profile.sysctls[key]).split())}
    if mismatched:
        raise TcpProfileError(f"TCP profile {profile.name!r} in {ns}: the kernel did not take "
                              f"{json.dumps(mismatched)}")
    return {"sysctl": values, "not_applied": dict(not_applied), "routes": route_options(ns),
            "metrics_flushed": profile.flush_metrics}


def write_tcp_json(path: Path, settings: Mapping[str, Any]) -> None:
    """Writes tcp.json completely or not at all."""
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(settings, indent=2, sort_keys=True) + "\n")
    tmp.replace(path)


def main(argv: list[str] | None = None) -> int:
    """`python -m testbed.tcp_profile list | show NAME | apply NAME NS... [--json FILE]`"""
    p = argparse.ArgumentParser(description="TCP profiles of scenarios/profiles/tcp.toml")
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list")
    show = sub.add_parser("show")
    show.add_argument("name")
    ap = sub.add_parser("apply")
    ap.add_argument("name")
    ap.add_argument("namespaces", nargs="+")
    ap.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    try:
        if args.cmd == "list":
            for name in names():
                print(f"{name}\t{load(name).description}")
        elif args.cmd == "show":
            prof = load(args.name)
            print(json.dumps({"name": prof.name, "description": prof.description, "sysctl": dict(prof.sysctls),
                              "optional": sorted(prof.optional), "initcwnd": prof.initcwnd,
                              "initrwnd": prof.initrwnd, "flush_metrics": prof.flush_metrics}, indent=2))
        else:
            settings = apply(load(args.name), args.namespaces)
            if args.json:
                write_tcp_json(args.json, settings)
            print(json.dumps(settings, indent=2, sort_keys=True))
    except (ConfigError, TcpProfileError) as e:
        print(f"tcp_profile: {e}", file=__import__("sys").stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
