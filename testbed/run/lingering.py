"""Connections one replication leaves open on hosts the next one uses again (a CBI chain's
kept lane, a warm-up's lane, lab hosts).

A segment lost at the very end (typically the receiver's FIN) is retransmitted at the
sender's RTO, which the drain waits for only so long (drain_bound.DRAIN_LIMIT_S); a
connection still open after it would send that retransmission through the next
replication's link, where its capture shows a connection no flow declares. Before every
replication and warm-up each such connection is destroyed (`ss -K`, the kernel's
SOCK_DESTROY): the link is down then, so nothing it sends on the way out reaches anything.

Listing, destroying and listing again use one ss filter, so what is counted is what `ss -K`
was asked to destroy. A host whose connections cannot be listed fails the replication: a
lane that could not be checked is not known clean.
"""
from __future__ import annotations

import subprocess
from dataclasses import dataclass

from testbed.hosts import Host
from testbed.link.testbed import Testbed

# Every state that can still send: ss's `connected` (all but LISTEN and CLOSE) without
# TIME_WAIT, which answers but never sends by itself.
_CAN_SEND = ("state", "connected", "exclude", "time-wait")
_TIMEOUT_S = 15.0
# Said with survivors, never checked here: neither the kernel's version nor why they survived.
_HINT = ("hint (not checked): `ss -K` destroys nothing on a kernel built without "
         "CONFIG_INET_DIAG_DESTROY")


class LingeringError(RuntimeError):
    """The lane may still hold connections of an earlier replication: some survived `ss -K`,
    or a host's connections could not be listed."""


@dataclass(frozen=True)
class Socket:
    """One connection as `ss -t -n -H` printed it."""
    state: str
    local: str
    peer: str

    def __str__(self) -> str:
        return f"{self.state} {self.local} {self.peer}"


def parse(listing: str) -> list[Socket]:
    """The connections in `ss -t -n -H` output (State Recv-Q Send-Q Local Peer, a line each);
    ValueError for a line of another shape."""
    sockets = []
    for line in listing.splitlines():
        fields = line.split()
        if not fields:
            continue
        if len(fields) < 5:
            raise ValueError(f"a line that is not State Recv-Q Send-Q Local Peer: {line!r}")
        sockets.append(Socket(fields[0], fields[3], fields[4]))
    return sockets


def clear(testbed: Testbed) -> int:
    """Destroys the connections between the fixed and the mobile host still open in a state
    that can send; how many there were. Raises LingeringError when some survive or a host's
    cannot be listed."""
    pairs = _pairs(testbed)
    found = sum(len(listed(testbed, host, peer)) for host, peer in pairs)
    if found == 0:
        return 0
    stderr = {host.label: _destroy(testbed, host, peer) for host, peer in pairs}
    left = {host.label: listed(testbed, host, peer) for host, peer in pairs}
    if any(left.values()):
        raise LingeringError(_survivors(testbed.label, found, left, stderr))
    return found


def listed(testbed: Testbed, host: Host, peer: Host) -> list[Socket]:
    """The connections from `host` to `peer` that can still send."""
    argv = _argv(peer)
    done = _ss(testbed, host, argv)
    what = f"{testbed.label}: listing the TCP connections to {peer.address} on {host.label} (`{' '.join(argv)}`)"
    if done.returncode != 0:
        raise LingeringError(f"{what} failed (exit {done.returncode}), so the lane is not known clean; "
                             f"ss's stderr: {done.stderr.strip() or '(empty)'}")
    try:
        return parse(done.stdout)
    except ValueError as e:
        raise LingeringError(f"{what} printed {e}") from e


def _destroy(testbed: Testbed, host: Host, peer: Host) -> str:
    """`ss -K` on the connections listed() finds; its stderr (the list again says what is left)."""
    return _ss(testbed, host, _argv(peer, "-K")).stderr.strip()


def _argv(peer: Host, *options: str) -> list[str]:
    return ["ss", *options, "-t", "-n", "-H", *_CAN_SEND, "dst", peer.address]


def _ss(testbed: Testbed, host: Host, argv: list[str]) -> subprocess.CompletedProcess[str]:
    try:
        return host.run(argv, check=False, timeout=_TIMEOUT_S)
    except subprocess.TimeoutExpired as e:
        raise LingeringError(f"{testbed.label}: `{' '.join(argv)}` on {host.label} did not end within "
                             f"{_TIMEOUT_S:g} s, so the lane is not known clean") from e


def _survivors(label: str, found: int, left: dict[str, list[Socket]], stderr: dict[str, str]) -> str:
    hosts = [f"on {host}: {', '.join(map(str, sockets)) or 'none left'}; "
             f"`ss -K`'s stderr there: {stderr[host] or '(empty)'}" for host, sockets in left.items()]
    return (f"{label}: {sum(map(len, left.values()))} of {found} TCP connections of an earlier replication between "
            f"the fixed and the mobile host are still open after `ss -K` and would send into this replication's "
            f"link; " + "; ".join(hosts) + f"; {_HINT}")


def _pairs(testbed: Testbed) -> tuple[tuple[Host, Host], ...]:
    return ((testbed.fixed, testbed.mobile), (testbed.mobile, testbed.fixed))
