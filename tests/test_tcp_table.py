"""Which connections still wait for the network, read from the kernel's socket tables: the
drain's criterion (testbed/tcp_table.py, docs/runner.md step 8)."""
from __future__ import annotations

import socket

import pytest

from conftest import lane_base, until
from support_testnet import veth_net
from testbed import netns, tcp_table
from testbed.hosts import Host
from testbed.lanes.hosts import NamespaceHost

LANE = lane_base() + 2

HEADER = ("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
          "timeout inode\n")


def row(local: str, remote: str, state: int, tx_queue: int = 0) -> str:
    """A /proc/net/tcp line as the kernel writes it (addresses as hex words in host order)."""
    return f"   0: {local} {remote} {state:02X} {tx_queue:08X}:00000000 00:00000000 00000000 0 0 1 1\n"


# 198.18.20.1 and 198.18.20.2 as the tables write them
FIXED, MOBILE, OTHER = "011412C6", "021412C6", "091412C6"


@pytest.mark.parametrize("state,tx_queue,waits", [
    (0x02, 0, True),     # SYN_SENT
    (0x03, 0, True),     # SYN_RECV
    (0x04, 0, True),     # FIN_WAIT1: our FIN not acknowledged
    (0x09, 0, True),     # LAST_ACK
    (0x0B, 0, True),     # CLOSING
    (0x01, 1448, True),  # ESTABLISHED with unacknowledged data
    (0x08, 10, True),    # CLOSE_WAIT with unacknowledged data
    (0x01, 0, False),    # idle: waits for an application
    (0x05, 0, False),    # FIN_WAIT2
    (0x06, 0, False),    # TIME_WAIT
    (0x08, 0, False),    # CLOSE_WAIT
])
def test_a_connection_waits_while_its_host_has_something_unacknowledged(state, tx_queue, waits) -> None:
    table = HEADER + row(f"{FIXED}:1F90", f"{MOBILE}:C350", state, tx_queue)
    assert unsettled_in(table, "198.18.20.1", "198.18.20.2") == int(waits)
    assert unsettled_in(table, "198.18.20.2", "198.18.20.1") == int(waits)   # either end


def test_a_text_without_a_table_is_refused() -> None:
    with pytest.raises(ValueError, match="no TCP socket table"):
        unsettled_in("", "198.18.20.1", "198.18.20.2")


def test_only_connections_between_the_two_addresses_count() -> None:
    table = (HEADER + row(f"{FIXED}:0016", f"{OTHER}:D000", 0x01, 5000)   # e.g. a management SSH
             + row(f"{FIXED}:1F90", f"{MOBILE}:C350", 0x09)
             + row(f"{FIXED}:1F90", "00000000:0000", 0x0A, 128))          # a listener's backlog
    assert unsettled_in(table, "198.18.20.1", "198.18.20.2") == 1
    # tcp6's IPv4-mapped addresses (::ffff:198.18.20.1) are the same connections
    mapped = HEADER + row(f"0000000000000000FFFF0000{FIXED}:1F90", f"0000000000000000FFFF0000{MOBILE}:C350", 0x04)
    assert unsettled_in(mapped, "198.18.20.1", "198.18.20.2") == 1
    assert unsettled_in(mapped, "198.18.20.1", "198.18.20.9") == 0


