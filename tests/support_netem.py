"""An independent reference of the netem stage (docs/netem.md), written from netem's documented
semantics (tc-netem(8), the kernel's sch_netem model) and squall's documented random streams
(emulator/LINK_MODEL.md "Random numbers"), for tests/test_netem_reference.py and tests/test_netem_loss_statistics.py.

It shares no code with the emulator: the streams are rebuilt from their description
(splitmix64 keys, xoshiro256**), netem's models from their definitions."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import NormalDist

MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
NETEM_FIRST_STREAM = 6
PURPOSES = ("loss", "duplicate", "corrupt", "jitter", "reorder")
TABLE_MIN, TABLE_MAX = -32768 / 8192, 32767 / 8192    # the range of netem's s16 tables / 8192


def splitmix(state: int) -> tuple[int, int]:
    """(new state, output) of one splitmix64 step."""
    state = (state + GOLDEN) & MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return state, z ^ (z >> 31)


def stream_key(seed: int, replication: int, stream: int) -> int:
    _, k1 = splitmix(seed)
    _, k2 = splitmix(k1 ^ replication)
    _, key = splitmix(k2 ^ stream)
    return key


def _rotl(x: int, k: int) -> int:
    return ((x << k) | (x >> (64 - k))) & MASK


class Stream:
    """xoshiro256** seeded with the four splitmix64 outputs that follow a stream's key."""

    def __init__(self, seed: int, replication: int, stream: int) -> None:
        state, self.s = stream_key(seed, replication, stream), []
        for _ in range(4):
            state, out = splitmix(state)
            self.s.append(out)

    def next(self) -> int:
        s = self.s
        result = (_rotl((s[1] * 5) & MASK, 7) * 9) & MASK
        t = (s[1] << 17) & MASK
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = _rotl(s[3], 45)
        return result

    def uniform(self) -> float:
        return (self.next() >> 11) * 2.0 ** -53

    def integer(self, lo: int, hi: int) -> int:
        """Uniform in [lo, hi] by rejecting the top partial block of 2^64 values."""
        n = hi - lo + 1
        limit = MASK - (MASK + 1) % n     # the largest x below the last whole block of n
        while (x := self.next()) > limit:
            pass
        return lo + x % n


class Correlated:
    """netem's correlated source: next = (1 - corr) u + corr last; `last` starts at a draw."""

    def __init__(self, stream: Stream, corr: float) -> None:
        self.stream, self.corr = stream, corr
        self.last = stream.uniform() if corr > 0 else 0.0

    def next(self) -> float:
        u = self.stream.uniform()
        if self.corr <= 0:
            return u
        self.last = (1.0 - self.corr) * u + self.corr * self.last
        return self.last


def percent(text: str) -> float:
    return float(text.rstrip("%")) / 100.0 if text.endswith("%") else float(text)


@dataclass
class Netem:
    """A direction's netem parameters as tc-netem(8) names them (values as probabilities)."""
    loss: tuple[str, list[float]] | None = None
    latency_us: int = 0
    jitter_us: int = 0
    delay_corr: float = 0.0
    distribution: str = "uniform"
    reorder: tuple[float, float] = (0.0, 0.0)
    gap: int = 0
    duplicate: tuple[float, float] = (0.0, 0.0)
    corrupt: tuple[float, float] = (0.0, 0.0)


# tc's defaults for the parameters a loss model leaves out (iproute2's q_netem)
def loss_params(model: str, given: list[float]) -> list[float]:
    if model == "random":
        return given + [0.0] * (2 - len(given))
    if model == "gemodel":   # p, r = 100%, 1-h = 100%, 1-k = 0
        return given + [1.0, 1.0, 0.0][len(given) - 1:]
    p13 = given[0]           # state: p31 = 1 - p13, p32 = 0, p23 = 100%, p14 = 0
    return given + [1.0 - p13, 0.0, 1.0, 0.0][len(given) - 1:]


