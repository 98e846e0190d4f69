"""TCP profiles on lab hosts over SSH, with what they change recorded and restored.

The namespace backend throws its namespaces away after a replication; a lab host stays,
so every sysctl a profile sets and every route whose options it changes is recorded the
first time it is touched (`HostState`) and put back by `HostState.restore()`.
The TCP metrics cache is flushed, as on namespaces; its old contents are not restored.
The values written and read back are the same as tcp_profile.apply's (tcp.json alike).
"""
from __future__ import annotations

import platform
from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence

from .ssh import quote
# The route parsing is the namespace backend's, so both write alike tcp.json routes.
from .tcp_profile import _ROUTE_OPTION, _ROUTE_STATUS_FLAGS, CONGESTION_KEY, RECORDED_SYSCTLS, TcpProfile, \
    TcpProfileError

AVAILABLE_CC = "net.ipv4.tcp_available_congestion_control"


class Runs(Protocol):
    role: str

    def run(self, argv: Sequence[str], *, check: bool = True, timeout: float = 30.0) -> Any: ...


def read_sysctl(host: Runs, key: str) -> str | None:
    proc = host.run(["cat", "/proc/sys/" + key.replace(".", "/")], check=False)
    return " ".join(proc.stdout.split()) if proc.returncode == 0 else None


def read_sysctls(host: Runs, keys: Sequence[str]) -> dict[str, str | None]:
    """Several sysctls in one round trip (None: no such sysctl)."""
    paths = " ".join("/proc/sys/" + key.replace(".", "/") for key in keys)
    script = f'for f in {paths}; do if [ -r "$f" ]; then echo "$(cat "$f")"; else echo "-missing-"; fi; done'
    lines = host.run(["sh", "-c", script], check=False).stdout.splitlines()
    if len(lines) != len(keys):
        return {key: read_sysctl(host, key) for key in keys}
    return {key: None if line == "-missing-" else " ".join(line.split()) for key, line in zip(keys, lines)}


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
        items = list(self.sysctls.items())
        failed = run_batch(self.host, [["sysctl", "-q", "-w", f"{key}={value}"] for key, value in items])
        problems = [f"{self.host.role}: sysctl -w {items[i][0]}={items[i][1]}: {m}" for i, m in failed.items()]
        # Routes that went with their device (the mobile NPA's route through its TUN) stay gone.
        present = {route.split()[0] for route in routes(self.host)} if self.routes else set()
        back = [route for route in self.routes or [] if route.split()[0] in present]
        failed = run_batch(self.host, [["ip", "route", "change", *route_argv(route)] for route in back])
        return problems + [f"{self.host.role}: ip route change {back[i]}: {m}" for i, m in failed.items()]


def run_batch(host: Runs, commands: Sequence[Sequence[str]]) -> dict[int, str]:
    """Runs every command in one round trip, each whatever the others did; returns the
    failed ones' output by index (one line each)."""
    if not commands:
        return {}
    parts = [f'o=$({quote(c)} 2>&1) || printf "sqfail {i} %s\\n" "$(printf %s "$o" | tr "\\n" " ")"'
             for i, c in enumerate(commands)]
    out = host.run(["sh", "-c", "; ".join(parts)], check=False).stdout
    failed = {}
    for line in out.splitlines():
        words = line.split(" ", 2)
        if words[0] == "sqfail" and len(words) >= 2 and words[1].isdigit():
            failed[int(words[1])] = words[2].strip() if len(words) > 2 else ""
    return failed


def _congestion_problem(host: Runs, name: str) -> str | None:
    probe = host.run(["modprobe", f"tcp_{name}"], check=False)
    available = (read_sysctl(host, AVAILABLE_CC) or "").split()
    if name in available:
        return None
    return (f"congestion control {name!r} is not available on the {host.role} host: "
            f"tcp_available_congestion_control is {' '.join(available) or '(empty)'}, and "
            f"`modprobe tcp_{name}` failed: {probe.stderr.strip() or f'exit {probe.returncode}'}")


def _set_sysctls(profile: TcpProfile, state: HostState) -> dict[str, str]:
    """Sets the profile's sysctls (one round trip to read, one to write); returns the
    problem of each that could not be set."""
    host, keys = state.host, list(profile.sysctls)
    current = read_sysctls(host, keys + [AVAILABLE_CC])
    problems, settable = {}, []
    for key in keys:
        value = str(profile.sysctls[key])
        if current[key] is None:
            problems[key] = f"sysctl {key} does not exist on the {host.role} host"
            continue
        if key == CONGESTION_KEY and value not in (current[AVAILABLE_CC] or "").split():
            problem = _congestion_problem(host, value)
            if problem:
                problems[key] = problem
                continue
        state.remember_sysctl(key, current[key])   # type: ignore[arg-type]
        settable.append(key)
    failed = run_batch(host, [["sysctl", "-q", "-w", f"{key}={profile.sysctls[key]}"] for key in settable])
    for i, message in failed.items():
        key = settable[i]
        problems[key] = f"sysctl -w {key}={profile.sysctls[key]} on the {host.role} host failed: {message}"
    return problems


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
    commands = [["ip", "route", "change", *route_argv(_ROUTE_OPTION.sub("", route)), *options] for route in current]
    failed = run_batch(state.host, commands)
    if failed:
        i, message = next(iter(failed.items()))
        raise TcpProfileError(f"TCP profile {profile.name!r} on the {state.host.role} host: "
                              f"`{' '.join(commands[i])}` failed: {message}")


def apply(profile: TcpProfile, states: Sequence[HostState]) -> dict[str, Any]:
    """tcp_profile.apply on lab hosts: settings keyed by role, for tcp.json."""
    hosts = {}
    for state in states:
        not_applied: dict[str, str] = {}
        for key, problem in _set_sysctls(profile, state).items():
            if key not in profile.optional:
                raise TcpProfileError(f"TCP profile {profile.name!r}: {problem}; mark {key} optional in "
                                      "scenarios/profiles/tcp.toml to record it as not applied")
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
    values = read_sysctls(host, keys)
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