@pytest.mark.netns
def test_the_kernels_own_tables_in_both_namespaces() -> None:
    """Real sockets: idle, a sender whose data the peer cannot take, and a FIN that cannot
    arrive (the peer's interface down), as NamespaceHost reads them without a process."""
    with veth_net(LANE) as net:
        fixed = NamespaceHost("fixed", net.fixed_ns, net.fixed_addr)
        mobile = NamespaceHost("mobile", net.mobile_ns, net.mobile_addr)
        listener = netns.socket_in(net.mobile_ns, socket.AF_INET, socket.SOCK_STREAM)
        client = netns.socket_in(net.fixed_ns, socket.AF_INET, socket.SOCK_STREAM)
        idle = netns.socket_in(net.fixed_ns, socket.AF_INET, socket.SOCK_STREAM)
        try:
            listener.bind((net.mobile_addr, 5100))
            listener.listen()
            client.connect((net.mobile_addr, 5100))
            idle.connect((net.mobile_addr, 5100))
            accepted = [listener.accept()[0], listener.accept()[0]]
            assert until(lambda: unsettled(fixed, net.mobile_addr) == 0)
            assert unsettled(mobile, net.fixed_addr) == 0
            # the receiver never reads: its window closes and the sender keeps unsent data
            client.setblocking(False)
            try:
                while True:
                    client.send(b"x" * 65536)
            except BlockingIOError:
                pass
            assert unsettled(fixed, net.mobile_addr) == 1
            assert unsettled(mobile, net.fixed_addr) == 0
            assert unsettled(fixed, "198.18.20.99") == 0
            netns.run_in(net.mobile_ns, ["ip", "link", "set", "eth0", "down"])
            idle.close()          # FIN_WAIT1 until an ACK that cannot come
            assert until(lambda: unsettled(fixed, net.mobile_addr) == 2)
            # its FIN is retransmitted at the RTO (1 s after a handshake's RTT here, doubling)
            due = tcp_table.waiting(fixed.read_proc(tcp_table.TABLES), net.fixed_addr,
                                    net.mobile_addr).retransmission_due_s
            assert due is not None and 0.0 <= due <= 3.0, due
        finally:
            for s in (client, idle, listener, *locals().get("accepted", [])):
                s.close()


def unsettled_in(table_text: str, address: str, peer: str) -> int:
    return tcp_table.waiting(table_text, address, peer).connections


def unsettled(host: Host, peer: str) -> int:
    return unsettled_in(host.read_proc(tcp_table.TABLES), host.address, peer)


def timed_row(local: str, remote: str, state: int, timer: int, ticks: int) -> str:
    return f"   0: {local} {remote} {state:02X} 00000000:00000000 {timer:02X}:{ticks:08X} 00000003 0 0 1 1\n"


def test_a_waiting_connection_says_when_it_retransmits() -> None:
    """`tm->when` is in clock ticks (USER_HZ 100); only the retransmission timer (1) counts,
    the latest of the waiting connections' (the drain waits for it)."""
    table = (HEADER + timed_row(f"{MOBILE}:138B", f"{FIXED}:C4DE", 0x09, 1, 0x1F4)     # LAST_ACK, FIN due in 5 s
             + timed_row(f"{MOBILE}:138C", f"{FIXED}:C4DF", 0x04, 1, 0x32)             # FIN_WAIT1, 0.5 s
             + timed_row(f"{FIXED}:C4E0", f"{MOBILE}:138D", 0x05, 2, 0x1770))          # FIN_WAIT2: its own timer
    w = tcp_table.waiting(table, "198.18.20.2", "198.18.20.1")
    assert (w.connections, w.retransmission_due_s) == (2, 5.0)
    assert w.unsettled == ("LAST_ACK 0 B queued, retransmit", "FIN_WAIT1 0 B queued, retransmit")
    assert tcp_table.waiting(HEADER + row(f"{FIXED}:1F90", f"{MOBILE}:C350", 0x01), "198.18.20.1",
                             "198.18.20.2") == tcp_table.Waiting(0, None)


def test_an_unsettled_connection_without_a_retransmission_says_its_timer() -> None:
    """A drain that ends with connections waiting says what they waited on: here data behind
    a closed window (the zero-window probe timer, 4), which no retransmission ends."""
    table = HEADER + (f"   0: {FIXED}:1F90 {MOBILE}:C350 01 00000A00:00000000 04:00000064 00000003 0 0 1 1\n")
    w = tcp_table.waiting(table, "198.18.20.1", "198.18.20.2")
    assert w == tcp_table.Waiting(1, None, ("ESTABLISHED 2560 B queued, zero-window probe",))
