"""The `[router]` section of a scenario: the last-hop router in front of the link.

One job: turn the parsed TOML table into typed, validated, frozen data. Nothing here
touches the system; `router_tc` renders the data as a tc batch and `router` applies it.
The format is documented with examples in docs/router.md.
"""
from __future__ import annotations

import dataclasses
import ipaddress
import math
import re
from dataclasses import dataclass
from typing import Literal

from testbed.errors import ConfigError
from testbed.scenario.units import parse_rate_bps, parse_size_bytes

Engine = Literal["tc", "emulator"]
ENGINES: tuple[str, ...] = ("tc", "emulator")
DISCIPLINES: tuple[str, ...] = ("pfifo", "bfifo", "red")

# HTB warns when the quantum it computes (rate / r2q) is below 1000 bytes or above 200000
# bytes; an explicit quantum avoids that. One full-size packet per round is also what keeps
# DRR sharing between classes fair.
QUANTUM_FLOOR_BYTES = 1500
QUANTUM_CEILING_BYTES = 200_000
HTB_R2Q = 10
HTB_MAX_PRIORITY = 7
MAX_CLASSES = 64
RED_DEFAULT_PROBABILITY = 0.1  # max_p of the IIP report, table 1
RED_DEFAULT_W_Q = 0.002        # w_q of the IIP report, table 1
RED_MAX_WLOG = 31
MAX_DEVICE_QUEUE = 65536       # packets (the emulator's limit, emulator/CONFIG.md)

PROTOCOL_NUMBERS = {"icmp": 1, "tcp": 6, "udp": 17, "sctp": 132}
PORT_PROTOCOLS = (6, 17, 132)

_CLASS_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,31}$")
_DSCP_NAMES: dict[str, int] = {"BE": 0, "default": 0, "EF": 46, "VA": 44}
_DSCP_NAMES.update({f"CS{i}": 8 * i for i in range(8)})
_DSCP_NAMES.update({f"AF{c}{d}": 8 * c + 2 * d for c in range(1, 5) for d in range(1, 4)})


@dataclass(frozen=True)
class FifoQueue:
    """Tail drop: `pfifo` limit in packets, `bfifo` limit in bytes."""
    discipline: Literal["pfifo", "bfifo"]
    limit: int


@dataclass(frozen=True)
class RedQueue:
    """Random Early Detection; sizes in bytes, burst in packets of avpkt bytes.

    The average-queue weight is w_q = 2**-wlog: Linux keeps only powers of two, and tc
    derives wlog from burst (`red_wlog`), so burst and wlog always agree here.
    """
    limit: int
    min: int
    max: int
    avpkt: int
    burst: int
    wlog: int
    probability: float
    bandwidth_bps: int
    ecn: bool
    discipline: Literal["red"] = "red"

    @property
    def w_q(self) -> float:
        return 2.0 ** -self.wlog


Queue = FifoQueue | RedQueue


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


@dataclass(frozen=True)
class RouterConfig:
    engine: Engine
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


