"""A sender's packets the link lost, by cause: each packet the sender's capture shows is
looked up in the emulator log by its identity fields (emulator/LOG_FORMAT.md, "Packet
identity"). DESIGN.md §3.5 and analysis/README.md ("fates") count

- error drops: `drop_err` (hit on its last ARQ attempt);
- congestion drops: `drop_sbuf` (the link's send buffer) + `drop_router` (the emulator's router
  stage) + the packets that never entered the link (sent, but with no `in`: a tc router drop
  before the emulator). Of k captured copies with the same fields and j `in` events, k - j
  never entered (the copies are told apart by order only, so which one is not known; how many
  is).
`drop_mtu` is neither. Drops are counted from the log's own drop events of the flow's
direction and 4-tuple, not through a join."""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from validation.independent.capture import Datagram, Segment
from validation.independent.emulator_log import FlowKey, Identity, LinkLog

FLAG_LETTERS = "FSRPAUEC"       # bit 0 (FIN) first, as the log writes them


@dataclass(frozen=True)
class Drops:
    drop_err: int
    drop_sbuf: int
    drop_router: int
    unseen: int                 # sent, never entered the link

    @property
    def error(self) -> int:
        return self.drop_err

    @property
    def congestion(self) -> int:
        return self.drop_sbuf + self.drop_router + self.unseen


def _letters(flags: int) -> str:
    return "".join(c for i, c in enumerate(FLAG_LETTERS) if flags & (1 << i)) or "."


def identity(p: Segment | Datagram) -> Identity:
    """The ten packet columns as the log would write them for this packet."""
    ip_id = "-" if p.ip_id is None else str(p.ip_id)
    head = (p.src, str(p.sport), p.dst, str(p.dport), ip_id)
    if isinstance(p, Segment):
        return ("tcp", *head, str(p.seq), str(p.ack), _letters(p.flags), str(p.length))
    return ("udp", *head, "-", "-", "-", str(p.length))


def drops(log: LinkLog, direction: str, sent: Sequence[Segment | Datagram]) -> Drops:
    """The drops of one sender's packets of one flow (`sent`: all of them, from its capture)."""
    if not sent:
        return Drops(0, 0, 0, 0)
    first = sent[0]
    proto = "tcp" if isinstance(first, Segment) else "udp"
    key: FlowKey = (direction, proto, first.src, str(first.sport), first.dst, str(first.dport))
    captured = Counter(identity(p) for p in sent)
    unseen = sum(max(0, n - log.entered.get(i, 0)) for i, n in captured.items())
    return Drops(log.drops["drop_err"][key], log.drops["drop_sbuf"][key],
                 log.drops["drop_router"][key], unseen)
