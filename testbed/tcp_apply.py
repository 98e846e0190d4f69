"""A TCP profile (testbed/tcp_profile.py) applied to hosts through the `Host` interface, the
same way on a lane's namespaces and on lab hosts over SSH.

    fixed = HostTcp(testbed.fixed, restorable=True)      # one per host, kept for the run
    settings = apply(profile, [fixed, mobile])           # the dict saved as tcp.json
    problems = fixed.restore()                           # what could not be put back

On each host the profile's sysctls are set (a congestion control the kernel does not offer
yet is loaded with `modprobe tcp_<name>` first), `initcwnd`/`initrwnd` are set on every
route of the main table, the TCP metrics cache is flushed unless the profile keeps it; then
every recorded sysctl and the routes are read back: the host's entry of tcp.json. Reads and
writes are batched, one command per step whatever the number of sysctls (on a lab host one
SSH round trip), and every command is an argv list: shell scripts are constant text with
their data as positional parameters, or argv lists joined with shell quoting.

A lane's namespaces are thrown away after a replication: their HostTcp is not restorable
and restore() does nothing. A lab host stays: each sysctl and the routes are recorded the
first time the profile touches them, and restore() writes those values back (routes that
went with their device stay gone) and flushes the metrics cache again (its earlier contents
are not restored). Mapping of the studies' variants to this kernel: docs/tcp-variants.md.
"""
from __future__ import annotations

import argparse
import json
import platform
import re
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from testbed import netns, tcp_bpf
from testbed.errors import ConfigError
from testbed.hosts import Host
from testbed.tcp_profile import CONGESTION_KEY, RECORDED_SYSCTLS, TcpProfile, load, write_tcp_json

AVAILABLE_CC = "net.ipv4.tcp_available_congestion_control"
_ROUTE_OPTION = re.compile(r"\s+(initcwnd|initrwnd)\s+(\d+)")
# Flags `ip route show` prints that `ip route change` does not accept back.
_ROUTE_STATUS_FLAGS = {"linkdown", "dead", "offload", "trap", "rt_offload", "rt_trap", "rt_offload_failed"}
_MISSING = "-missing-"
# One line per file given as a positional parameter: its value, or -missing- when unreadable.
_READ_SYSCTLS = f'for f; do if v=$(cat -- "$f" 2>/dev/null); then printf "%s\\n" "$v"; else echo {_MISSING}; fi; done'


class TcpProfileError(RuntimeError):
    """A profile cannot be applied on a host (the message names the host and the setting)."""


def sysctl_path(key: str) -> str:
    return "/proc/sys/" + key.replace(".", "/")


def read_sysctl(host: Host, key: str) -> str | None:
    """The value on the host (whitespace normalised), None when its kernel has no such sysctl."""
    proc = host.run(["cat", "--", sysctl_path(key)], check=False)
    return " ".join(proc.stdout.split()) if proc.returncode == 0 else None


def read_sysctls(host: Host, keys: Sequence[str]) -> dict[str, str | None]:
    """Several sysctls in one command (None: no such sysctl)."""
    proc = host.run(["sh", "-c", _READ_SYSCTLS, "sh", *(sysctl_path(key) for key in keys)], check=False)
    lines = proc.stdout.splitlines()
    if len(lines) != len(keys):           # a value of several lines: read one by one
        return {key: read_sysctl(host, key) for key in keys}
    return {key: None if line == _MISSING else " ".join(line.split()) for key, line in zip(keys, lines)}


def run_batch(host: Host, commands: Sequence[Sequence[str]]) -> dict[int, str]:
    """Runs every command in one round trip, each whatever the others did; returns the
    failed ones' output by index (one line each)."""
    if not commands:
        return {}
    parts = [f'o=$({shlex.join(c)} 2>&1) || printf "sqfail {i} %s\\n" "$(printf %s "$o" | tr "\\n" " ")"'
             for i, c in enumerate(commands)]
    out = host.run(["sh", "-c", "; ".join(parts)], check=False).stdout
    failed = {}
    for line in out.splitlines():
        words = line.split(" ", 2)
        if words[0] == "sqfail" and len(words) >= 2 and words[1].isdigit():
            failed[int(words[1])] = words[2].strip() if len(words) > 2 else ""
    return failed


def routes(host: Host) -> list[str]:
    out = host.run(["ip", "route", "show", "table", "main"]).stdout
    return [line.strip() for line in out.splitlines() if line.strip()]


def route_words(route: str) -> list[str]:
    """A route as `ip route show` prints it, as words `ip route change` accepts."""
    return [w for w in route.split() if w not in _ROUTE_STATUS_FLAGS]