def parse_router(section: dict, where: str, link_rate_bps: int) -> RouterConfig:
    """Validates the `[router]` table; `where` is like `scenarios/x.toml: router`.

    `link_rate_bps` is the downlink rate: the router's default total rate and the
    default RED `bandwidth` (the rate at which the queue drains).
    """
    _expect_table(section, where)
    _reject_unknown(section, where, {"engine", "rate", "queue", "classes", "default", "filters",
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


def _device_queue(section: dict, engine: Engine, where: str) -> int:
    """Packets between the router's queues and the link's send buffer (docs/router.md)."""
    if "device_queue" not in section:
        return 0
    packets = _int_in_range(section["device_queue"], 0, MAX_DEVICE_QUEUE, where,
                            "a number of packets (10: the 2.4 tun read queue of Seawind)")
    if packets and engine != "emulator":
        raise ConfigError(where, "is the emulator engine's (engine = \"emulator\"); with engine = \"tc\" "
                                 "the device queue is the router-side TUN's own ring, which on current "
                                 "kernels drops at a full ring instead of holding the router's queue "
                                 "(docs/router.md)")
    return packets


def _parse_single_class(section: dict, where: str, engine: Engine, rate: int, link_rate: int) -> RouterConfig:
    for key in ("default", "filters"):
        if key in section:
            raise ConfigError(f"{where}.{key}", "is only meaningful with `classes` (DiffServ); "
                                                "without classes every packet goes to the one queue")
    queue = _parse_queue(section["queue"], f"{where}.queue", link_rate)
    only = RouterClass(SINGLE_CLASS_NAME, rate, rate, 0, default_quantum(rate), queue)
    return RouterConfig(engine, rate, False, (only,), SINGLE_CLASS_NAME, ())


def _parse_diffserv(section: dict, where: str, engine: Engine, rate: int, link_rate: int) -> RouterConfig:
    table = section["classes"]
    _expect_table(table, f"{where}.classes")
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
    _expect_table(body, where)
    _reject_unknown(body, where, {"rate", "ceil", "priority", "quantum", "queue"})
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
    priority = _int_in_range(body.get("priority", 0), 0, HTB_MAX_PRIORITY, f"{where}.priority",
                             "an HTB priority (0 is served first)")
    quantum = (_positive_size(body["quantum"], f"{where}.quantum") if "quantum" in body
               else default_quantum(rate))
    if "queue" not in body:
        raise ConfigError(f"{where}.queue", "is missing; expected e.g. { discipline = \"pfifo\", limit = 20 }")
    queue = _parse_queue(body["queue"], f"{where}.queue", link_rate)
    return RouterClass(name, rate, ceil, priority, quantum, queue)


def _check_guarantees_fit(classes: tuple[RouterClass, ...], parent_rate: int, where: str) -> None:
    total = sum(c.rate_bps for c in classes)
    if total > parent_rate:
        raise ConfigError(where, f"the class rates add up to {total} bit/s, above the router rate "
                                 f"{parent_rate} bit/s; HTB could not guarantee them")


def default_quantum(rate_bps: int) -> int:
    """HTB's own rate/r2q, kept within the range where the kernel does not warn."""
    return max(QUANTUM_FLOOR_BYTES, min(QUANTUM_CEILING_BYTES, rate_bps // 8 // HTB_R2Q))


# --- leaf queues -------------------------------------------------------------------------

def _parse_queue(body: object, where: str, link_rate: int) -> Queue:
    _expect_table(body, where)
    if "discipline" not in body:
        raise ConfigError(f"{where}.discipline", f"is missing; expected one of {', '.join(DISCIPLINES)}")
    discipline = body["discipline"]
    if discipline == "pfifo":
        _reject_unknown(body, where, {"discipline", "limit"})
        return FifoQueue("pfifo", _positive_int(_required(body, "limit", where), f"{where}.limit", "packets"))
    if discipline == "bfifo":
        _reject_unknown(body, where, {"discipline", "limit"})
        return FifoQueue("bfifo", _positive_size(_required(body, "limit", where), f"{where}.limit"))
    if discipline == "red":
        return _parse_red(body, where, link_rate)
    raise ConfigError(f"{where}.discipline", f"unknown discipline {discipline!r}; expected one of "
                                             f"{', '.join(DISCIPLINES)}")


def _parse_red(body: dict, where: str, link_rate: int) -> RedQueue:
    _reject_unknown(body, where, {"discipline", "limit", "min", "max", "avpkt", "burst", "w_q",
                                  "probability", "bandwidth", "ecn"})
    limit, low, high, avpkt = (_positive_size(_required(body, k, where), f"{where}.{k}")
                               for k in ("limit", "min", "max", "avpkt"))
    if low >= high:
        raise ConfigError(f"{where}.min", f"{low} B is not below max {high} B; RED needs min < max")
    if high > limit:
        raise ConfigError(f"{where}.max", f"{high} B is above limit {limit} B; the queue could never "
                                          "reach max")
    burst, wlog = _red_weight(body, where, low, avpkt)
    probability = _probability(body.get("probability", RED_DEFAULT_PROBABILITY), f"{where}.probability")
    bandwidth = positive_rate(body["bandwidth"], f"{where}.bandwidth") if "bandwidth" in body else link_rate
    ecn = body.get("ecn", False)
    if not isinstance(ecn, bool):
        raise ConfigError(f"{where}.ecn", f"{ecn!r} is not true or false")
    return RedQueue(limit, low, high, avpkt, burst, wlog, probability, bandwidth, ecn)


def _red_weight(body: dict, where: str, low: int, avpkt: int) -> tuple[int, int]:
    """(burst, wlog) from `burst` or `w_q` (default w_q 0.002), as tc will set them."""
    if "burst" in body and "w_q" in body:
        raise ConfigError(where, "has both `burst` and `w_q`; tc derives w_q from burst, give one of them")
    if "burst" in body:
        burst = _positive_int(body["burst"], f"{where}.burst", "packets")
        if burst < low / avpkt:
            raise ConfigError(f"{where}.burst", f"{burst} packets is below min/avpkt = {low / avpkt:g}; "
                                                "the average queue could never reach min")
        wlog = red_wlog(low, burst, avpkt)
        if wlog is None:
            raise ConfigError(f"{where}.burst", f"{burst} packets needs w_q below 2^-{RED_MAX_WLOG}, "
                                                "more than Linux RED can represent")
        return burst, wlog
    w_q = body.get("w_q", RED_DEFAULT_W_Q)
    if isinstance(w_q, bool) or not isinstance(w_q, (int, float)) or not 0 < w_q <= 0.5:
        raise ConfigError(f"{where}.w_q", f"{w_q!r} is not a weight in (0, 0.5]; expected e.g. 0.002")
    wlog = min(RED_MAX_WLOG, max(1, round(-math.log2(w_q))))
    return burst_for_wlog(low, avpkt, wlog), wlog


def red_wlog(low: int, burst: int, avpkt: int) -> int | None:
    """The log2 of 1/w_q tc chooses for `burst`: the largest weight w = 2^-wlog with which
    `burst` back-to-back packets arriving at an empty queue leave the average below min
    (burst + 1 - min/avpkt <= (1 - (1 - w)^burst) / w, the RED paper's rule)."""
    target = burst + 1 - low / avpkt
    for wlog in range(1, RED_MAX_WLOG + 1):
        w = 2.0 ** -wlog
        if target <= (1 - (1 - w) ** burst) / w:
            return wlog
    return None


def burst_for_wlog(low: int, avpkt: int, wlog: int) -> int:
    """The smallest burst for which tc sets at least this wlog (so w_q = 2^-wlog or just below)."""
    def reaches(burst: int) -> bool:  # monotonic: a larger burst never gives a larger w_q
        return (red_wlog(low, burst, avpkt) or RED_MAX_WLOG + 1) >= wlog

    low_burst = max(1, math.ceil(low / avpkt))
    high_burst = low_burst
    while not reaches(high_burst):
        low_burst, high_burst = high_burst + 1, high_burst * 2
    while low_burst < high_burst:
        middle = (low_burst + high_burst) // 2
        if reaches(middle):
            high_burst = middle
        else:
            low_burst = middle + 1
    return high_burst


def _probability(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(where, f"{value!r} is not a number; expected a probability in (0, 1] such as 0.1")
    if not 0 < value <= 1:
        raise ConfigError(where, f"{value} is outside (0, 1]")
    return float(value)


# --- classification ----------------------------------------------------------------------

def _parse_filters(value: object, names: list[str], where: str) -> tuple[RouterFilter, ...]:
    if not isinstance(value, list):
        raise ConfigError(where, "is not an array of tables; write each filter as [[router.filters]]")
    return tuple(_parse_filter(f, names, f"{where}[{i}]") for i, f in enumerate(value))


def _parse_filter(body: object, names: list[str], where: str) -> RouterFilter:
    _expect_table(body, where)
    _reject_unknown(body, where, {"class", "dscp", "protocol", "sport", "dport", "src", "dst"})
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
        sport=_int_in_range(body["sport"], 0, 65535, f"{where}.sport", "a port") if "sport" in body else None,
        dport=_int_in_range(body["dport"], 0, 65535, f"{where}.dport", "a port") if "dport" in body else None,
        src=_prefix(body["src"], f"{where}.src") if "src" in body else None,
        dst=_prefix(body["dst"], f"{where}.dst") if "dst" in body else None,
    )


def parse_dscp(value: object, where: str) -> int:
    if isinstance(value, str):
        if value not in _DSCP_NAMES:
            raise ConfigError(where, f"unknown DSCP name {value!r}; expected EF, BE, AFxy, CSx or a number 0-63")
        return _DSCP_NAMES[value]
    return _int_in_range(value, 0, 63, where, "a DSCP value")


def _protocol(value: object, where: str) -> int:
    if isinstance(value, str):
        if value not in PROTOCOL_NUMBERS:
            raise ConfigError(where, f"unknown protocol {value!r}; expected one of "
                                     f"{', '.join(PROTOCOL_NUMBERS)} or an IP protocol number")
        return PROTOCOL_NUMBERS[value]
    return _int_in_range(value, 0, 255, where, "an IP protocol number")


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

def _parse_engine(value: object, where: str) -> Engine:
    if value not in ENGINES:
        raise ConfigError(where, f"{value!r} is not a router engine; expected \"tc\" (Linux HTB on the "
                                 "router-side TUN) or \"emulator\" (the SP's router stage)")
    return value  # type: ignore[return-value]


def _expect_table(value: object, where: str) -> None:
    if not isinstance(value, dict):
        raise ConfigError(where, f"expected a table, found {type(value).__name__} {value!r}")


def _reject_unknown(table: dict, where: str, known: set[str]) -> None:
    for key in table:
        if key not in known:
            raise ConfigError(f"{where}.{key}", f"unknown key; expected one of {', '.join(sorted(known))}")


def _required(table: dict, key: str, where: str) -> object:
    if key not in table:
        raise ConfigError(f"{where}.{key}", "is missing")
    return table[key]


def positive_rate(value: object, where: str) -> int:
    """A rate with a unit, above zero (integer bit/s)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value <= 0:
        raise ConfigError(where, f"{value} is not a positive rate; expected e.g. \"64kbit\"")
    if isinstance(value, str) and value.strip().startswith("-"):
        raise ConfigError(where, f"\"{value}\" is negative; expected a positive rate such as \"64kbit\"")
    rate = parse_rate_bps(value, where)
    if rate <= 0:
        raise ConfigError(where, f"\"{value}\" is not a positive rate; expected e.g. \"64kbit\"")
    return rate


def _positive_size(value: object, where: str) -> int:
    size = parse_size_bytes(value, where)
    if size <= 0:
        raise ConfigError(where, f"\"{value}\" is not a positive size; expected e.g. \"1500B\"")
    return size


def _positive_int(value: object, where: str, unit: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(where, f"{value!r} is not a positive whole number of {unit}")
    return value


def _int_in_range(value: object, low: int, high: int, where: str, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ConfigError(where, f"{value!r} is not {what}; expected a whole number {low}-{high}")
    return value
