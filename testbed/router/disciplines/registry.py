"""The one table of queue disciplines: a scenario's `discipline = "NAME"` picks its type here."""
from __future__ import annotations

from testbed.errors import ConfigError
from testbed.router.disciplines.base import Discipline
from testbed.router.disciplines.bfifo import BfifoQueue
from testbed.router.disciplines.codel import CodelQueue
from testbed.router.disciplines.dualpi2 import DualPi2Queue
from testbed.router.disciplines.fq_codel import FqCodelQueue
from testbed.router.disciplines.head_drop import HeadDropQueue
from testbed.router.disciplines.pfifo import PfifoQueue
from testbed.router.disciplines.pie import PieQueue
from testbed.router.disciplines.red import RedQueue
from testbed.router.values import expect_table

DISCIPLINES: dict[str, type[Discipline]] = {t.discipline: t for t in (
    PfifoQueue,
    BfifoQueue,
    RedQueue,
    HeadDropQueue,
    CodelQueue,
    FqCodelQueue,
    PieQueue,
    DualPi2Queue,
)}


def parse_queue(body: object, where: str, link_rate_bps: int) -> Discipline:
    """A class's `queue` table as its discipline's type, validated by that type."""
    expect_table(body, where)
    assert isinstance(body, dict)
    names = ", ".join(DISCIPLINES)
    if "discipline" not in body:
        raise ConfigError(f"{where}.discipline", f"is missing; expected one of {names}")
    name = body["discipline"]
    kind = DISCIPLINES.get(name) if isinstance(name, str) else None
    if kind is None:
        raise ConfigError(f"{where}.discipline", f"unknown discipline {name!r}; expected one of {names}")
    return kind.parse(body, where, link_rate_bps)
