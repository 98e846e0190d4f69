"""The scenario's `[router]` as the emulator's router stage (`engine = "emulator"`).

One job: translate a `RouterConfig` (written for tc's HTB, testbed/router/plan.py) into the
`[DIR.router]`, `[DIR.router.class.NAME]` and `[DIR.router.filter.NAME]` sections of the
emulator's configuration file (emulator/CONFIG.md), with the checks of what the emulator
cannot do. Pure: no I/O. docs/router.md, "The emulator engine", explains the mapping.

- Scheduler: strict priority when the class priorities differ; when all are equal, weighted
  (deficit round robin) with share = the class's rate.
- Leaf queues map one to one, each rendered by its discipline's type (`emulator_keys`); RED's
  max_p is tc's `probability`, its w_q the configuration's (2^-wlog, so both engines use the
  same weight).
- Ignored, with a warning: `router.rate`, a class's `ceil` and `quantum` (the router stage
  drains into the send buffer at the link's rate), RED's `bandwidth` (the emulator decays the
  idle average with the link's current rate).
- Refused (ConfigError naming the key): `src`/`dst` prefix filters, port filters on SCTP, more
  classes or filters than the emulator holds, class names longer than it takes, a send buffer
  below the MTU.
- `device_queue` (Seawind's 2.4 tun read queue between the router and the send buffer) is
  written as it is; the link's send buffer keeps its size (Seawind's queue structure).
"""
from __future__ import annotations

from dataclasses import dataclass

from testbed.errors import ConfigError
from testbed.router.engine import LinkDirection
from testbed.router.plan import PROTOCOL_NUMBERS, RouterClass, RouterConfig, RouterFilter, default_quantum

# Limits of the emulator's router stage (emulator/CONFIG.md, "Router stage").
MAX_CLASSES = 16
MAX_FILTERS = 32
MAX_NAME_LENGTH = 31
SCTP = PROTOCOL_NUMBERS["sctp"]
EMULATOR_PORT_PROTOCOLS = (PROTOCOL_NUMBERS["tcp"], PROTOCOL_NUMBERS["udp"])
_PROTOCOL_NAMES = {number: name for name, number in PROTOCOL_NUMBERS.items()}


@dataclass(frozen=True)
class EmulatorRouter:
    """The rendered sections and what the emulator engine does differently from tc."""
    direction: str
    scheduler: str                   # "priority" | "weighted"
    sections: str                    # the sections, ready to append to the configuration
    warnings: tuple[str, ...]        # each names the key, e.g. "router.rate: ..."

    @property
    def text(self) -> str:
        """The sections preceded by the warnings as comments, for the configuration file."""
        notes = "".join(f"# emulator engine: {w}\n" for w in self.warnings)
        return notes + self.sections


def emulator_router(config: RouterConfig, *, link: LinkDirection | None = None,
                    direction: str = "down", where: str = "router") -> EmulatorRouter:
    """The router stage for `direction` of the emulator's configuration.

    `where` prefixes key paths in errors and warnings (e.g. `scenarios/x.toml: router`).
    With `link` (that direction of the link), also checks the send buffer the router stage
    needs (at least one MTU).
    """
    check_supported(config, where)
    scheduler = scheduler_for(config)
    lines = [f"[{direction}.router]", f"scheduler = {scheduler}", f"default = {config.default_class}"]
    if config.device_queue:
        lines.append(f"device_queue = {config.device_queue}")
    for cls in config.classes:
        lines += ["", f"[{direction}.router.class.{cls.name}]", *_class_lines(cls, scheduler)]
    for index, flt in enumerate(config.filters):
        lines += ["", f"[{direction}.router.filter.{filter_name(index)}]", *_filter_lines(flt)]
    notes = _ignored_keys(config, scheduler, link, where)
    if link is not None:
        _check_send_buffer(link, direction)
    return EmulatorRouter(direction, scheduler, "\n".join(lines) + "\n", tuple(notes))


def scheduler_for(config: RouterConfig) -> str:
    """Strict priority when the class priorities differ (or there is one class), else weighted
    by rate: HTB gives classes of one priority their rates and lends the rest by quantum,
    which by default is in proportion to the rate too."""
    if len(config.classes) > 1 and len({c.priority for c in config.classes}) == 1:
        return "weighted"
    return "priority"


def filter_name(index: int) -> str:
    """The emulator's name of `router.filters[index]`."""
    return f"filter{index}"


# --- what the emulator cannot do ---------------------------------------------------------

