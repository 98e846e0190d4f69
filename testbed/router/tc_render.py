"""Rendering a RouterConfig as one iproute2 `tc -batch` text.

A pure function, so the exact commands are unit-tested and stored with each run
(`router.tc`). Layout (handles are fixed so the queue monitor's output is predictable):

    1:      root HTB qdisc on the device, default = the default class
    1:1     root class, rate = ceil = the router rate
    1:10, 1:20, ...   one leaf class per configured class, in file order
    10:, 20:, ...     the leaf qdisc of each (its discipline's tc_options)
    u32 filters on 1:, one per configured filter, in file order (prio 1, 2, ...)
"""
from __future__ import annotations

from testbed.router.plan import Queue, RouterClass, RouterConfig, RouterFilter

TC_ENGINE = "tc"         # the tc engine's name (tc_engine.py), the only plans rendered here

ROOT_HANDLE = "1:"
ROOT_CLASS = "1:1"


def leaf_minor(index: int) -> int:
    """Minor number of the index-th class (0-based): 10, 20, ... (hexadecimal in tc)."""
    return 0x10 * (index + 1)


def leaf_classid(index: int) -> str:
    return f"1:{leaf_minor(index):x}"


def leaf_qdisc_handle(index: int) -> str:
    return f"{leaf_minor(index):x}:"


def render_tc_batch(config: RouterConfig, dev: str) -> str:
    """The whole router as `tc -batch` lines (without the leading `tc`), newline-terminated."""
    if config.engine != TC_ENGINE:
        raise ValueError(f"router engine is {config.engine!r}; only engine \"{TC_ENGINE}\" is applied with tc")
    index_of = {c.name: i for i, c in enumerate(config.classes)}
    lines = [
        f"qdisc add dev {dev} root handle {ROOT_HANDLE} htb default {leaf_minor(index_of[config.default_class]):x}",
        f"class add dev {dev} parent {ROOT_HANDLE} classid {ROOT_CLASS} htb"
        f" rate {config.rate_bps}bit ceil {config.rate_bps}bit quantum {_root_quantum(config)}",
    ]
    for i, cls in enumerate(config.classes):
        lines.append(_class_line(dev, i, cls))
        lines.append(_leaf_line(dev, i, cls.queue))
    for prio, flt in enumerate(config.filters, start=1):
        lines.append(_filter_line(dev, prio, flt, leaf_classid(index_of[flt.target])))
    return "\n".join(lines) + "\n"


def _root_quantum(config: RouterConfig) -> int:
    return max(c.quantum_bytes for c in config.classes)


def _class_line(dev: str, index: int, cls: RouterClass) -> str:
    return (f"class add dev {dev} parent {ROOT_CLASS} classid {leaf_classid(index)} htb"
            f" rate {cls.rate_bps}bit ceil {cls.ceil_bps}bit prio {cls.priority} quantum {cls.quantum_bytes}")


def _leaf_line(dev: str, index: int, queue: Queue) -> str:
    head = f"qdisc add dev {dev} parent {leaf_classid(index)} handle {leaf_qdisc_handle(index)}"
    return f"{head} {queue.tc_options()}"


def _filter_line(dev: str, prio: int, flt: RouterFilter, flowid: str) -> str:
    return (f"filter add dev {dev} parent {ROOT_HANDLE} protocol ip prio {prio} u32"
            f" {' '.join(_u32_matches(flt))} flowid {flowid}")


_U32 = {   # a filter's criterion -> its u32 selector; ports at the offset of an IPv4 header without options
    "dscp": lambda v: f"match ip dsfield 0x{v << 2:02x} 0xfc",
    "protocol": lambda v: f"match ip protocol {v} 0xff",
    "src": lambda v: f"match ip src {v}",
    "dst": lambda v: f"match ip dst {v}",
    "sport": lambda v: f"match ip sport {v} 0xffff",
    "dport": lambda v: f"match ip dport {v} 0xffff",
}


def _u32_matches(flt: RouterFilter) -> list[str]:
    return [_U32[name](value) for name, value in flt.criteria()]
