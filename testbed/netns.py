"""Running commands inside network namespaces with iproute2.

One job: turn "do X in namespace N" into a subprocess call (or, for a socket or a
/proc/net table, into a helper thread that enters N), and report failures with the
command that was attempted.
"""
from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


class CommandError(RuntimeError):
    """A command failed; the message names the command and its stderr."""


def run(argv: Sequence[str], *, check: bool = True, timeout: float = 30.0,
        input: str | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(list(argv), input=input, capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise CommandError(f"`{' '.join(argv)}` failed (exit {proc.returncode}): {proc.stderr.strip()}")
    return proc


def in_ns(ns: str, argv: Sequence[str]) -> list[str]:
    """The argv that runs argv inside namespace ns."""
    return ["ip", "netns", "exec", ns, *argv]


def run_in(ns: str, argv: Sequence[str], **kw) -> subprocess.CompletedProcess[str]:
    return run(in_ns(ns, argv), **kw)


def popen_in(ns: str | None, argv: Sequence[str], **kw) -> subprocess.Popen:
    """Starts argv in namespace ns (None: this process's) in a session, and so a process group, of
    its own: a hangup of squall's terminal, or of a group orphaned while one of its programs is
    stopped (a suspended capture), never signals the emulator, the NPAs or any other program;
    squall alone stops what it started. Every program squall starts is started here."""
    return subprocess.Popen(list(argv) if ns is None else in_ns(ns, argv), start_new_session=True, **kw)


def exists(ns: str) -> bool:
    return ns in list_namespaces()


def list_namespaces() -> list[str]:
    out = run(["ip", "netns", "list"]).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def create(ns: str) -> None:
    """Creates ns with lo up and IPv6 off (no stray router solicitations on the link)."""
    run(["ip", "netns", "add", ns])
    run_in(ns, ["ip", "link", "set", "lo", "up"])
    for key in ("all", "default"):
        run_in(ns, ["sysctl", "-q", "-w", f"net.ipv6.conf.{key}.disable_ipv6=1"])


def pids(ns: str) -> list[int]:
    out = run(["ip", "netns", "pids", ns], check=False).stdout
    return [int(p) for p in out.split()]


def delete(ns: str) -> None:
    """Kills every process in ns, then removes it and the CPU-wait cgroups of its programs
    (testbed/cpu_wait.py). Missing ns is not an error."""
    from testbed import cpu_wait

    if exists(ns):
        for pid in pids(ns):
            run(["kill", "-KILL", str(pid)], check=False)
        run(["ip", "netns", "delete", ns])
    cpu_wait.remove_namespaces([ns])


_CLONE_NEWNET = 0x40000000


def socket_in(ns: str, family: int, type_: int, proto: int = 0) -> "socket.socket":
    """A socket that lives in namespace ns, usable from any thread of this process (a socket
    keeps the namespace it was created in)."""
    return _in_namespace(ns, lambda: socket.socket(family, type_, proto))


def read_in(ns: str, paths: Sequence[str]) -> list[str]:
    """The texts of /proc/net/... files as namespace ns sees them ("" for a missing one),
    read without starting a process."""
    def read() -> list[str]:
        texts = []
        for path in paths:        # a thread sees its own namespace under /proc/thread-self
            try:
                texts.append(Path("/proc/thread-self", Path(path).relative_to("/proc")).read_text())
            except FileNotFoundError:
                texts.append("")
        return texts
    return _in_namespace(ns, read)


def _in_namespace(ns: str, make: Callable[[], T]) -> T:
    """make() run in namespace ns: setns is per thread, so a helper thread enters ns, calls it
    and ends; the caller's thread never moves."""
    import ctypes
    import threading

    result: list[object] = []

    def enter_and_make() -> None:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            fd = os.open(f"/run/netns/{ns}", os.O_RDONLY)
            try:
                if libc.setns(fd, _CLONE_NEWNET) != 0:
                    err = ctypes.get_errno()
                    raise OSError(err, f"setns into namespace {ns} failed: {os.strerror(err)}")
            finally:
                os.close(fd)
            result.append(make())
        except BaseException as e:  # handed to the caller's thread
            result.append(e)

    worker = threading.Thread(target=enter_and_make, name=f"in-{ns}")
    worker.start()
    worker.join()
    if isinstance(result[0], BaseException):
        raise result[0]
    return result[0]  # type: ignore[return-value]