def check_supported(config: RouterConfig, where: str = "router") -> None:
    """ConfigError, naming the key, for what the emulator's router stage cannot express."""
    if len(config.classes) > MAX_CLASSES:
        raise ConfigError(f"{where}.classes", f"has {len(config.classes)} classes; the emulator engine "
                                              f"holds at most {MAX_CLASSES} (engine = \"tc\" takes more)")
    if len(config.filters) > MAX_FILTERS:
        raise ConfigError(f"{where}.filters", f"has {len(config.filters)} filters; the emulator engine "
                                              f"holds at most {MAX_FILTERS}")
    for cls in config.classes:
        if len(cls.name) > MAX_NAME_LENGTH:
            raise ConfigError(f"{where}.classes.{cls.name}", f"the emulator engine takes class names of at "
                                                             f"most {MAX_NAME_LENGTH} characters")
    for index, flt in enumerate(config.filters):
        _check_filter(flt, f"{where}.filters[{index}]")


def _check_filter(flt: RouterFilter, where: str) -> None:
    for key in ("src", "dst"):
        if getattr(flt, key) is not None:
            raise ConfigError(f"{where}.{key}", "address prefix filters are not supported by the emulator "
                                                "engine (it classifies by DSCP, protocol and ports); use "
                                                "engine = \"tc\" or classify by port")
    for key in ("sport", "dport"):
        if getattr(flt, key) is not None and flt.protocol not in EMULATOR_PORT_PROTOCOLS:
            protocol = _PROTOCOL_NAMES.get(flt.protocol, str(flt.protocol))
            raise ConfigError(f"{where}.{key}", f"port filters on {protocol} are not supported by the emulator "
                                                "engine (it reads TCP and UDP ports only); use engine = \"tc\"")


# --- sections --------------------------------------------------------------------------

def _class_lines(cls: RouterClass, scheduler: str) -> list[str]:
    lines = [f"priority = {cls.priority}"] if scheduler == "priority" else [f"share = {cls.rate_bps}bit"]
    return lines + cls.queue.emulator_keys()


def _filter_lines(flt: RouterFilter) -> list[str]:
    """Its class and criteria (src/dst were refused by _check_filter), a protocol by its name."""
    return [f"class = {flt.target}"] + [f"{name} = {_PROTOCOL_NAMES.get(value, value) if name == 'protocol' else value}"
                                        for name, value in flt.criteria()]


# --- what the emulator ignores -------------------------------------------------------------

def _ignored_keys(config: RouterConfig, scheduler: str, link: LinkDirection | None, where: str) -> list[str]:
    notes = []
    if link is not None and not _is_link_rate(config.rate_bps, link):
        notes.append(f"{where}.rate: {config.rate_bps} bit/s is ignored; the router stage drains into the "
                     f"link's send buffer at the link's rate ({_rate_text(link)})")
    for cls in config.classes:
        notes += _ignored_class_keys(cls, config, link, f"{where}.classes.{cls.name}" if config.diffserv else where)
    if scheduler == "priority" and len(config.classes) > 1:
        notes.append(f"{where}.classes: the priorities differ, so the classes are served by strict priority "
                     "(a class only when every class of a lower priority number is empty, equal priorities "
                     "in arrival order); their rates are not guaranteed as HTB guarantees them")
    return notes


def _ignored_class_keys(cls: RouterClass, config: RouterConfig, link: LinkDirection | None, at: str) -> list[str]:
    notes = []
    if config.diffserv and cls.ceil_bps != config.rate_bps:
        notes.append(f"{at}.ceil: {cls.ceil_bps} bit/s is ignored; classes are not capped, the router "
                     "stage drains at the link's rate")
    if config.diffserv and cls.quantum_bytes != default_quantum(cls.rate_bps):
        notes.append(f"{at}.quantum: {cls.quantum_bytes} B is ignored; the weighted scheduler's quantum "
                     "is one MTU for the smallest share, proportionally more for the others")
    if link is not None:
        notes += [f"{at}.queue.{key}: {why}" for key, why in cls.queue.emulator_ignores(_default_rate(config, link))]
    return notes


def _constant_rate(link: LinkDirection) -> tuple[bool, int | None]:
    """(True, rate or None = unlimited) for a constant bandwidth, (False, None) for a schedule."""
    try:
        return True, link.rate_bps
    except ValueError:
        return False, None


def _is_link_rate(rate_bps: int, link: LinkDirection) -> bool:
    constant, link_rate = _constant_rate(link)
    return constant and link_rate == rate_bps


def _default_rate(config: RouterConfig, link: LinkDirection) -> int:
    """The parser's default for a queue's rate (RED's bandwidth): the link's, else (a schedule,
    unlimited) the router's."""
    constant, link_rate = _constant_rate(link)
    return link_rate if constant and link_rate is not None else config.rate_bps


def _rate_text(link: LinkDirection) -> str:
    constant, link_rate = _constant_rate(link)
    if not constant:
        return "its bandwidth schedule"
    return "unlimited" if link_rate is None else f"{link_rate} bit/s"


def _check_send_buffer(link: LinkDirection, direction: str) -> None:
    if link.send_buffer < link.mtu:
        raise ConfigError(f"link.{direction}.send_buffer", f"{link.send_buffer} B is below the MTU {link.mtu} B; "
                                                           "with a router stage (router engine = \"emulator\") "
                                                           "every packet must fit into the send buffer")
