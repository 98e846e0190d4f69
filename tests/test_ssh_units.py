"""Pieces of the SSH backend that need neither root nor a host: batched commands and what
they report, the record/restore of a TCP profile's changes, exit codes of remote programs,
and that every word of a command reaches the remote program as it is.
A stand-in host runs the commands on this machine (reading /proc/sys, never writing)."""
from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from testbed import tcp_apply
from testbed.lab.ssh import RemoteProcess, SshClient, SshTarget

# Words a shell would act on if they were pasted into a command line unquoted.
HOSTILE = ["$(touch {m})", "`touch {m}`", "a; touch {m}", "two  words", "it's", '"dq"', "x > {m}", "-n", "*"]


@dataclass
class LocalHost:
    """Runs commands here; `fake` answers some argv prefixes instead (what a host would say)."""
    role: str = "fixed"
    fake: dict[tuple[str, ...], subprocess.CompletedProcess] = field(default_factory=dict)
    calls: list[list[str]] = field(default_factory=list)
    label: str = "the fixed host (here)"

    def run(self, argv: Sequence[str], *, check: bool = True, timeout: float = 30.0,
            input: str | None = None) -> subprocess.CompletedProcess:
        self.calls.append(list(argv))
        for prefix, answer in self.fake.items():
            if tuple(argv[:len(prefix)]) == prefix:
                return answer
        return subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, input=input)


class LoopbackClient(SshClient):
    """An SshClient whose "ssh HOST --" is `sh -c`: the remote command line it builds is run by
    a local shell, as sshd hands it to the login shell."""

    def base_argv(self, *, stdin: bool = False) -> list[str]:
        return ["sh", "-c"]

    def close(self) -> None:
        if self._own_dir is not None:
            self._own_dir.cleanup()


def loopback() -> LoopbackClient:
    return LoopbackClient(SshTarget("loopback"))


def test_a_batch_reports_each_failed_command_by_index_with_its_output() -> None:
    host = LocalHost()
    failed = tcp_apply.run_batch(host, [["true"], ["sh", "-c", "echo no such thing >&2; echo line 2; exit 3"],
                                        ["echo", "a b"], ["false"]])
    assert failed == {1: "no such thing line 2", 3: ""}
    assert len(host.calls) == 1, "one round trip for the whole batch"
    assert tcp_apply.run_batch(host, []) == {} and len(host.calls) == 1


def test_sysctls_read_in_one_round_trip_missing_ones_none() -> None:
    host = LocalHost()
    values = tcp_apply.read_sysctls(host, ["net.ipv4.tcp_rmem", "net.ipv4.no_such_sysctl", "kernel.ostype"])
    assert values["net.ipv4.no_such_sysctl"] is None and values["kernel.ostype"] == "Linux"
    assert len(values["net.ipv4.tcp_rmem"].split(" ")) == 3, "whitespace normalised"
    assert len(host.calls) == 1


def test_restore_writes_back_the_first_values_and_skips_routes_that_are_gone() -> None:
    routes = "198.18.40.0/24 dev eth0 proto kernel scope link src 198.18.40.1 initcwnd 4\n"
    done = subprocess.CompletedProcess([], 0, "", "")
    host = LocalHost(fake={("ip", "route", "show"): subprocess.CompletedProcess([], 0, routes, ""),
                           ("sh", "-c"): done, ("ip", "tcp_metrics"): done})
    tcp = tcp_apply.HostTcp(host, restorable=True)
    tcp.sysctls.setdefault("net.ipv4.tcp_sack", "1")
    tcp.sysctls.setdefault("net.ipv4.tcp_sack", "0")          # a later value is not the original
    tcp.routes = ["198.18.40.0/24 dev eth0 proto kernel scope link src 198.18.40.1",
                  "198.18.41.0/24 dev wl0 scope link"]       # went with the TUN
    assert tcp.restore() == []
    batches = [call[2] for call in host.calls if call[:2] == ["sh", "-c"]]
    assert "sysctl -q -w net.ipv4.tcp_sack=1" in batches[0] and "tcp_sack=0" not in batches[0]
    assert "ip route change 198.18.40.0/24 dev eth0 proto kernel scope link src 198.18.40.1" in batches[1]
    assert "198.18.41.0/24" not in batches[1]
    assert host.calls[-1] == ["ip", "tcp_metrics", "flush"], "a fresh host's metrics cache is empty"


def test_a_throwaway_host_restores_nothing() -> None:
    host = LocalHost()
    assert tcp_apply.HostTcp(host, restorable=False).restore() == [] and host.calls == []


def test_every_word_of_a_command_reaches_the_remote_program_as_it_is(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    words = [w.format(m=marker) for w in HOSTILE]
    client = loopback()
    try:
        assert client.run(["printf", "%s\\n", *words]).stdout.splitlines() == words
        assert client.run(["cat"], input="a $(b)\n").stdout == "a $(b)\n"
        target = tmp_path / f"a dir; $(touch {marker})" / f"file 'x' `touch {marker}`"
        client.write_bytes(target, b"data")
        assert target.read_bytes() == b"data"
        proc = client.popen(["printf", "%s\\n", *words], tmp_path / "out", tmp_path / "err", tmp_path / "pid $(x);y")
        assert proc.wait(10) == 0 and (tmp_path / "out").read_text().splitlines() == words
        assert (tmp_path / "pid $(x);y").read_text().strip().isdigit()
    finally:
        client.close()
    assert not marker.exists(), "a word was run by the remote shell"


def test_sysctl_names_reach_the_remote_shell_as_data(tmp_path: Path) -> None:
    """A sysctl name is part of a path read on the host; it must never become shell code
    there, even if it got past the profile's validation."""
    marker = tmp_path / "ran"
    client = loopback()
    host = LocalHost(label="loopback")
    host.run = client.run                                    # type: ignore[method-assign]
    try:
        for word in HOSTILE:                                 # one by one: each alone must not run
            key = f"net.ipv4.tcp_sack{word.format(m=marker)}"
            values = tcp_apply.read_sysctls(host, ["net.ipv4.tcp_sack", key])
            assert not marker.exists(), f"the sysctl name {key!r} was run by the remote shell"
            assert values["net.ipv4.tcp_sack"] in ("0", "1") and values[key] is None, values
    finally:
        client.close()


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
