"""An independent reference of CoDel (RFC 8289 section 5's pseudocode: dodequeue(),
dequeue(), control_law()), with Linux sch_codel's ECN marking (codel_impl.h: an ECN-capable
packet is marked instead of dropped, and a mark in the drop loop ends the loop), for
tests/test_codel_reference.py.

It shares no code with the emulator. Times are integer microseconds; control_law() is
t + interval / sqrt(count) truncated to a whole microsecond, as emulator/LINK_MODEL.md
"CoDel" states. The queue is a FIFO of (packet id, enqueue time, size, ECN field)."""
from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

TARGET_US, INTERVAL_US = 5_000, 100_000   # Linux sch_codel's defaults


@dataclass
class Packet:
    pkt_id: int
    tstamp: int
    size: int
    ecn: int = 0


@dataclass
class CoDelQueue:
    maxpacket: int
    target: int = TARGET_US
    interval: int = INTERVAL_US
    ecn: bool = False
    ce_threshold: int = 0   # Linux's ce_threshold (0: off): a packet sent after more is marked
    queue: deque[Packet] = field(default_factory=deque)
    first_above_time: int = 0
    drop_next: int = 0
    count: int = 0
    lastcount: int = 0
    dropping: bool = False
    decisions: list[tuple[int, str]] = field(default_factory=list)   # (pkt_id, drop|mark|send)
    # the backlog the "more than one MTU queued" test counts (bytes, after the packet at hand
    # left); None: this queue's own (FQ-CoDel counts all its flows' packets, as Linux)
    backlog: Callable[[], int] | None = None
    entries: int = 0      # times the drop state was entered
    reuses: int = 0       # of them, with the count of the last cycle (delta > 1, within 16 intervals)

    def enqueue(self, p: Packet) -> None:
        self.queue.append(p)

    def bytes(self) -> int:
        return sum(p.size for p in self.queue)

    def control_law(self, t: int, count: int) -> int:
        return t + int(self.interval / math.sqrt(count))

    def dodequeue(self, now: int) -> tuple[Packet | None, bool]:
        p = self.queue.popleft() if self.queue else None
        if p is None:
            self.first_above_time = 0
            return None, False
        backlog = self.backlog() if self.backlog else self.bytes()
        if now - p.tstamp < self.target or backlog <= self.maxpacket:
            self.first_above_time = 0
            return p, False
        if self.first_above_time == 0:
            self.first_above_time = now + self.interval
            return p, False
        return p, now >= self.first_above_time

    def _markable(self, p: Packet) -> bool:
        return self.ecn and p.ecn != 0

    def drop(self, p: Packet) -> None:
        self.decisions.append((p.pkt_id, "drop"))

    def dequeue(self, now: int) -> Packet | None:
        """RFC 8289 dequeue(); what it dropped, marked and returned is in `decisions`."""
        p, ok_to_drop = self.dodequeue(now)
        if self.dropping:
            if not ok_to_drop:
                self.dropping = False
            while now >= self.drop_next and self.dropping:
                self.count += 1
                if self._markable(p):
                    self.drop_next = self.control_law(self.drop_next, self.count)
                    return self._send(p, "mark", now)
                self.drop(p)
                p, ok_to_drop = self.dodequeue(now)
                if not ok_to_drop:
                    self.dropping = False
                else:
                    self.drop_next = self.control_law(self.drop_next, self.count)
        elif ok_to_drop:
            marked = self._markable(p)
            if not marked:
                self.drop(p)
                p, _ = self.dodequeue(now)
            self.dropping = True
            self.entries += 1
            delta = self.count - self.lastcount
            self.count = 1
            if delta > 1 and now - self.drop_next < 16 * self.interval:
                self.count = delta
                self.reuses += 1
            self.drop_next = self.control_law(now, self.count)
            self.lastcount = self.count
            if marked:
                return self._send(p, "mark", now)
        return self._send(p, "send", now)

    def _send(self, p: Packet | None, how: str, now: int) -> Packet | None:
        if p is None:
            return p
        if how == "send" and self.ce_threshold and now - p.tstamp > self.ce_threshold and p.ecn != 0:
            how = "mark"   # codel_impl.h: after the control law, whatever the drop state
        self.decisions.append((p.pkt_id, how))
        return p
