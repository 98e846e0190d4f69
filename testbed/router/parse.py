"""The `[router]` section of a scenario parsed into the typed plan (plan.py).

One job: turn the parsed TOML table into typed, validated, frozen data. Nothing here touches
the system. A class's queue is parsed by its discipline's type (disciplines/registry.py), the
engine's name is looked up in engines.py. The format is documented in docs/router.md.
"""
from __future__ import annotations

import dataclasses
import ipaddress
import re

from testbed.errors import ConfigError
from testbed.router.disciplines.registry import parse_queue
from testbed.router.engines import ENGINES, engine_named
from testbed.router.plan import (
    HTB_MAX_PRIORITY, MAX_CLASSES, MAX_DEVICE_QUEUE, PROTOCOL_NUMBERS, SINGLE_CLASS_NAME, RouterClass,
    RouterConfig, RouterFilter, default_quantum,
)
from testbed.router.values import (
    expect_table, int_in_range, parse_dscp, positive_rate, positive_size, reject_unknown,
)

PORT_PROTOCOLS = (6, 17, 132)

_CLASS_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,31}$")


def parse_router(section: dict, where: str, link_rate_bps: int) -> RouterConfig:
    """Validates the `[router]` table; `where` is like `scenarios/x.toml: router`.

    `link_rate_bps` is the downlink rate: the router's default total rate and the
    default RED `bandwidth` (the rate at which the queue drains).
    """
    expect_table(section, where)
    reject_unknown(section, where, {"engine", "rate", "queue", "classes", "default", "filters",
                                     "device_queue"})
    engine = _parse_engine(section.get("engine", "tc"), f"{where}.engine")
    rate = positive_rate(section["rate"], f"{where}.rate") if "rate" in section else link_rate_bps
    device_queue = _device_queue(section, engine, f"{where}.device_queue")
    if "queue" in section and "classes" in section:
        raise ConfigError(where, "has both `queue` (one class, no DiffServ) and `classes` (DiffServ); "
                                 "give exactly one of them")
    if "classes" in section:
        config = _parse_diffserv(section, where, engine, rate, link_rate_bps)
    elif "queue" in section:
        config = _parse_single_class(section, where, engine, rate, link_rate_bps)
    else:
        raise ConfigError(where, "needs `queue` (one class with the whole rate, no DiffServ) "
                                 "or `classes` (DiffServ classes); found neither")
    return dataclasses.replace(config, device_queue=device_queue)


def _device_queue(section: dict, engine: str, where: str) -> int:
    """Packets between the router's queues and the link's send buffer (docs/router.md)."""
    if "device_queue" not in section:
        return 0
    packets = int_in_range(section["device_queue"], 0, MAX_DEVICE_QUEUE, where,
                            "a number of packets (10: the 2.4 tun read queue of Seawind)")
    refusal = engine_named(engine).device_queue_refusal
    if packets and refusal:
        raise ConfigError(where, refusal)
    return packets


def _parse_single_class(section: dict, where: str, engine: str, rate: int, link_rate: int) -> RouterConfig:
    for key in ("default", "filters"):
        if key in section:
            raise ConfigError(f"{where}.{key}", "is only meaningful with `classes` (DiffServ); "
                                                "without classes every packet goes to the one queue")
    queue = parse_queue(section["queue"], f"{where}.queue", link_rate)
    only = RouterClass(SINGLE_CLASS_NAME, rate, rate, 0, default_quantum(rate), queue)
    return RouterConfig(engine, rate, False, (only,), SINGLE_CLASS_NAME, ())


def _parse_diffserv(section: dict, where: str, engine: str, rate: int, link_rate: int) -> RouterConfig:
    table = section["classes"]
    expect_table(table, f"{where}.classes")
    if not table:
        raise ConfigError(f"{where}.classes", "is empty; expected at least one class such as [router.classes.BE]")
    if len(table) > MAX_CLASSES:
        raise ConfigError(f"{where}.classes", f"has {len(table)} classes; at most {MAX_CLASSES} are supported")
    classes = tuple(_parse_class(name, body, f"{where}.classes.{name}", rate, link_rate)
                    for name, body in table.items())
    _check_guarantees_fit(classes, rate, f"{where}.classes")
    names = [c.name for c in classes]
    if "default" not in section:
        raise ConfigError(f"{where}.default", f"is missing; name the class for unclassified traffic, "
                                              f"one of {', '.join(names)}")
    default = _class_reference(section["default"], names, f"{where}.default")
    filters = _parse_filters(section.get("filters", []), names, f"{where}.filters")
    return RouterConfig(engine, rate, True, classes, default, filters)