def route_options(host: Host) -> list[dict[str, Any]]:
    """Every route of the main table with its initcwnd/initrwnd (None: the kernel's default)."""
    result = []
    for route in routes(host):
        opts = dict((k, int(v)) for k, v in _ROUTE_OPTION.findall(" " + route))
        result.append({"route": _ROUTE_OPTION.sub("", route), "initcwnd": opts.get("initcwnd"),
                       "initrwnd": opts.get("initrwnd")})
    return result


class HostTcp:
    """The TCP settings of one host: applies profiles; when `restorable`, records what it
    changes the first time and puts it back on restore()."""

    def __init__(self, host: Host, *, restorable: bool):
        self.host, self.restorable = host, restorable
        self.sysctls: dict[str, str] = {}      # the values before the first change
        self.routes: list[str] | None = None   # the main table before the first change
        self.bpf_pid: int | None = None        # the squall-hostbpf holding the profile's program
        self._kernel: str | None = None

    def kernel(self) -> str:
        """The host's kernel release (`uname -r`)."""
        if self._kernel is None:
            self._kernel = self.host.run(["uname", "-r"], check=False).stdout.strip() or platform.release()
        return self._kernel

    def apply(self, profile: TcpProfile) -> dict[str, Any]:
        """Sets the profile; returns the effective settings (the host's entry of tcp.json).

        Raises TcpProfileError naming the setting when a non-optional sysctl or congestion
        control is missing; optional ones are recorded under "not_applied"."""
        not_applied: dict[str, str] = {}
        for key, problem in self._set_sysctls(profile).items():
            if key not in profile.optional:
                raise TcpProfileError(f"TCP profile {profile.name!r} on {self.host.label}: {problem}; mark {key} "
                                      "optional in scenarios/profiles/tcp.toml to record it as not applied")
            not_applied[key] = problem
        self._set_route_options(profile)
        if profile.flush_metrics:
            self.flush_metrics()
        self.detach_bpf()                      # the previous replication's program, if any
        bpf = tcp_bpf.attach(self.host, profile.bpf, profile.name) if profile.bpf else None
        self.bpf_pid = bpf["pid"] if bpf else None
        try:
            return {**self.effective(profile, not_applied), "bpf": bpf}
        except BaseException:
            self.detach_bpf()
            raise

    def detach_bpf(self) -> list[str]:
        """Removes the profile's BPF program, if one is attached; what could not be done."""
        pid, self.bpf_pid = self.bpf_pid, None
        problem = tcp_bpf.detach(self.host, pid) if pid is not None else None
        return [problem] if problem else []

    def flush_metrics(self) -> None:
        """Forgets cached per-destination metrics (ssthresh, RTT, cwnd)."""
        self.host.run(["ip", "tcp_metrics", "flush"], check=False)

    def _set_sysctls(self, profile: TcpProfile) -> dict[str, str]:
        """Sets the profile's sysctls (one command to read, one to write); returns the
        problem of each that could not be set."""
        keys = list(profile.sysctls)
        if not keys:
            return {}
        current = read_sysctls(self.host, keys + [AVAILABLE_CC])
        problems, settable = {}, []
        for key in keys:
            value = str(profile.sysctls[key])
            if current[key] is None:
                problems[key] = f"sysctl {key} does not exist on this kernel ({self.kernel()})"
                continue
            if key == CONGESTION_KEY and value not in (current[AVAILABLE_CC] or "").split():
                problem = self._load_congestion_control(value)
                if problem:
                    problems[key] = problem
                    continue
            if self.restorable:
                self.sysctls.setdefault(key, current[key])     # type: ignore[arg-type]
            settable.append(key)
        writes = [f"{key}={profile.sysctls[key]}" for key in settable]
        for i, message in run_batch(self.host, [["sysctl", "-q", "-w", w] for w in writes]).items():
            problems[settable[i]] = f"sysctl -w {writes[i]} failed: {message}"
        return problems

    def _load_congestion_control(self, name: str) -> str | None:
        """None once `name` is available (its module loaded), else why not."""
        probe = self.host.run(["modprobe", f"tcp_{name}"], check=False)
        available = (read_sysctl(self.host, AVAILABLE_CC) or "").split()
        if name in available:
            return None
        return (f"congestion control {name!r} is not available on this kernel ({self.kernel()}): "
                f"tcp_available_congestion_control is {' '.join(available) or '(empty)'}, and "
                f"`modprobe tcp_{name}` failed: {probe.stderr.strip() or f'exit {probe.returncode}'}")

    def _set_route_options(self, profile: TcpProfile) -> None:
        options = []
        if profile.initcwnd:
            options += ["initcwnd", str(profile.initcwnd)]
        if profile.initrwnd:
            options += ["initrwnd", str(profile.initrwnd)]
        if not options:
            return
        current = routes(self.host)
        if self.restorable and self.routes is None:
            self.routes = current
        if not current:
            raise TcpProfileError(f"TCP profile {profile.name!r}: {self.host.label} has no routes to set "
                                  f"{' '.join(options)} on; apply the profile after the network is up")
        commands = [["ip", "route", "change", *route_words(_ROUTE_OPTION.sub("", route)), *options]
                    for route in current]
        failed = run_batch(self.host, commands)
        if failed:
            i, message = next(iter(failed.items()))
            raise TcpProfileError(f"TCP profile {profile.name!r} on {self.host.label}: "
                                  f"`{shlex.join(commands[i])}` failed: {message}")

    def effective(self, profile: TcpProfile, not_applied: Mapping[str, str]) -> dict[str, Any]:
        """What is in effect: every recorded sysctl and the profile's, the routes' options;
        TcpProfileError when the kernel did not take a value the profile set."""
        keys = list(dict.fromkeys([*RECORDED_SYSCTLS, *profile.sysctls]))
        values = read_sysctls(self.host, keys)
        mismatched = {key: {"requested": str(profile.sysctls[key]), "effective": values[key]}
                      for key in profile.sysctls
                      if key not in not_applied and values[key] != " ".join(str(profile.sysctls[key]).split())}
        if mismatched:
            raise TcpProfileError(f"TCP profile {profile.name!r} on {self.host.label}: the kernel did not take "
                                  f"{json.dumps(mismatched)}")
        return {"sysctl": values, "not_applied": dict(not_applied), "routes": route_options(self.host),
                "metrics_flushed": profile.flush_metrics}

    def restore(self) -> list[str]:
        """Puts every recorded value back and flushes the metrics cache (a fresh host's is
        empty) and removes the profile's BPF program; returns what could not be restored, one
        line each. Not restorable: only the BPF program (a lane's teardown would remove it too)."""
        if not self.restorable:
            return self.detach_bpf()
        role, items = self.host.role, list(self.sysctls.items())
        failed = run_batch(self.host, [["sysctl", "-q", "-w", f"{key}={value}"] for key, value in items])
        problems = [f"{role}: sysctl -w {items[i][0]}={items[i][1]}: {m}" for i, m in failed.items()]
        if self.routes:
            # Routes that went with their device (the mobile NPA's route through its TUN) stay gone.
            present = {route.split()[0] for route in routes(self.host)}
            back = [route for route in self.routes if route.split()[0] in present]
            failed = run_batch(self.host, [["ip", "route", "change", *route_words(route)] for route in back])
            problems += [f"{role}: ip route change {back[i]}: {m}" for i, m in failed.items()]
        self.flush_metrics()
        return problems + self.detach_bpf()


