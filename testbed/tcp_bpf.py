"""The BPF part of a TCP profile (its `bpf` table, scenarios/profiles/tcp.toml): the timers
a Linux 2.4 host had that no sysctl sets, attached for one host's sockets by squall-hostbpf
(hostbpf/) and removed when the host's TCP settings are released.

    record = attach(host, {"syn_rto_ms": 3000, "delack_max_ms": 200}, "linux-2.4")
    detach(host, record["pid"])

squall-hostbpf attaches hostbpf/src/host_2004.bpf.c to the cgroup v2 root, limited to the
network namespace it runs in (on a lane: the host's namespace; on a lab host: the machine),
and leaves a process holding the attachment: the program is gone when that process is, so a
lane's teardown (which kills every process of its namespaces) removes it on every path, and a
lab host's restore() kills it. Mapping to Linux 2.4: docs/tcp-variants.md.
"""
from __future__ import annotations

import re
from typing import Any, Mapping

from testbed.hosts import Host

LOADER = "squall-hostbpf"
OBJECT = "squall-host-2004.bpf.o"
# What a profile's bpf table may set (milliseconds; 0: the kernel's own value).
SETTINGS = ("syn_rto_ms", "delack_max_ms")
MAX_MS = 60000            # squall-hostbpf's bound
# Kills $1 only if it is still the loader (a pid may have been reused); gone already is fine.
_KILL_LOADER = '[ "$(cat /proc/$1/comm 2>/dev/null)" = "$2" ] || exit 0; kill -TERM "$1"'
_ATTACHED = re.compile(r"attached pid=(\d+) program=(\d+) netns_cookie=(\d+)")


class TcpBpfError(RuntimeError):
    """The program could not be attached or removed (the message names the host)."""


def attach(host: Host, settings: Mapping[str, int], profile: str) -> dict[str, Any]:
    """Attaches the program with `settings` for the host's sockets; returns tcp.json's record
    of it: the settings, the holding process and the kernel's program id."""
    argv = [host.program(LOADER), host.program(OBJECT), *(f"{k}={settings[k]}" for k in SETTINGS if k in settings)]
    proc = host.run(argv, check=False)
    found = _ATTACHED.search(proc.stdout)
    if proc.returncode != 0 or not found:
        raise TcpBpfError(f"TCP profile {profile!r} on {host.label}: {' '.join(argv)} failed "
                          f"(exit {proc.returncode}): {(proc.stderr or proc.stdout).strip() or 'no output'}")
    return {"settings": dict(settings), "pid": int(found[1]), "program_id": int(found[2]),
            "netns_cookie": int(found[3])}


def detach(host: Host, pid: int) -> str | None:
    """Ends the process holding the attachment (the kernel then removes the program);
    None when done, else why not."""
    proc = host.run(["sh", "-c", _KILL_LOADER, "sh", str(pid), LOADER], check=False)
    if proc.returncode != 0:
        return f"{host.label}: kill {pid} (the {LOADER} holding the profile's BPF program): {proc.stderr.strip()}"
    return None
