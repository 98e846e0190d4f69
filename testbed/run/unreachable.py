"""Datagrams that arrived where nothing listened (docs/runner.md, "Instruments").

A host whose kernel answers datagrams with ICMP port unreachable had no socket on their port
when they arrived: their receiver had ended (killed from outside, a program that quit early,
squall stopping it before the link had delivered) or never listened. Whatever its exit status
and its own summary say, it did not receive what was sent to it, so the replication is not ok.
Judged from the captures, for any program: the host's own ICMP errors in its capture (the
quoted datagram's port where its IPv4 header is in the record's first bytes). One exception, which
a flow declares (FlowBase.late_answer_ports): answers from a port whose requests a client gives up
on and sends again, as a DNS resolver does, may find the asking socket closed; they are counted
(`late_answers`), not a problem."""
from __future__ import annotations

from typing import Any

import numpy as np

from analysis.metrics.capture_vs_log import PROTO_UDP

PROTO_ICMP, PROTO_ICMP6 = 1, 58
# (protocol, type, code) of "port unreachable"
PORT_UNREACHABLE = ((PROTO_ICMP, 3, 3), (PROTO_ICMP6, 1, 4))
_QUOTED_IPV4 = 20      # an IPv4 header without options, then the quoted UDP ports


def port_unreachables(records: np.ndarray, sources: list[str], own: set[str]) -> np.ndarray:
    """Rows of the records (analysis.read.pcap) that are port unreachables the host itself sent."""
    mine = np.fromiter((s in own for s in sources), bool, len(sources))
    found = np.zeros(len(records), bool)
    for proto, kind, code in PORT_UNREACHABLE:
        found |= ((records["proto"] == proto) & (records["icmp_type"] == kind)
                  & (records["icmp_code"] == code))
    return np.flatnonzero(found & mine)


def _quoted(record: Any) -> tuple[int, int] | None:
    """(source, destination) port of the UDP datagram an ICMPv4 error quotes, where known."""
    head = bytes(record["head"])[:int(record["head_len"])]
    if len(head) >= _QUOTED_IPV4 + 4 and head[0] == 0x45 and head[9] == PROTO_UDP:
        return (int.from_bytes(head[_QUOTED_IPV4:_QUOTED_IPV4 + 2], "big"),
                int.from_bytes(head[_QUOTED_IPV4 + 2:_QUOTED_IPV4 + 4], "big"))
    return None


def quoted_ports(records: np.ndarray) -> list[int]:
    """The destination ports of the UDP datagrams these ICMPv4 errors quote, where known."""
    return sorted({q[1] for r in records if (q := _quoted(r)) is not None})


def unreachable_evidence(side: str, records: np.ndarray, sources: list[str], own: set[str],
                         t0_us: int | None, late_answer_ports: frozenset[int] = frozenset()
                         ) -> tuple[dict[str, Any], str | None]:
    """(what status.json keeps, the problem or None) for one host's capture; `late_answer_ports`:
    answers from these ports to a socket that had closed are counted, not a problem."""
    rows = port_unreachables(records, sources, own)
    late = [row for row in rows if (q := _quoted(records[row])) is not None and q[0] in late_answer_ports]
    rows = np.setdiff1d(rows, np.asarray(late, dtype=rows.dtype))
    if not len(rows):
        return {"port_unreachable": 0, **({"late_answers": len(late)} if late else {})}, None
    ports = quoted_ports(records[rows])
    first_us = int(records["ts_us"][rows[0]])
    first_s = None if t0_us is None else round((first_us - t0_us) / 1e6, 3)
    evidence = {"port_unreachable": len(rows), "ports": ports, "first_s": first_s}
    where = f" to port {', '.join(map(str, ports))}" if ports else ""
    when = f" (the first {first_s:g} s after t = 0)" if first_s is not None else ""
    return evidence, (f"the {side} host answered {len(rows)} datagrams{where} with ICMP port "
                      f"unreachable{when}: their receiver was not listening while they arrived, so it did "
                      "not receive what was sent to it, whatever its exit status says")
