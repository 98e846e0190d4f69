"""Workload profiles (scenarios/profiles/workloads.toml) and the generator command lines.

One job: turn a workload name into validated data (an HTTP page, a bulk transfer or a
CBR stream) and into the argv of the C generator that produces it.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from .errors import ConfigError
from .profiles import PROFILE_DIR, ProfileSet
from .units import format_rate_bps, parse_rate_bps, parse_size_bytes

KINDS = ("http", "bulk", "cbr")
_KEYS = {"http": {"kind", "main", "inline"}, "bulk": {"kind", "count", "length"},
         "cbr": {"kind", "size", "rate"}}
UDP_MIN_PAYLOAD = 20  # sequence number + send time (workloads/README.md)


@dataclass(frozen=True)
class HttpPage:
    label: str
    sizes: tuple[int, ...]  # main object first

    def objects_arg(self) -> str:
        return ",".join(str(s) for s in self.sizes)

    def urls(self) -> list[str]:
        return [object_url(i, size) for i, size in enumerate(self.sizes)]


@dataclass(frozen=True)
class BulkTransfer:
    label: str
    count: int
    length: int

    @property
    def total_bytes(self) -> int:
        return self.count * self.length


@dataclass(frozen=True)
class CbrStream:
    label: str
    size: int       # UDP payload bytes
    rate_bps: int   # payload bits per second

    @property
    def interval_us(self) -> float:
        return self.size * 8 * 1e6 / self.rate_bps


Workload = HttpPage | BulkTransfer | CbrStream


def object_url(index: int, size: int) -> str:
    """The URL squall-http requests for object `index` of `size` bytes."""
    return f"/obj/{index}-{size}"


def load(name: str, directory: Path = PROFILE_DIR) -> Workload:
    return _from_profile(ProfileSet.load("workloads", directory), name)


def all_workloads(directory: Path = PROFILE_DIR) -> dict[str, Workload]:
    profiles = ProfileSet.load("workloads", directory)
    return {name: _from_profile(profiles, name) for name in profiles.names()}


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
    return CbrStream(name, size, rate)


def http_client_argv(bin_dir: Path, page: HttpPage, server: str, *, http: str = "1.0", parallel: int = 4,
                     persistent: int = 1, pipeline: bool = False, extra: list[str] | None = None) -> list[str]:
    argv = [str(bin_dir / "squall-http"), "--connect", server, "--objects", page.objects_arg(), "--http", http]
    if http == "1.0":
        argv += ["--parallel", str(parallel)]
    else:
        argv += ["--persistent", str(persistent)] + (["--pipeline"] if pipeline else [])
    return argv + (extra or [])


def bulk_sender_argv(bin_dir: Path, bulk: BulkTransfer, receiver: str, extra: list[str] | None = None) -> list[str]:
    return [str(bin_dir / "squall-bulk"), "send", "--connect", receiver, "--count", str(bulk.count),
            "--length", str(bulk.length)] + (extra or [])


def cbr_sender_argv(bin_dir: Path, cbr: CbrStream, receiver: str, *, duration: str | None = None,
                    count: int | None = None, extra: list[str] | None = None) -> list[str]:
    if duration is None and count is None:
        raise ValueError("a CBR sender needs a duration or a count")
    argv = [str(bin_dir / "squall-udp"), "send", "--connect", receiver, "--size", str(cbr.size),
            "--rate", format_rate_bps(cbr.rate_bps)]
    if duration is not None:
        argv += ["--duration", duration]
    if count is not None:
        argv += ["--count", str(count)]
    return argv + (extra or [])
