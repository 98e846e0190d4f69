"""TCP profiles on lab hosts over SSH, with what they change recorded and restored.

The namespace backend throws its namespaces away after a replication; a lab host stays,
so every sysctl a profile sets and every route whose options it changes is recorded the
first time it is touched (`HostState`) and put back by `HostState.restore()`.
The TCP metrics cache is flushed, as on namespaces; its old contents are not restored.
The values written and read back are the same as tcp_profile.apply's (tcp.json alike).
"""
from __future__ import annotations

import platform
import re
from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence

from .tcp_profile import CONGESTION_KEY, RECORDED_SYSCTLS, TcpProfile, TcpProfileError

_ROUTE_OPTION = re.compile(r"\s+(initcwnd|initrwnd)\s+(\d+)")
_ROUTE_STATUS_FLAGS = {"linkdown", "dead", "offload", "trap", "rt_offload", "rt_trap", "rt_offload_failed"}


class Runs(Protocol):
    role: str

    def run(self, argv: Sequence[str], *, check: bool = True, timeout: float = 30.0) -> Any: ...


def read_sysctl(host: Runs, key: str) -> str | None:
    proc = host.run(["cat", "/proc/sys/" + key.replace(".", "/")], check=False)
    return " ".join(proc.stdout.split()) if proc.returncode == 0 else None


def routes(host: Runs) -> list[str]:
    out = host.run(["ip", "route", "show", "table", "main"]).stdout
    return [line.strip() for line in out.splitlines() if line.strip()]


def route_argv(route: str) -> list[str]:
    """A route as `ip route show` prints it, as words `ip route change` accepts."""
    return [w for w in route.split() if w not in _ROUTE_STATUS_FLAGS]


@dataclass
class HostState:
    """What squall changed on one host, with the values from before."""
    host: Runs
    sysctls: dict[str, str] = field(default_factory=dict)
    routes: list[str] | None = None

    def remember_sysctl(self, key: str, value: str) -> None:
        self.sysctls.setdefault(key, value)

    def remember_routes(self) -> None:
        if self.routes is None:
            self.routes = routes(self.host)

    def restore(self) -> list[str]:
        """Puts every recorded value back; returns what could not be restored (one line each)."""
        problems = []
        for key, value in self.sysctls.items():
            proc = self.host.run(["sysctl", "-q", "-w", f"{key}={value}"], check=False)
            if proc.returncode != 0:
                problems.append(f"{self.host.role}: sysctl -w {key}={value}: {proc.stderr.strip()}")
        # Routes that went with their device (the mobile NPA's route through its TUN) stay gone.
        present = {route.split()[0] for route in routes(self.host)} if self.routes else set()
        for route in self.routes or []:
            if route.split()[0] not in present:
                continue
            proc = self.host.run(["ip", "route", "change", *route_argv(route)], check=False)
            if proc.returncode != 0:
                problems.append(f"{self.host.role}: ip route change {route}: {proc.stderr.strip()}")
        return problems


def _congestion_problem(host: Runs, name: str) -> str | None:
    available = (read_sysctl(host, "net.ipv4.tcp_available_congestion_control") or "").split()
    if name in available:
        return None
    probe = host.run(["modprobe", f"tcp_{name}"], check=False)
    available = (read_sysctl(host, "net.ipv4.tcp_available_congestion_control") or "").split()
    if name in available:
        return None
    return (f"congestion control {name!r} is not available on the {host.role} host: "
            f"tcp_available_congestion_control is {' '.join(available) or '(empty)'}, and "
            f"`modprobe tcp_{name}` failed: {probe.stderr.strip() or f'exit {probe.returncode}'}")


def _set_sysctl(state: HostState, key: str, value: int | str) -> str | None:
    host = state.host
    current = read_sysctl(host, key)
    if current is None:
        return f"sysctl {key} does not exist on the {host.role} host"
    if key == CONGESTION_KEY:
        problem = _congestion_problem(host, str(value))
        if problem:
            return problem
    state.remember_sysctl(key, current)
    proc = host.run(["sysctl", "-q", "-w", f"{key}={value}"], check=False)
    if proc.returncode != 0:
        return f"sysctl -w {key}={value} on the {host.role} host failed: {proc.stderr.strip()}"
    return None


def _set_route_options(profile: TcpProfile, state: HostState) -> None:
    options = []
    if profile.initcwnd:
        options += ["initcwnd", str(profile.initcwnd)]
    if profile.initrwnd:
        options += ["initrwnd", str(profile.initrwnd)]
    if not options:
        return
    state.remember_routes()
    current = routes(state.host)
    if not current:
        raise TcpProfileError(f"TCP profile {profile.name!r}: the {state.host.role} host has no routes to set "
                              f"{' '.join(options)} on")
    for route in current:
        state.host.run(["ip", "route", "change", *route_argv(_ROUTE_OPTION.sub("", route)), *options])


def apply(profile: TcpProfile, states: Sequence[HostState]) -> dict[str, Any]:
    """tcp_profile.apply on lab hosts: settings keyed by role, for tcp.json."""
    hosts = {}
    for state in states:
        not_applied: dict[str, str] = {}
        for key, value in profile.sysctls.items():
            problem = _set_sysctl(state, key, value)
            if problem and key not in profile.optional:
                raise TcpProfileError(f"TCP profile {profile.name!r}: {problem}; mark {key} optional in "
                                      "scenarios/profiles/tcp.toml to record it as not applied")
            if problem:
                not_applied[key] = problem
        _set_route_options(profile, state)
        if profile.flush_metrics:
            state.host.run(["ip", "tcp_metrics", "flush"], check=False)
        hosts[state.host.role] = effective(profile, state.host, not_applied)
    kernels = {s.host.role: s.host.run(["uname", "-r"], check=False).stdout.strip() for s in states}
    return {"profile": profile.name, "description": profile.description,
            "kernel": " ".join(sorted(set(kernels.values()))) or platform.release(), "kernels": kernels,
            "requested": {"sysctl": dict(profile.sysctls), "initcwnd": profile.initcwnd,
                          "initrwnd": profile.initrwnd, "flush_metrics": profile.flush_metrics},
            "hosts": hosts}


def effective(profile: TcpProfile, host: Runs, not_applied: dict[str, str]) -> dict[str, Any]:
    keys = list(dict.fromkeys([*RECORDED_SYSCTLS, *profile.sysctls]))
    values = {key: read_sysctl(host, key) for key in keys}
    mismatched = {key: {"requested": str(profile.sysctls[key]), "effective": values[key]}
                  for key in profile.sysctls
                  if key not in not_applied and values[key] != " ".join(str(profile.sysctls[key]).split())}
    if mismatched:
        raise TcpProfileError(f"TCP profile {profile.name!r} on the {host.role} host: the kernel did not take "
                              f"{mismatched}")
    route_list = []
    for route in routes(host):
        opts = dict((k, int(v)) for k, v in _ROUTE_OPTION.findall(" " + route))
        route_list.append({"route": _ROUTE_OPTION.sub("", route), "initcwnd": opts.get("initcwnd"),
                           "initrwnd": opts.get("initrwnd")})
    return {"sysctl": values, "not_applied": dict(not_applied), "routes": route_list,
            "metrics_flushed": profile.flush_metrics}
