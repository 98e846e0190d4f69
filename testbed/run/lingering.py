"""Connections one replication leaves open on hosts the next one uses again (a CBI chain's
kept lane, a warm-up's lane, lab hosts).

A segment lost at the very end (typically the receiver's FIN) is retransmitted at the
sender's RTO, which the drain waits for only so long (replication.DRAIN_LIMIT_S); a
connection still open after it would send that retransmission through the next
replication's link, where its capture shows a connection no flow declares. Before every
replication and warm-up each such connection is destroyed (`ss -K`, the kernel's
SOCK_DESTROY): the link is down then, so nothing it sends on the way out reaches anything.
"""
from __future__ import annotations

from testbed import tcp_table
from testbed.hosts import Host, Testbed


class LingeringError(RuntimeError):
    """Connections of an earlier replication survive on the lane."""


def clear(testbed: Testbed) -> int:
    """Destroys the connections between the fixed and the mobile host still open in a state
    that can send; how many there were. Raises LingeringError when some survive."""
    found = _count(testbed)
    if found == 0:
        return 0
    for host, peer in _pairs(testbed):
        # `connected`: every state but LISTEN and CLOSE (ss's default set leaves SYN_RECV out)
        host.run(["ss", "-K", "-t", "-n", "state", "connected", "dst", peer.address], check=False)
    left = _count(testbed)
    if left:
        raise LingeringError(f"{testbed.label}: {left} of {found} TCP connections of an earlier replication "
                             "between the fixed and the mobile host are still open after `ss -K` (a kernel "
                             "without CONFIG_INET_DIAG_DESTROY?); they would send into this replication's link")
    return found


def _count(testbed: Testbed) -> int:
    return sum(tcp_table.lingering(host.read_proc(tcp_table.TABLES), host.address, peer.address)
               for host, peer in _pairs(testbed))


def _pairs(testbed: Testbed) -> tuple[tuple[Host, Host], ...]:
    return ((testbed.fixed, testbed.mobile), (testbed.mobile, testbed.fixed))
