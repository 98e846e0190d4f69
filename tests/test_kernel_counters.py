"""The kernel counters' parser (testbed/run/kernel_counters.py), without root; against
`nstat` on a real namespace in tests/test_instruments_netns.py."""
from __future__ import annotations

import pytest

from testbed.run.kernel_counters import CountersError, delta, parse_counters

# --- kernel counters ----------------------------------------------------------------------------

SNMP = """Ip: Forwarding DefaultTTL InReceives OutRequests
Ip: 1 64 120 118
Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens CurrEstab
Tcp: 1 200 120000 -1 3 1 2
Udp: InDatagrams OutDatagrams
Udp: 40 41
"""
NETSTAT = """TcpExt: SyncookiesSent TCPTimeouts
TcpExt: 0 5
IpExt: InOctets OutOctets
IpExt: 9000 8000
"""
SNMP6 = "Ip6InReceives                   \t7\nUdp6InDatagrams                 \t2\n"


def test_counters_are_parsed_under_nstats_names_without_settings_or_gauges() -> None:
    counters = parse_counters(SNMP + NETSTAT + SNMP6)
    assert counters == {"IpInReceives": 120, "IpOutRequests": 118, "TcpActiveOpens": 3,
                        "TcpPassiveOpens": 1, "UdpInDatagrams": 40, "UdpOutDatagrams": 41,
                        "TcpExtSyncookiesSent": 0, "TcpExtTCPTimeouts": 5, "IpExtInOctets": 9000,
                        "IpExtOutOctets": 8000, "Ip6InReceives": 7, "Udp6InDatagrams": 2}
    assert delta({"a": 1, "b": 5}, {"a": 4, "b": 5, "c": 1}) == {"a": 3, "b": 0}


def test_counters_refuse_a_names_line_without_its_values() -> None:
    with pytest.raises(CountersError, match="`Tcp:` line of names without its line of values"):
        parse_counters("Tcp: ActiveOpens PassiveOpens\nUdp: 1 2\n")
