"""Pieces of the SSH backend that need neither root nor a host: batched commands and what
they report, the record/restore of a TCP profile's changes, exit codes of remote programs.
A stand-in host runs the commands on this machine (reading /proc/sys, never writing)."""
from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from typing import Sequence

from testbed import ssh_tcp
from testbed.ssh import RemoteProcess


@dataclass
class LocalHost:
    """Runs commands here; `fake` answers some argv prefixes instead (what a host would say)."""
    role: str = "fixed"
    fake: dict[tuple[str, ...], subprocess.CompletedProcess] = field(default_factory=dict)
    calls: list[list[str]] = field(default_factory=list)

    def run(self, argv: Sequence[str], *, check: bool = True, timeout: float = 30.0) -> subprocess.CompletedProcess:
        self.calls.append(list(argv))
        for prefix, answer in self.fake.items():
            if tuple(argv[:len(prefix)]) == prefix:
                return answer
        return subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout)


def test_a_batch_reports_each_failed_command_by_index_with_its_output() -> None:
    host = LocalHost()
    failed = ssh_tcp.run_batch(host, [["true"], ["sh", "-c", "echo no such thing >&2; echo line 2; exit 3"],
                                      ["echo", "a b"], ["false"]])
    assert failed == {1: "no such thing line 2", 3: ""}
    assert len(host.calls) == 1, "one round trip for the whole batch"
    assert ssh_tcp.run_batch(host, []) == {} and len(host.calls) == 1


def test_sysctls_read_in_one_round_trip_missing_ones_none() -> None:
    host = LocalHost()
    values = ssh_tcp.read_sysctls(host, ["net.ipv4.tcp_rmem", "net.ipv4.no_such_sysctl", "kernel.ostype"])
    assert values["net.ipv4.no_such_sysctl"] is None and values["kernel.ostype"] == "Linux"
    assert len(values["net.ipv4.tcp_rmem"].split(" ")) == 3, "whitespace normalised like tcp_profile"
    assert len(host.calls) == 1


def test_restore_writes_back_the_first_values_and_skips_routes_that_are_gone() -> None:
    routes = "198.18.40.0/24 dev eth0 proto kernel scope link src 198.18.40.1 initcwnd 4\n"
    host = LocalHost(fake={("ip", "route", "show"): subprocess.CompletedProcess([], 0, routes, ""),
                           ("sh", "-c"): subprocess.CompletedProcess([], 0, "", "")})
    state = ssh_tcp.HostState(host)
    state.remember_sysctl("net.ipv4.tcp_sack", "1")
    state.remember_sysctl("net.ipv4.tcp_sack", "0")          # a later value is not the original
    state.routes = ["198.18.40.0/24 dev eth0 proto kernel scope link src 198.18.40.1",
                    "198.18.41.0/24 dev wl0 scope link"]     # went with the TUN
    assert state.restore() == []
    batches = [call[2] for call in host.calls if call[:2] == ["sh", "-c"]]
    assert "sysctl -q -w net.ipv4.tcp_sack=1" in batches[0] and "tcp_sack=0" not in batches[0]
    assert "ip route change 198.18.40.0/24 dev eth0 proto kernel scope link src 198.18.40.1" in batches[1]
    assert "198.18.41.0/24" not in batches[1]


@dataclass
class FinishedSsh:
    returncode: int

    def poll(self) -> int:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        return self.returncode


def test_remote_exit_codes_read_like_popen() -> None:
    def code(local: int) -> int | None:
        return RemoteProcess(None, ["x"], FinishedSsh(local), "/p").poll()   # type: ignore[arg-type]
    assert code(0) == 0 and code(3) == 3
    assert code(128 + 9) == -9 and code(128 + 15) == -15, "the remote shell's 128 + n: killed by signal n"
    assert code(255) == 255, "ssh's own failure stays visible"