class LossModel:
    def __init__(self, model: str, params: list[float], src: Correlated) -> None:
        self.model, self.a, self.src = model, params, src
        self.state = 1           # gemodel: 1 good, 2 bad; state: 1..4 as in tc-netem(8)

    def lost(self) -> bool:
        if self.model == "random":
            return self.a[0] > 0 and self.src.next() < self.a[0]
        if self.model == "gemodel":
            return self._gilbert_elliott()
        return self._four_state()

    def _gilbert_elliott(self) -> bool:
        # per packet: the state may change (p: good -> bad, r: bad -> good), and the packet
        # is lost with the loss probability of the state it found (1-k good, 1-h bad)
        p, r, one_minus_h, one_minus_k = self.a
        change, loss = self.src.next(), self.src.next()
        found = self.state
        if change < (p if found == 1 else r):
            self.state = 3 - found
        return loss < (one_minus_k if found == 1 else one_minus_h)

    _MOVES = {1: ((4, 4), (3, 0)), 2: ((3, 3),), 3: ((2, 2), (1, 1)), 4: ()}   # (to, index of p)

    def _four_state(self) -> bool:
        # p13 p31 p32 p23 p14 = a[0..4]; the state the draw leads to decides: 3 and 4 lose
        u, bound = self.src.next(), 0.0
        nxt = 1 if self.state == 4 else self.state
        for to, index in self._MOVES[self.state]:
            bound += self.a[index]
            if u < bound:
                nxt = to
                break
        self.state = nxt
        return nxt in (3, 4)


def _round_half_away(x: float) -> int:
    whole = math.floor(abs(x))
    whole += 1 if abs(x) - whole >= 0.5 else 0
    return int(math.copysign(whole, x))


def _table(x: float) -> float:
    return min(max(x, TABLE_MIN), TABLE_MAX)


def _normal(u: float) -> float:
    return TABLE_MIN if u <= 0.0 else _table(NormalDist().inv_cdf(u))


def _pareto(u: float) -> float:
    # iproute2's pareto table: shape 3, scale 1, minus its mean 1.5, times 4/3
    return _table((1.0 / math.pow(1.0 - u, 1.0 / 3.0) - 1.5) * (4.0 / 3.0))


DISTRIBUTIONS = {"normal": _normal, "pareto": _pareto,
                 "paretonormal": lambda u: _table((_normal(u) + 3.0 * _pareto(u)) / 4.0)}


@dataclass
class Entry:
    lost: bool = False
    duplicate: bool = False
    corrupt_bit: int | None = None


@dataclass
class NetemReference:
    cfg: Netem
    seed: int
    replication: int
    direction: int                       # 0 down, 1 up
    counter: int = 0
    src: dict[str, Correlated] = field(default_factory=dict)

    def __post_init__(self) -> None:
        corr = {"loss": self.cfg.loss[1][1] if self.cfg.loss and self.cfg.loss[0] == "random" else 0.0,
                "duplicate": self.cfg.duplicate[1], "corrupt": self.cfg.corrupt[1],
                "jitter": self.cfg.delay_corr, "reorder": self.cfg.reorder[1]}
        for i, purpose in enumerate(PURPOSES):
            stream = Stream(self.seed, self.replication, NETEM_FIRST_STREAM + 2 * i + self.direction)
            self.src[purpose] = Correlated(stream, corr[purpose])
        self.loss = LossModel(self.cfg.loss[0], self.cfg.loss[1], self.src["loss"]) if self.cfg.loss else None

    def enter(self, ip_len: int, copy: bool) -> Entry:
        """netem's enqueue: count = 1 (+1 duplicated) (-1 lost); 0 drops the packet."""
        dup_p, corrupt_p = self.cfg.duplicate[0], self.cfg.corrupt[0]
        duplicated = not copy and dup_p > 0 and self.src["duplicate"].next() < dup_p
        lost = self.loss is not None and self.loss.lost()
        if lost and not duplicated:
            return Entry(lost=True)
        e = Entry(duplicate=duplicated and not lost)
        if corrupt_p > 0 and self.src["corrupt"].next() < corrupt_p and ip_len > 0:
            e.corrupt_bit = self.src["corrupt"].stream.integer(0, 8 * ip_len - 1)
        return e

    def leave(self) -> int:
        """netem's delay line for the next packet out of the link: reordered packets skip it."""
        p = self.cfg.reorder[0]
        gap = (self.cfg.gap or 1) if p > 0 else 0
        if gap and self.counter >= gap - 1 and self.src["reorder"].next() < p:
            self.counter = 0
            return 0
        self.counter += 1
        return self._delay()

    def _delay(self) -> int:
        c = self.cfg
        if c.jitter_us == 0:
            return c.latency_us
        u = self.src["jitter"].next()
        if c.distribution == "uniform":    # netem without a table: uniform on [-jitter, jitter)
            j = math.floor(u * float(2 * c.jitter_us)) - c.jitter_us
        else:
            j = _round_half_away(c.jitter_us * DISTRIBUTIONS[c.distribution](u))
        return max(0, c.latency_us + j)
