"""What running a flow takes besides its command lines: when its passive program is ready,
which packets it sends where on the link, and what it sends on a schedule (plain data the
replication, the instruments and the warnings read; each kind fills them in)."""
from __future__ import annotations

from dataclasses import dataclass

from testbed.router.plan import PROTOCOL_NUMBERS

TCP, UDP = PROTOCOL_NUMBERS["tcp"], PROTOCOL_NUMBERS["udp"]


@dataclass(frozen=True)
class Readiness:
    """When the passive program is ready for the active one: it printed a line starting with
    `line`, or (`listen`) a socket listens on the flow's port at its host; then `delay_us` more."""
    line: str | None = "listening"
    listen: bool = False
    delay_us: int = 0


@dataclass(frozen=True)
class LinkPackets:
    """The packets one side of a flow sends in one direction of the link (what the DiffServ
    warnings match filters against); None: an ephemeral port."""
    link_direction: str          # down | up
    what: str                    # data, ACKs, requests, responses, packets
    protocol: int
    tos: int
    sport: int | None
    dport: int | None


@dataclass(frozen=True)
class PacedStream:
    """Datagrams a flow's sender sends on a schedule: every `interval_us` to `port`, from the
    `side` host (fixed | mobile). The sender's capture shows whether the schedule was kept."""
    side: str
    port: int
    interval_us: float
