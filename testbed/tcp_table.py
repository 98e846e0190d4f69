"""The kernel's TCP socket table (/proc/net/tcp and tcp6): which connections between two
testbed addresses still wait for the network.

A connection is *unsettled* while its host has sent something the peer has not acknowledged:
a SYN (SYN_SENT, SYN_RECV), a FIN (FIN_WAIT1, CLOSING, LAST_ACK) or data (a non-zero
tx_queue, which counts unacknowledged as well as unsent bytes). A receiver's pending delayed
ACK shows as its peer's unacknowledged data. FIN_WAIT2, CLOSE_WAIT, TIME_WAIT and an idle
ESTABLISHED connection wait for an application, not for the network.
"""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass

TABLES = ("/proc/net/tcp", "/proc/net/tcp6")

# include/net/tcp_states.h
_SYN_SENT, _SYN_RECV, _FIN_WAIT1, _LAST_ACK, _CLOSING = 0x02, 0x03, 0x04, 0x09, 0x0B
_ESTABLISHED, _CLOSE_WAIT = 0x01, 0x08
_WAITING_FOR_ACK = {_SYN_SENT, _SYN_RECV, _FIN_WAIT1, _LAST_ACK, _CLOSING}
_WITH_DATA = {_ESTABLISHED, _CLOSE_WAIT}
_RETRANSMIT_TIMER = 1        # the `tr` field: retransmission, loss probe or reordering timer
USER_HZ = 100                # `tm->when` is in clock ticks (jiffies_delta_to_clock_t)
_STATE_NAMES = {0x01: "ESTABLISHED", 0x02: "SYN_SENT", 0x03: "SYN_RECV", 0x04: "FIN_WAIT1", 0x08: "CLOSE_WAIT",
                0x09: "LAST_ACK", 0x0B: "CLOSING"}
# net/ipv4/tcp_ipv4.c get_tcp4_sock: 1 retransmit/loss probe/reordering, 2 sk_timer
# (keepalive, FIN_WAIT2), 4 zero window probe
_TIMER_NAMES = {0: "no timer", 1: "retransmit", 2: "keepalive", 3: "time-wait", 4: "zero-window probe"}


@dataclass(frozen=True)
class Waiting:
    """The unsettled connections between two addresses, and the latest time from now at which
    one of them retransmits (None: no retransmission timer is armed); `unsettled` says of each
    its state and timer, for a drain that ends with them still waiting."""
    connections: int
    retransmission_due_s: float | None
    unsettled: tuple[str, ...] = ()


def waiting(table_text: str, address: str, peer: str) -> Waiting:
    """The connections between `address` and `peer` (IPv4, also as IPv4-mapped IPv6) in the
    text of one or more socket tables that still wait for an acknowledgement, and when the last
    of their retransmission timers fires; ValueError when the text holds no table."""
    due, unsettled = None, []
    for state, tx_queue, timer, ticks in _rows(table_text, address, peer):
        if state in _WAITING_FOR_ACK or (state in _WITH_DATA and tx_queue > 0):
            unsettled.append(f"{_STATE_NAMES.get(state, hex(state))} {tx_queue} B queued, "
                             f"{_TIMER_NAMES.get(timer, f'timer {timer}')}")
            if timer == _RETRANSMIT_TIMER:
                due = max(due or 0.0, ticks / USER_HZ)
    return Waiting(len(unsettled), due, tuple(unsettled))


def _rows(table_text: str, address: str, peer: str) -> list[tuple[int, int, int, int]]:
    """(state, tx_queue, timer, ticks to its expiry) of each connection between the two."""
    if "local_address" not in table_text:
        raise ValueError("no TCP socket table (no local_address header) in the text read")
    ends = {_proc_hex(address), _proc_hex(peer)}
    rows = []
    for line in table_text.splitlines():
        fields = line.split()
        if len(fields) < 6 or ":" not in fields[1] or fields[0] == "sl":
            continue
        local, remote = fields[1].rsplit(":", 1)[0], fields[2].rsplit(":", 1)[0]
        if {_as_v4(local), _as_v4(remote)} != ends:
            continue
        timer, _, ticks = fields[5].partition(":")
        rows.append((int(fields[3], 16), int(fields[4].split(":")[0], 16), int(timer, 16), int(ticks or "0", 16)))
    return rows


def _proc_hex(address: str) -> str:
    """An IPv4 address as the tables write it: the 32-bit word in host (little-endian) order."""
    return ipaddress.IPv4Address(address).packed[::-1].hex().upper()


def _as_v4(field: str) -> str:
    """An IPv4 table's address as it is; an IPv4-mapped one of tcp6 (::ffff:a.b.c.d, four
    host-order words) as its last word; any other IPv6 address as it is (it matches nothing)."""
    if len(field) == 32 and field[:16] == "0" * 16 and field[16:24] == "FFFF0000":
        return field[24:]
    return field
