"""The one table of router engines: a scenario's `engine = "NAME"` picks its class here, and
everything that differs between engines is asked of the class (engine.py), never of the name."""
from __future__ import annotations

from testbed.router.directions import Routers, as_routers
from testbed.router.emulator_engine import EmulatorEngine
from testbed.router.engine import RouterEngine
from testbed.router.plan import RouterConfig
from testbed.router.tc_engine import TcEngine

ENGINES: dict[str, type[RouterEngine]] = {e.name: e for e in (
    TcEngine,
    EmulatorEngine,
)}


def engine_named(name: str) -> type[RouterEngine]:
    """The engine of a parsed plan (parse.py accepts only the names above)."""
    return ENGINES[name]


def engine_of(config: RouterConfig) -> type[RouterEngine]:
    return engine_named(config.engine)


def in_emulator(routers: Routers | RouterConfig | None) -> Routers:
    """The routers the emulator's configuration carries: those whose engine runs there."""
    kept = {d: c for d, c in as_routers(routers).items() if engine_of(c).in_emulator}
    return Routers(**kept)
