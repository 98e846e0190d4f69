"""The router's typed plan: what a scenario's `[router]` section says, validated, frozen.

Data only: `parse.py` makes it from the TOML table, each router engine consumes it
(`engines.py` chooses the engine by `RouterConfig.engine`), each class's queue is one
discipline's type (`disciplines/`). The format is documented with examples in docs/router.md.
"""
from __future__ import annotations

from dataclasses import dataclass

from testbed.router.disciplines.base import Discipline

# HTB warns when the quantum it computes (rate / r2q) is below 1000 bytes or above 200000
# bytes; an explicit quantum avoids that. One full-size packet per round is also what keeps
# DRR sharing between classes fair.
QUANTUM_FLOOR_BYTES = 1500
QUANTUM_CEILING_BYTES = 200_000
HTB_R2Q = 10
HTB_MAX_PRIORITY = 7
MAX_CLASSES = 64
MAX_DEVICE_QUEUE = 65536       # packets (the emulator's limit, emulator/CONFIG.md)

PROTOCOL_NUMBERS = {"icmp": 1, "tcp": 6, "udp": 17, "sctp": 132}

Queue = Discipline      # one of the types in disciplines/registry.py


@dataclass(frozen=True)
class RouterClass:
    name: str
    rate_bps: int
    ceil_bps: int
    priority: int
    quantum_bytes: int
    queue: Queue


@dataclass(frozen=True)
class RouterFilter:
    """Sends matching IPv4 packets to class `target`; unset fields match anything."""
    target: str
    dscp: int | None = None
    protocol: int | None = None
    sport: int | None = None
    dport: int | None = None
    src: str | None = None
    dst: str | None = None

    def criteria(self) -> list[tuple[str, int | str]]:
        """The fields that are set, as (name, value) in the order the engines write them."""
        names = ("dscp", "protocol", "src", "dst", "sport", "dport")
        return [(name, getattr(self, name)) for name in names if getattr(self, name) is not None]


@dataclass(frozen=True)
class RouterConfig:
    engine: str                     # a name in engines.py's table
    rate_bps: int
    diffserv: bool
    classes: tuple[RouterClass, ...]
    default_class: str
    filters: tuple[RouterFilter, ...]
    # packets between the router's queues and the link's send buffer (emulator engine only;
    # Seawind's 2.4 tun read queue held 10); 0: none
    device_queue: int = 0

    def disciplines(self) -> tuple[str, ...]:
        """The leaf qdisc kinds this configuration needs, each once, in class order."""
        return tuple(dict.fromkeys(c.queue.discipline for c in self.classes))


SINGLE_CLASS_NAME = "all"


def default_quantum(rate_bps: int) -> int:
    """HTB's own rate/r2q, kept within the range where the kernel does not warn."""
    return max(QUANTUM_FLOOR_BYTES, min(QUANTUM_CEILING_BYTES, rate_bps // 8 // HTB_R2Q))
