"""Workload profiles (scenarios/profiles/workloads.toml).

One job: turn a workload name into validated data (an HTTP page, a bulk transfer or a
CBR stream). The generators' command lines are the flows' (testbed/scenario/flows/).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from testbed.errors import ConfigError
from testbed.paths import PROFILE_DIR
from testbed.profiles import ProfileSet
from testbed.units import parse_rate_bps, parse_size_bytes

KINDS = ("http", "bulk", "cbr")
_KEYS = {"http": {"kind", "main", "inline"}, "bulk": {"kind", "count", "length"},
         "cbr": {"kind", "size", "rate", "rate_counts"}}
UDP_MIN_PAYLOAD = 20  # sequence number + send time (workloads/README.md)
UDP_IPV4_OVERHEAD = 28  # IPv4 header without options (20 B) + UDP header (8 B) per datagram
RATE_COUNTS = ("payload", "ip")


@dataclass(frozen=True)
class HttpPage:
    label: str
    sizes: tuple[int, ...]  # main object first


@dataclass(frozen=True)
class BulkTransfer:
    label: str
    count: int
    length: int


@dataclass(frozen=True)
class CbrStream:
    """`rate_bps` is always the payload rate (squall-udp's --rate); `rate_counts` says what
    the profile's rate counted: "payload", or "ip" (whole IPv4 datagrams, then converted)."""
    label: str
    size: int       # UDP payload bytes
    rate_bps: int   # payload bits per second
    rate_counts: str = "payload"

    @property
    def ip_rate_bps(self) -> float:
        """The rate counted at IP level: payload + 28 B of IPv4 and UDP headers per datagram."""
        return self.rate_bps * (self.size + UDP_IPV4_OVERHEAD) / self.size

    @property
    def interval_us(self) -> float:
        """The time between two datagrams' sends (squall-udp paces by it)."""
        return self.size * 8 * 1_000_000 / self.rate_bps


Workload = HttpPage | BulkTransfer | CbrStream


def object_url(index: int, size: int) -> str:
    """The URL squall-http requests for object `index` of `size` bytes."""
    return f"/obj/{index}-{size}"


def load(name: str, directory: Path = PROFILE_DIR) -> Workload:
    return _from_profile(ProfileSet.load("workloads", directory), name)


def _from_profile(profiles: ProfileSet, name: str) -> Workload:
    where = f"{profiles.path}: {name}"
    return from_table(name, profiles.resolve(name, where), where)


def from_table(name: str, table: Mapping[str, Any], where: str) -> Workload:
    kind = table.get("kind")
    if kind not in KINDS:
        raise ConfigError(f"{where}.kind", f"{kind!r} is not a workload kind; expected one of {', '.join(KINDS)}")
    unknown = sorted(set(table) - _KEYS[kind])
    if unknown:
        raise ConfigError(f"{where}.{unknown[0]}", f"unknown key for a {kind} workload; "
                          f"expected {', '.join(sorted(_KEYS[kind]))}")
    if kind == "http":
        return _http(name, table, where)
    if kind == "bulk":
        return _bulk(name, table, where)
    return _cbr(name, table, where)


def _positive_size(value: object, where: str) -> int:
    size = parse_size_bytes(value, where)
    if size <= 0:
        raise ConfigError(where, f"{value!r} must be a positive size")
    return size


def _http(name: str, table: Mapping[str, Any], where: str) -> HttpPage:
    main = _positive_size(table.get("main"), f"{where}.main")
    inline = table.get("inline", [])
    if not isinstance(inline, list):
        raise ConfigError(f"{where}.inline", "expected a list of sizes such as [\"2096B\", \"2096B\"]")
    sizes = [main] + [_positive_size(v, f"{where}.inline[{i}]") for i, v in enumerate(inline)]
    return HttpPage(name, tuple(sizes))


def _bulk(name: str, table: Mapping[str, Any], where: str) -> BulkTransfer:
    count = table.get("count")
    if isinstance(count, bool) or not isinstance(count, int) or count <= 0:
        raise ConfigError(f"{where}.count", f"{count!r} is not a positive number of buffers")
    return BulkTransfer(name, count, _positive_size(table.get("length"), f"{where}.length"))


def _cbr(name: str, table: Mapping[str, Any], where: str) -> CbrStream:
    size = _positive_size(table.get("size"), f"{where}.size")
    if not UDP_MIN_PAYLOAD <= size <= 65507:
        raise ConfigError(f"{where}.size", f"{size} B: a CBR payload must be {UDP_MIN_PAYLOAD} to 65507 B "
                          "(it carries a sequence number and the send time)")
    rate = parse_rate_bps(table.get("rate"), f"{where}.rate")
    if rate <= 0:
        raise ConfigError(f"{where}.rate", "must be a positive rate")
    counts = table.get("rate_counts", "payload")
    if counts not in RATE_COUNTS:
        raise ConfigError(f"{where}.rate_counts", f"{counts!r} is not \"payload\" (the rate counts UDP payload "
                                                  "bytes) or \"ip\" (it counts whole IPv4 datagrams)")
    if counts == "ip":
        # squall-udp takes the payload rate: the same datagrams per second, each 28 B shorter;
        # rounded to a whole bit/s (32 kbit/s of 160 B datagrams: exactly 26400 bit/s of 132 B)
        rate = round(rate * size / (size + UDP_IPV4_OVERHEAD))
    return CbrStream(name, size, rate, counts)