def apply(profile: TcpProfile, hosts: Sequence[HostTcp]) -> dict[str, Any]:
    """Applies the profile on every host at once (each is a few commands that wait for the host);
    returns tcp.json's dict, hosts keyed by role. The first host's error is raised."""
    with ThreadPoolExecutor(max_workers=max(1, len(hosts))) as pool:
        futures = [(tcp.host.role, pool.submit(tcp.apply, profile)) for tcp in hosts]
        effective = {role: future.result() for role, future in futures}
    return {"profile": profile.name, "description": profile.description,
            "kernel": " ".join(sorted({tcp.kernel() for tcp in hosts})) or platform.release(),
            "requested": {"sysctl": dict(profile.sysctls), "initcwnd": profile.initcwnd,
                          "initrwnd": profile.initrwnd, "flush_metrics": profile.flush_metrics,
                          "bpf": dict(profile.bpf)},
            "hosts": effective}


@dataclass(frozen=True)
class _Namespace:
    """A namespace named on the command line, as much of a `Host` as HostTcp uses; its role
    is its name, so tcp.json's hosts are keyed by namespace."""
    role: str

    @property
    def label(self) -> str:
        return f"namespace {self.role}"

    def run(self, argv: Sequence[str], *, check: bool = True,
            timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
        return netns.run_in(self.role, argv, check=check, timeout=timeout)


def main(argv: list[str] | None = None) -> int:
    """`python -m testbed.tcp_apply PROFILE NS... [--json FILE]`: a profile of
    scenarios/profiles/tcp.toml applied to network namespaces of this machine; nothing is restored."""
    p = argparse.ArgumentParser(description="Apply a TCP profile of scenarios/profiles/tcp.toml to namespaces")
    p.add_argument("profile")
    p.add_argument("namespaces", nargs="+")
    p.add_argument("--json", type=Path, help="also write the effective settings there (tcp.json)")
    args = p.parse_args(argv)
    try:
        hosts = [HostTcp(_Namespace(ns), restorable=False) for ns in args.namespaces]
        settings = apply(load(args.profile), hosts)
    except (ConfigError, TcpProfileError, tcp_bpf.TcpBpfError, netns.CommandError) as e:
        print(f"tcp_apply: {e}", file=sys.stderr)
        return 2
    if args.json:
        write_tcp_json(args.json, settings)
    print(json.dumps(settings, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
