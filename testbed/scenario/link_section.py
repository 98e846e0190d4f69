"""The emulated link of a scenario: typed configuration, parsed from TOML tables.

A link section (or a link profile) has keys that apply to both directions, and
`down` / `up` tables that override them per direction; `profile` / `base` name a
profile to start from, `channel` a channel profile. Here each value gets its type and
unit (the key path in the error); the rules about the values (ranges, orders, a schedule's
shape) are the emulator's alone: scenario loading renders the link and asks
`squall-emulator --check` (testbed/scenario/link_check.py).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from testbed.errors import ConfigError
from testbed.scenario.capacity_trace import CapacityTrace, parse_capacity
from testbed.units import parse_rate_bps, parse_size_bytes, parse_time_us

DIRECTIONS = ("down", "up")
STATES = ("good", "bad")


@dataclass(frozen=True)
class Distribution:
    """A state-length distribution, times in µs (see emulator/CONFIG.md)."""
    kind: str                   # fixed | uniform | exponential
    a_us: int                   # fixed value, uniform low bound, exponential mean
    b_us: int | None = None     # uniform high bound
    min_us: int | None = None   # exponential truncation
    max_us: int | None = None

    def render(self) -> str:
        if self.kind == "fixed":
            return f"fixed({self.a_us}us)"
        if self.kind == "uniform":
            return f"uniform({self.a_us}us, {self.b_us}us)"
        if self.min_us is None:
            return f"exponential({self.a_us}us)"
        return f"exponential({self.a_us}us, min={self.min_us}us, max={self.max_us}us)"


@dataclass(frozen=True)
class ChannelConfig:
    initial: str
    good: Distribution | None
    bad: Distribution | None
    trace: str | None = None    # path of a (state, duration) trace; replaces good/bad
    start: str = "fresh"        # "running": t = 0 at a random point of a long run (docs/scenarios.md)
    # "per_frame" (Seawind: the next draw of the direction's stream) or "by_time" (a function of
    # the attempt's start time on a grid of error_grid_us; emulator/LINK_MODEL.md "Random numbers")
    error_draws: str = "per_frame"
    error_grid_us: int = 1000


@dataclass(frozen=True)
class NetemConfig:
    """A direction's netem stage in netem's own words (docs/netem.md): each value is the text
    after the netem keyword, e.g. loss = "gemodel 1% 10% 70% 0.1%"; the emulator checks it."""
    loss: str | None = None
    delay: str | None = None
    distribution: str | None = None
    reorder: str | None = None
    gap: int | None = None
    duplicate: str | None = None
    corrupt: str | None = None

    def lines(self) -> list[str]:
        """The direction's netem keys of the emulator's configuration file."""
        return [f"netem_{k} = {v}" for k, v in vars(self).items() if v is not None]


@dataclass(frozen=True)
class Outages:
    """An outage process (emulator/LINK_MODEL.md "Outages"): from t = 0, a time without an outage
    drawn from `every`, then an outage drawn from `length`, and so on."""
    every: Distribution
    length: Distribution


@dataclass(frozen=True)
class RateStep:
    at_us: int
    rate_bps: int | None        # None = unlimited


@dataclass(frozen=True)
class DirectionConfig:
    bandwidth: tuple[RateStep, ...]
    delay_us: int
    mtu: int
    send_buffer: int
    recv_buffer: int
    overhead: int
    error_good: float
    error_bad: float
    arq_retransmissions: int
    arq_delay_us: int
    in_order: bool
    # A recorded capacity trace (`bandwidth = { mahimahi = "FILE" }`); `bandwidth` then holds the
    # rates of its seconds (for `squall show` and estimates), and the emulator replays the trace.
    capacity: CapacityTrace | None = None
    outages: Outages | None = None      # this direction's own, instead of the link's
    netem: NetemConfig | None = None

    @property
    def rate_bps(self) -> int | None:
        """The constant rate, or None if unlimited; ValueError for a schedule or a trace."""
        if self.capacity is not None:
            raise ValueError("the bandwidth is a recorded capacity trace, not a constant rate")
        if len(self.bandwidth) != 1:
            raise ValueError("the bandwidth is a schedule, not a constant rate")
        return self.bandwidth[0].rate_bps


@dataclass(frozen=True)
class LinkConfig:
    name: str
    channel: ChannelConfig
    down: DirectionConfig
    up: DirectionConfig
    outages: Outages | None = None      # both directions at once, unless one has its own

    def direction(self, name: str) -> DirectionConfig:
        return self.down if name == "down" else self.up

    def inapplicable_keys(self) -> tuple[str, ...]:
        """Settings that change nothing in this link (expanded.json `inapplicable`, hidden in the
        report's parameter tables): the channel of a link without errors in either state."""
        if all(d.error_good == d.error_bad == 0 for d in (self.down, self.up)):
            return ("channel",)
        return ()


_DIRECTION_KEYS = {"bandwidth", "delay", "mtu", "send_buffer", "recv_buffer", "overhead",
                   "error", "arq", "in_order", "netem"}
_NETEM_KEYS = {"loss", "delay", "distribution", "reorder", "gap", "duplicate", "corrupt"}
ERROR_DRAWS = ("per_frame", "by_time")
_LINK_KEYS = _DIRECTION_KEYS | {"profile", "base", "description", "channel", "down", "up", "outages"}
_OWN_KEYS = _DIRECTION_KEYS | {"outages"}      # [link.down] / [link.up]
_CHANNEL_KEYS = {"initial", "start", "good", "bad", "trace", "description", "profile", "error_draws",
                 "error_grid"}
CHANNEL_STARTS = ("fresh", "running")
_DIST = re.compile(r"^\s*(fixed|uniform|exponential)\s*\((.*)\)\s*$")


def parse_distribution(text: object, where: str) -> Distribution:
    if not isinstance(text, str) or not (m := _DIST.match(text)):
        raise ConfigError(where, f"{text!r} is not a distribution; expected \"fixed(2s)\", "
                          "\"uniform(1.4s, 3s)\", \"exponential(6s)\" or \"exponential(6s, min=0s, max=9s)\"")
    kind, args = m.group(1), [a.strip() for a in m.group(2).split(",")]
    if kind == "fixed" and len(args) == 1:
        return Distribution("fixed", parse_time_us(args[0], where))
    if kind == "uniform" and len(args) == 2:
        a, b = (parse_time_us(x, where) for x in args)
        return Distribution("uniform", a, b)
    if kind == "exponential" and len(args) == 1:
        return Distribution("exponential", parse_time_us(args[0], where))
    if kind == "exponential" and len(args) == 3:
        return _truncated_exponential(args, where)
    raise ConfigError(where, f"\"{text}\": wrong number of arguments for {kind}")


def _truncated_exponential(args: list[str], where: str) -> Distribution:
    mean = parse_time_us(args[0], where)
    bounds = dict(a.split("=", 1) for a in args[1:] if "=" in a)
    if set(bounds) != {"min", "max"}:
        raise ConfigError(where, "a truncated exponential needs exactly min=... and max=...")
    lo, hi = (parse_time_us(bounds[k].strip(), where) for k in ("min", "max"))
    return Distribution("exponential", mean, min_us=lo, max_us=hi)


def parse_channel(table: Mapping[str, Any], where: str, base: Path | None = None) -> ChannelConfig:
    """`base`: the directory a relative trace path is relative to (the scenario file's)."""
    _reject_unknown(table, _CHANNEL_KEYS, where)
    initial = table.get("initial", "good")
    if initial not in STATES:
        raise ConfigError(f"{where}.initial", f"{initial!r} is not a state; expected \"good\" or \"bad\"")
    start = table.get("start", "fresh")
    if start not in CHANNEL_STARTS:
        raise ConfigError(f"{where}.start", f"{start!r}: expected \"fresh\" (t = 0 begins a period of the "
                          "initial state) or \"running\" (t = 0 at a random point of a long run)")
    draws = _error_draws(table, where)
    if "trace" in table:
        trace = table["trace"]
        if not isinstance(trace, str) or not trace or "\0" in trace:
            raise ConfigError(f"{where}.trace", f"{trace!r}: expected the path of a trace file")
        beside = sorted({"good", "bad", "initial", "start"} & set(table))
        if beside:
            raise ConfigError(f"{where}.{beside[0]}", "a trace replaces good, bad, initial and start (it starts "
                              "with its first line); give either trace or the distributions")
        # The one spelling of the path: what the emulator opens and names in its messages
        # (through `..` and symlinks), so a problem with the file is found under this key.
        return ChannelConfig(initial, None, None, os.path.realpath((base or Path()) / trace), **draws)
    for state in STATES:
        if state not in table:
            raise ConfigError(f"{where}.{state}", "missing: the length distribution of the state")
    return ChannelConfig(initial, parse_distribution(table["good"], f"{where}.good"),
                         parse_distribution(table["bad"], f"{where}.bad"), start=start, **draws)


def _error_draws(table: Mapping[str, Any], where: str) -> dict[str, Any]:
    draws = table.get("error_draws", "per_frame")
    if draws not in ERROR_DRAWS:
        raise ConfigError(f"{where}.error_draws", f"{draws!r}: expected \"per_frame\" (Seawind: each attempt "
                          "takes the next draw) or \"by_time\" (an attempt's fate is a function of its start time)")
    return {"error_draws": draws, "error_grid_us": parse_time_us(table.get("error_grid", "1ms"), f"{where}.error_grid")}


def parse_netem(value: object, where: str) -> NetemConfig:
    """netem = { loss = "...", delay = "...", ... }: typed here, checked by the emulator."""
    table = _table(value, where, _NETEM_KEYS)
    for key, v in table.items():
        if key == "gap":
            _count(v, f"{where}.gap")
        elif not isinstance(v, str) or not v.strip() or "\n" in v or "#" in v:
            raise ConfigError(f"{where}.{key}", f"{v!r}: expected netem's text for {key}, e.g. "
                              f"{_NETEM_EXAMPLES[key]!r} (docs/netem.md)")
    return NetemConfig(**{k: (v if k == "gap" else " ".join(v.split())) for k, v in table.items()})


_NETEM_EXAMPLES = {"loss": "gemodel 1% 10% 70% 0.1%", "delay": "100ms 10ms 25%", "distribution": "normal",
                   "reorder": "25% 50%", "duplicate": "1%", "corrupt": "0.1%"}


def parse_bandwidth(value: object, where: str) -> tuple[RateStep, ...]:
    """"64kbit", "unlimited", or a schedule [["0s", "64kbit"], ["10s", "0bit"], ...]."""
    if value == "unlimited":
        return (RateStep(0, None),)
    if isinstance(value, str):
        return (RateStep(0, parse_rate_bps(value, where)),)
    if not isinstance(value, list) or not value:
        raise ConfigError(where, "expected a rate (\"64kbit\"), \"unlimited\", or a schedule [[\"0s\", \"64kbit\"], ...]")
    return tuple(_rate_step(item, f"{where}[{i}]") for i, item in enumerate(value))


def _rate_step(item: object, where: str) -> RateStep:
    if not (isinstance(item, list) and len(item) == 2):
        raise ConfigError(where, "expected a [time, rate] pair such as [\"10s\", \"32kbit\"]")
    rate = None if item[1] == "unlimited" else parse_rate_bps(item[1], where)
    return RateStep(parse_time_us(item[0], where), rate)


def parse_direction(merged: Mapping[str, Any], where: str, base: Path | None = None) -> DirectionConfig:
    """merged: the both-directions keys overlaid with this direction's own; `base`: the directory a
    relative trace path is relative to (the scenario file's)."""
    for key in ("bandwidth", "delay", "mtu"):
        if key not in merged:
            raise ConfigError(f"{where}.{key}", "missing")
    error = _table(merged.get("error", {}), f"{where}.error", {"good", "bad"})
    arq = _table(merged.get("arq", {}), f"{where}.arq", {"retransmissions", "delay"})
    mtu = parse_size_bytes(merged["mtu"], f"{where}.mtu")
    capacity, bandwidth = None, None
    if isinstance(merged["bandwidth"], Mapping):
        capacity, per_second = parse_capacity(merged["bandwidth"], f"{where}.bandwidth", base)
        bandwidth = tuple(RateStep(k * 1_000_000, bps) for k, bps in enumerate(per_second))
    config = DirectionConfig(
        bandwidth=bandwidth or parse_bandwidth(merged["bandwidth"], f"{where}.bandwidth"),
        delay_us=parse_time_us(merged["delay"], f"{where}.delay"),
        mtu=mtu,
        send_buffer=parse_size_bytes(merged.get("send_buffer", "9600B"), f"{where}.send_buffer"),
        recv_buffer=parse_size_bytes(merged.get("recv_buffer", "9600B"), f"{where}.recv_buffer"),
        overhead=parse_size_bytes(merged.get("overhead", "0B"), f"{where}.overhead"),
        error_good=_probability(error.get("good", 0.0), f"{where}.error.good"),
        error_bad=_probability(error.get("bad", 0.0), f"{where}.error.bad"),
        arq_retransmissions=_count(arq.get("retransmissions", 0), f"{where}.arq.retransmissions"),
        arq_delay_us=parse_time_us(arq.get("delay", "0ms"), f"{where}.arq.delay"),
        in_order=_bool(merged.get("in_order", True), f"{where}.in_order"),
        capacity=capacity,
        outages=parse_outages(merged["outages"], f"{where}.outages") if "outages" in merged else None,
        netem=parse_netem(merged["netem"], f"{where}.netem") if "netem" in merged else None,
    )
    return config     # the rules about the values are the emulator's: testbed/scenario/link_check.py


def parse_link(table: Mapping[str, Any], where: str, name: str,
               channel: ChannelConfig, base: Path | None = None) -> LinkConfig:
    """table: a link section with profiles already merged in (see profiles.py); `base`: the
    directory relative trace paths are relative to."""
    _reject_unknown(table, _LINK_KEYS, where)
    both = {k: v for k, v in table.items() if k in _DIRECTION_KEYS}
    directions = {}
    for d in DIRECTIONS:
        own = table.get(d, {})
        if not isinstance(own, Mapping):
            raise ConfigError(f"{where}.{d}", "expected a table of per-direction keys")
        _reject_unknown(own, _OWN_KEYS, f"{where}.{d}")
        directions[d] = parse_direction({**both, **own}, f"{where}.{d}", base)
    outages = parse_outages(table["outages"], f"{where}.outages") if "outages" in table else None
    return LinkConfig(name, channel, directions["down"], directions["up"], outages)


def parse_outages(value: object, where: str) -> Outages:
    """`{ every = DIST, length = DIST }`, each in the channel's distribution syntax."""
    table = _table(value, where, {"every", "length"})
    for key in ("every", "length"):
        if key not in table:
            raise ConfigError(f"{where}.{key}", "missing: outages need both `every` (the time between "
                              "outages) and `length` (how long one lasts), e.g. \"uniform(5s, 30s)\"")
    return Outages(parse_distribution(table["every"], f"{where}.every"),
                   parse_distribution(table["length"], f"{where}.length"))


def _reject_unknown(table: Mapping[str, Any], known: set[str], where: str) -> None:
    unknown = sorted(set(table) - known)
    if unknown:
        raise ConfigError(f"{where}.{unknown[0]}", f"unknown key; expected one of {', '.join(sorted(known))}")


def _table(value: object, where: str, known: set[str]) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigError(where, f"expected a table with keys {', '.join(sorted(known))}")
    _reject_unknown(value, known, where)
    return value


def _probability(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(where, f"{value!r} is not a probability; expected a number in [0, 1]")
    return float(value)


def _count(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(where, f"{value!r} is not a count; expected a whole number >= 0")
    return value


def _bool(value: object, where: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(where, f"{value!r} is not true or false")
    return value
