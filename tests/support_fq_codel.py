"""An independent reference of FQ-CoDel (RFC 8290 section 4: flow hashing, the new and old
flow lists, deficit round robin by bytes, CoDel per flow) with Linux sch_fq_codel's defaults,
for tests/test_fq_codel_reference.py. Each flow's CoDel is tests/support_codel.py's RFC 8289
reference, its "more than one MTU queued" test on the whole backlog as Linux's fq_codel
passes it.

Where the emulator chose (emulator/LINK_MODEL.md "FQ-CoDel"), this follows its words, not
its code: the flow of a packet is its 5-tuple hashed with the router's documented key
(flow_hash below) into `flows` buckets; at the limit the arrival makes room by dropping the
oldest packet of the flow with the most bytes queued (the lowest bucket on a tie), one
packet per arrival. It shares no code with the emulator."""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from support_codel import CoDelQueue, Packet

M64 = (1 << 64) - 1
FLOW_HASH_DOWN = 21   # emulator/src/model/rng.h: the down router's flow hash stream


def _splitmix64(state: int) -> tuple[int, int]:
    """(the advanced state, the output) of one splitmix64 step."""
    state = (state + 0x9E3779B97F4A7C15) & M64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return state, z ^ (z >> 31)


def stream_key(seed: int, replication: int, stream: int) -> int:
    """LINK_MODEL.md "Random numbers": seed, replication and stream id each through a step."""
    _, h = _splitmix64(seed)
    _, h = _splitmix64(h ^ replication)
    _, h = _splitmix64(h ^ stream)
    return h


def flow_hash(key: int, proto: int, sport: int, dport: int, src: bytes = bytes(16), dst: bytes = bytes(16)) -> int:
    """The router's flow hash (LINK_MODEL.md "FQ-CoDel"): x = key, then x = splitmix64(x ^ w)
    for the words src[0:8], src[8:16], dst[0:8], dst[8:16] (big-endian) and
    proto << 32 | sport << 16 | dport; the hash is the upper 32 bits."""
    words = [int.from_bytes(src[:8], "big"), int.from_bytes(src[8:], "big"),
             int.from_bytes(dst[:8], "big"), int.from_bytes(dst[8:], "big"), proto << 32 | sport << 16 | dport]
    x = key
    for w in words:
        _, x = _splitmix64(x ^ w)
    return x >> 32


def bucket(hash32: int, flows: int) -> int:
    return (hash32 * flows) >> 32


@dataclass
class Flow:
    codel: CoDelQueue
    deficit: int = 0
    listed: bool = False


@dataclass
class FqCodel:
    maxpacket: int
    limit: int = 10240
    flows: int = 1024
    quantum: int = 1514
    target: int = 5_000
    interval: int = 100_000
    ecn: bool = True
    table: dict[int, Flow] = field(default_factory=dict)
    new_flows: deque[int] = field(default_factory=deque)
    old_flows: deque[int] = field(default_factory=deque)
    decisions: list[tuple[int, str]] = field(default_factory=list)   # (pkt_id, drop|mark|send)
    new_to_old: int = 0      # new flows that went on to the old list (out of deficit or empty)
    overflows: int = 0

    def flow(self, b: int) -> Flow:
        if b not in self.table:
            self.table[b] = Flow(CoDelQueue(self.maxpacket, self.target, self.interval, self.ecn,
                                            decisions=self.decisions, backlog=self.backlog))
        return self.table[b]

    def backlog(self) -> int:
        return sum(f.codel.bytes() for f in self.table.values())

    def count(self) -> int:
        return sum(len(f.codel.queue) for f in self.table.values())

    def enqueue(self, p: Packet, b: int) -> None:
        """RFC 8290 section 4.1; at the limit the fattest flow's oldest packet is dropped first."""
        if self.count() >= self.limit:
            fat = max(sorted(self.table), key=lambda k: self.table[k].codel.bytes())
            self.decisions.append((self.table[fat].codel.queue.popleft().pkt_id, "drop"))
            self.overflows += 1
        f = self.flow(b)
        f.codel.enqueue(p)
        if not f.listed:
            f.listed = True
            f.deficit = self.quantum
            self.new_flows.append(b)

    def dequeue(self, now: int) -> Packet | None:
        """RFC 8290 section 4.2: what was dropped, marked and sent is in `decisions`."""
        while True:
            lst = self.new_flows if self.new_flows else self.old_flows
            if not lst:
                return None
            b = lst[0]
            f = self.table[b]
            if f.deficit <= 0:
                f.deficit += self.quantum
                lst.popleft()
                self.old_flows.append(b)
                self.new_to_old += lst is self.new_flows
                continue
            p = f.codel.dequeue(now)
            if p is None:
                lst.popleft()
                if lst is self.new_flows and self.old_flows:
                    self.old_flows.append(b)
                    self.new_to_old += 1
                else:
                    f.listed = False
                continue
            f.deficit -= p.size
            return p
