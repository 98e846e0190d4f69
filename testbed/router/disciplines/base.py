"""What a queue discipline is to the rest of squall: one frozen type per discipline.

A discipline parses and validates its `queue = { discipline = ..., ... }` table once (`parse`),
and renders itself for every router engine: tc's qdisc options (testbed/router/tc_render.py)
and the emulator's class keys (testbed/router/emulator_stage.py, emulator/CONFIG.md). The
table that maps a name to its type is registry.py; docs/architecture.md says how to add one.
"""
from __future__ import annotations

from typing import ClassVar, Protocol, Self


class Discipline(Protocol):
    discipline: ClassVar[str]      # its name in scenario files, tc and emulator.conf
    kernel_module: ClassVar[str]   # the Linux module whose qdisc tc creates (for messages)

    @classmethod
    def parse(cls, body: dict, where: str, link_rate_bps: int) -> Self:
        """The validated queue from its TOML table (`where` names it in errors); the link's
        rate is the default of whatever drains at the link's rate."""

    def tc_options(self) -> str:
        """The qdisc kind and its options as `tc qdisc add ... <options>` takes them."""

    def emulator_keys(self) -> list[str]:
        """The `key = value` lines of the emulator's [DIR.router.class.NAME] section."""

    def emulator_ignores(self, default_rate_bps: int) -> list[tuple[str, str]]:
        """(key, why) for each value the emulator engine cannot honour; `default_rate_bps` is
        what the parser took for a rate left out (the link's)."""

    def describe(self) -> str:
        """The queue as `squall show` prints it."""

    def most_bytes(self, mtu: int) -> int:
        """The most the queue can hold, in bytes (a packet limit counts packets of the MTU)."""
