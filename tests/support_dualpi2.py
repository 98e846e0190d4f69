"""An independent reference of DualPI2 (emulator/LINK_MODEL.md "DualPI2"), written from RFC
9332's pseudocode (appendix A: dualpi2_enqueue, dualpi2_dequeue, dualpi2_update) with the
rules of Linux's sch_dualpi2 at its defaults, for tests/test_dualpi2_reference.py. It shares
no code with the emulator.

Where Linux departs from appendix A.1, marked `Linux:` below: the scheduler is a weighted round
robin with a credit, not the time-shifted FIFO; the dice are random rolls, not the
deterministic `recur`; the update uses the larger of both queues' head delays (the
appendix's alternative); no mark or drop while fewer than 2 MTU would stay queued; the
overload rules (k p' > 1)."""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import NamedTuple

from support_netem import Stream

ROUTER_DOWN_STREAM = 3      # LINK_MODEL.md "Random numbers"


@dataclass
class DualPi2Params:
    target_us: int = 15_000
    tupdate_us: int = 16_000
    alpha: float = 41 / 256     # Hz, as Linux holds 0.16
    beta: float = 819 / 256     # 3.2 Hz
    k: float = 2.0
    step_us: int = 1_000
    wc: int = 10                # the C queue's WRR weight, percent
    overflow: bool = False
    limit: int = 10_000
    mtu: int = 1500


class Packet(NamedTuple):
    pkt: int
    size: int
    ecn: int
    t_in: int


@dataclass
class DualPi2Reference:
    params: DualPi2Params
    stream: Stream
    p: float = 0.0              # p', the base probability
    prevq: int = 0
    next_update: int = 0
    credit: int = 0
    lq: deque = field(default_factory=deque)
    cq: deque = field(default_factory=deque)

    def __post_init__(self) -> None:
        self.next_update = self.params.tupdate_us
        self.credit = self.initial_credit

    @property
    def initial_credit(self) -> int:
        return self.params.mtu * (self.params.wc - (100 - self.params.wc))

    def advance(self, now: int) -> None:
        while self.next_update <= now:
            self.dualpi2_update(self.next_update)
            self.next_update += self.params.tupdate_us

    def dualpi2_update(self, t: int) -> None:
        par = self.params
        curq = max(t - self.lq[0].t_in if self.lq else 0, t - self.cq[0].t_in if self.cq else 0)
        self.p += par.alpha * (curq - par.target_us) / 1e6 + par.beta * (curq - self.prevq) / 1e6
        self.p = min(1.0, max(0.0, self.p))
        if par.overflow:
            self.p = min(self.p, 1 / par.k)
        self.prevq = curq

    def dualpi2_enqueue(self, now: int, pkt: int, size: int, ecn: int) -> bool:
        """False: dropped at the limit."""
        self.advance(now)
        if len(self.lq) + len(self.cq) >= self.params.limit:
            return False
        (self.lq if ecn % 2 == 1 else self.cq).append(Packet(pkt, size, ecn, now))   # ECT(1), CE
        return True

    def recur(self, likelihood: float) -> bool:
        return self.stream.uniform() < likelihood      # Linux: a random roll

    def dualpi2_dequeue(self, now: int) -> tuple[list[int], int, bool]:
        """(packets dropped, the packet sent, marked) for one dequeue opportunity at now."""
        self.advance(now)
        par = self.params
        dropped = []
        while self.lq or self.cq:
            from_l = bool(self.lq) and (not self.cq or self.credit <= 0)     # Linux: WRR
            change = (par.wc if self.cq else 0) if from_l else (-(100 - par.wc) if self.lq else 0)
            packet = (self.lq if from_l else self.cq).popleft()
            backlog = sum(q.size for q in self.lq) + sum(q.size for q in self.cq)
            verdict = self.judge(packet, from_l, backlog, now)
            if verdict == "drop":
                dropped.append(packet.pkt)
                continue
            self.credit += change * packet.size
            if not self.lq and not self.cq:
                self.credit = self.initial_credit
            return dropped, packet.pkt, verdict == "mark"
        raise AssertionError("a dequeue opportunity with nothing queued")

    def judge(self, packet: Packet, from_l: bool, backlog: int, now: int) -> str:
        par = self.params
        mark = False
        if backlog >= 2 * par.mtu:                                   # Linux
            p_cl = par.k * self.p                                    # coupled L4S probability
            overload = p_cl > 1
            if not from_l:
                if self.recur(self.p) and self.recur(self.p):        # p_C = p'^2
                    if overload or packet.ecn == 0:
                        return "drop"
                    mark = True
            elif overload:                                           # Linux
                if not par.overflow and self.recur(self.p) and self.recur(self.p):
                    return "drop"
                mark = True
            elif self.recur(p_cl):
                mark = True
        if from_l and now - packet.t_in > par.step_us:               # laqm: the step
            mark = True
        return "mark" if mark else "send"


def dualpi2_reference(params: DualPi2Params, seed: int, replication: int) -> DualPi2Reference:
    return DualPi2Reference(params, Stream(seed, replication, ROUTER_DOWN_STREAM))