def _parse_class(name: str, body: object, where: str, parent_rate: int, link_rate: int) -> RouterClass:
    if not _CLASS_NAME.match(name):
        raise ConfigError(where, "class names start with a letter and contain only letters, digits, "
                                 "'_' and '-' (at most 32 characters)")
    expect_table(body, where)
    reject_unknown(body, where, {"rate", "ceil", "priority", "quantum", "queue"})
    if "rate" not in body:
        raise ConfigError(f"{where}.rate", "is missing; expected the guaranteed rate, such as \"32kbit\"")
    rate = positive_rate(body["rate"], f"{where}.rate")
    ceil = positive_rate(body["ceil"], f"{where}.ceil") if "ceil" in body else parent_rate
    if ceil > parent_rate:
        raise ConfigError(f"{where}.ceil", f"{ceil} bit/s is above the router rate {parent_rate} bit/s; "
                                           "a class cannot borrow more than its parent has")
    if rate > parent_rate:
        raise ConfigError(f"{where}.rate", f"{rate} bit/s is above the router rate {parent_rate} bit/s")
    if rate > ceil:
        raise ConfigError(f"{where}.rate", f"{rate} bit/s is above the class ceil {ceil} bit/s")
    priority = int_in_range(body.get("priority", 0), 0, HTB_MAX_PRIORITY, f"{where}.priority",
                             "an HTB priority (0 is served first)")
    quantum = (positive_size(body["quantum"], f"{where}.quantum") if "quantum" in body
               else default_quantum(rate))
    if "queue" not in body:
        raise ConfigError(f"{where}.queue", "is missing; expected e.g. { discipline = \"pfifo\", limit = 20 }")
    queue = parse_queue(body["queue"], f"{where}.queue", link_rate)
    return RouterClass(name, rate, ceil, priority, quantum, queue)


def _check_guarantees_fit(classes: tuple[RouterClass, ...], parent_rate: int, where: str) -> None:
    total = sum(c.rate_bps for c in classes)
    if total > parent_rate:
        raise ConfigError(where, f"the class rates add up to {total} bit/s, above the router rate "
                                 f"{parent_rate} bit/s; HTB could not guarantee them")


# --- classification ----------------------------------------------------------------------

def _parse_filters(value: object, names: list[str], where: str) -> tuple[RouterFilter, ...]:
    if not isinstance(value, list):
        raise ConfigError(where, "is not an array of tables; write each filter as [[router.filters]]")
    return tuple(_parse_filter(f, names, f"{where}[{i}]") for i, f in enumerate(value))


def _parse_filter(body: object, names: list[str], where: str) -> RouterFilter:
    expect_table(body, where)
    reject_unknown(body, where, {"class", "dscp", "protocol", "sport", "dport", "src", "dst"})
    if "class" not in body:
        raise ConfigError(f"{where}.class", f"is missing; expected the target class, one of {', '.join(names)}")
    target = _class_reference(body["class"], names, f"{where}.class")
    matches = [k for k in ("dscp", "protocol", "sport", "dport", "src", "dst") if k in body]
    if not matches:
        raise ConfigError(where, "matches nothing; give at least one of dscp, protocol, sport, dport, src, dst")
    protocol = _protocol(body["protocol"], f"{where}.protocol") if "protocol" in body else None
    for port in ("sport", "dport"):
        if port in body and protocol not in PORT_PROTOCOLS:
            raise ConfigError(f"{where}.{port}", "needs protocol = \"tcp\", \"udp\" or \"sctp\" in the same filter")
    return RouterFilter(
        target=target,
        dscp=parse_dscp(body["dscp"], f"{where}.dscp") if "dscp" in body else None,
        protocol=protocol,
        sport=int_in_range(body["sport"], 0, 65535, f"{where}.sport", "a port") if "sport" in body else None,
        dport=int_in_range(body["dport"], 0, 65535, f"{where}.dport", "a port") if "dport" in body else None,
        src=_prefix(body["src"], f"{where}.src") if "src" in body else None,
        dst=_prefix(body["dst"], f"{where}.dst") if "dst" in body else None,
    )


def _protocol(value: object, where: str) -> int:
    if isinstance(value, str):
        if value not in PROTOCOL_NUMBERS:
            raise ConfigError(where, f"unknown protocol {value!r}; expected one of "
                                     f"{', '.join(PROTOCOL_NUMBERS)} or an IP protocol number")
        return PROTOCOL_NUMBERS[value]
    return int_in_range(value, 0, 255, where, "an IP protocol number")


def _prefix(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(where, f"{value!r} is not an IPv4 address or prefix such as \"198.18.1.0/24\"")
    try:
        return str(ipaddress.IPv4Network(value, strict=True))
    except ValueError as e:
        raise ConfigError(where, f"\"{value}\" is not an IPv4 address or prefix: {e}") from None


def _class_reference(value: object, names: list[str], where: str) -> str:
    if value not in names:
        raise ConfigError(where, f"{value!r} names no class; defined classes are {', '.join(names)}")
    return str(value)


# --- small checks ------------------------------------------------------------------------

def _parse_engine(value: object, where: str) -> str:
    if not isinstance(value, str) or value not in ENGINES:
        raise ConfigError(where, f"{value!r} is not a router engine; expected "
                                 + " or ".join(f"\"{name}\" ({e.summary})" for name, e in ENGINES.items()))
    return value
