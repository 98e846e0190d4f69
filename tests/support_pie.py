"""An independent reference of PIE (emulator/LINK_MODEL.md "PIE"), written from RFC 8033's
pseudocode (sections 4 and 5) with the rules where Linux's sch_pie (dq_rate_estimator off)
departs from it, for tests/test_pie_reference.py. It shares no code with the emulator.

Linux's departures, each marked `Linux:` below: the queue delay is the last dequeued packet's
sojourn (0 when it left the queue empty), the drop decision's early exit looks at that delay
rather than qdelay_old, the burst allowance shrinks by the time between dequeues, the idle
decay keeps 63/64 rather than 98 %, the limit is tested before the early drop, every drop
resets the de-randomisation sum. The update runs as a timer at k x T_UPDATE (k >= 1), before
any packet event at the same instant."""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from support_netem import Stream

MAX_BURST_US = 150_000      # RFC 8033 section 5.1 (Linux: fixed)
ROUTER_DOWN_STREAM = 3      # LINK_MODEL.md "Random numbers"


@dataclass
class PieParams:
    target_us: int = 15_000     # QDELAY_REF
    tupdate_us: int = 15_000    # T_UPDATE
    alpha: float = 0.125
    beta: float = 1.25
    limit: int = 1000           # packets
    mtu: int = 1500             # MEAN_PKTSIZE of the RFC's "2 * MEAN_PKTSIZE": the MTU in Linux
    ecn: bool = False


@dataclass
class PieReference:
    params: PieParams
    stream: Stream
    drop_prob: float = 0.0
    accu_prob: float = 0.0
    qdelay: int = 0
    qdelay_old: int = 0
    burst_allowance: int = MAX_BURST_US
    last_dequeue: int | None = None
    next_update: int = 0
    queue: deque = field(default_factory=deque)    # (id, ip_len, enqueued at)

    def __post_init__(self) -> None:
        self.next_update = self.params.tupdate_us

    @property
    def backlog(self) -> int:
        return sum(size for _, size, _ in self.queue)

    def advance(self, now: int) -> None:
        """The timer: every update due at or before now."""
        while self.next_update <= now:
            self.calculate_drop_prob()
            self.next_update += self.params.tupdate_us

    def enqueue(self, now: int, pkt: int, size: int, ecn: int = 0) -> str:
        """'admit', 'mark' or 'drop' (the limit's tail drop included)."""
        self.advance(now)
        p = self.params
        if len(self.queue) >= p.limit:              # Linux: the limit first
            self.accu_prob = 0.0
            return "drop"
        if self.drop_early():
            if p.ecn and self.drop_prob <= 0.1 and ecn != 0:
                verdict = "mark"
            else:
                self.accu_prob = 0.0                # Linux: every drop resets it
                return "drop"
        else:
            verdict = "admit"
        self.queue.append((pkt, size, now))
        return verdict

    def drop_early(self) -> bool:
        """RFC 8033 section 5.1 with de-randomisation."""
        p = self.params
        if self.burst_allowance > 0:
            return False
        # Linux: qdelay (the RFC: qdelay_old); the RFC's 2 * MEAN_PKTSIZE as 2 MTU
        if (self.qdelay < p.target_us // 2 and self.drop_prob < 0.2) or self.backlog < 2 * p.mtu:
            return False
        if self.drop_prob == 0:
            self.accu_prob = 0.0
        self.accu_prob += self.drop_prob
        if self.accu_prob < 0.85:
            return False
        if self.accu_prob >= 8.5:
            return True
        if self.stream.uniform() < self.drop_prob:
            self.accu_prob = 0.0
            return True
        return False

    def calculate_drop_prob(self) -> None:
        """RFC 8033 section 4.2 (auto-tuning) and 4.3 (non-linear boost and decay)."""
        p = self.params
        if self.drop_prob < 0.000001:
            scale = 1 / 2048
        elif self.drop_prob < 0.00001:
            scale = 1 / 512
        elif self.drop_prob < 0.0001:
            scale = 1 / 128
        elif self.drop_prob < 0.001:
            scale = 1 / 32
        elif self.drop_prob < 0.01:
            scale = 1 / 8
        elif self.drop_prob < 0.1:
            scale = 1 / 2
        else:
            scale = 1.0
        change = (scale * p.alpha * (self.qdelay - p.target_us) / 1e6
                  + scale * p.beta * (self.qdelay - self.qdelay_old) / 1e6)
        if change > 0.02 and self.drop_prob >= 0.1:
            change = 0.02
        if self.qdelay > 250_000:
            change += 0.02
        self.drop_prob += change
        decay = not (self.qdelay == 0 and self.backlog != 0)
        if self.drop_prob >= 1:
            self.drop_prob = 1.0
            decay = False
        elif self.drop_prob < 0:
            self.drop_prob = 0.0
        if self.qdelay == 0 and self.qdelay_old == 0 and decay:
            self.drop_prob -= self.drop_prob / 64          # Linux: 98.4 %, the RFC 98 %
        if (self.qdelay < p.target_us // 2 and self.qdelay_old < p.target_us // 2
                and self.drop_prob == 0):
            self.burst_allowance = MAX_BURST_US
            self.last_dequeue = None
            self.accu_prob = 0.0
        self.qdelay_old = self.qdelay

    def dequeue(self, now: int) -> int:
        """The head leaves at now; its id. Linux: the delay by its time stamp, the burst
        allowance less the time since the last dequeue."""
        self.advance(now)
        pkt, _, enqueued_at = self.queue.popleft()
        self.qdelay = now - enqueued_at if self.queue else 0
        since = 0 if self.last_dequeue is None else now - self.last_dequeue
        self.last_dequeue = now
        if since:
            self.burst_allowance = max(0, self.burst_allowance - since)
        return pkt


def pie_reference(params: PieParams, seed: int, replication: int) -> PieReference:
    return PieReference(params, Stream(seed, replication, ROUTER_DOWN_STREAM))
