"""The emulator's FQ-CoDel (router stage, `discipline = fq_codel`) decides packet for packet
what RFC 8290's FQ-CoDel with a per-flow RFC 8289 CoDel decides (tests/support_fq_codel.py)
for the same arrivals and dequeue opportunities.

The emulator runs its own link model on a packet file (`squall-emulator --print-packets-from`,
the flow column: a UDP packet from that port) with bulk flows (a packet every 2 ms each,
together above the link's rate most of the time) and sparse ones (a packet every 40 ms), sizes
above half the MTU (the send buffer of one MTU takes a packet exactly when it is empty) and
random ECN fields, over codel's bandwidth schedule (overload, drain, overload). The reference
walks the emulator's events as tests/test_codel_reference.py does: each `in` joins its flow
(at the limit the fattest flow's oldest packet is dropped first); where the emulator's first
decision of a dequeue opportunity appears, the reference's dequeue() runs at that time, and
each of its drops, marks and its send must be the emulator's next decisions; a router left
empty is dequeued once more at once."""
from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import require_programs
from support_codel import Packet
from support_fq_codel import FLOW_HASH_DOWN, FqCodel, bucket, flow_hash, stream_key
from support_dry_run import ROUTER_EVENTS, down_lines
from support_dry_run import Line as Event

MTU = 1000
SCHEDULE = "0s:4Mbit, 0.5s:16Mbit, 0.8s:4Mbit, 1.3s:16Mbit, 1.6s:6Mbit, 3s:16Mbit, 3.3s:7Mbit"
SEED, REPLICATION = 8290, 3
END_US = 4_500_000
BULK = range(1, 5)          # flow numbers (source ports)
SPARSE = range(100, 106)




@dataclass(frozen=True)
class Arrival:
    t: int
    size: int
    ecn: int
    flow: int


def arrivals() -> list[Arrival]:
    draw = random.Random(8290)
    out = []
    for flow in BULK:
        out += [Arrival(t, draw.randint(MTU // 2 + 1, MTU), draw.randrange(4), flow)
                for t in range(flow * 700, END_US, 2000)]
    for flow in SPARSE:
        out += [Arrival(t, draw.randint(MTU // 2 + 1, MTU), draw.randrange(4), flow)
                for t in range(flow * 1300, END_US, 40_000)]
    return sorted(out, key=lambda a: (a.t, a.flow))


def config(keys: str) -> str:
    return "\n".join([
        "token = 0123456789abcdef", "log = /dev/null", f"seed = {SEED}", f"replication = {REPLICATION}",
        "[channel]", "good = fixed(1000s)", "bad = fixed(1s)",
        "[down]", f"mtu = {MTU}B", f"bandwidth = {SCHEDULE}", "delay = 10ms", f"send_buffer = {MTU}B",
        "[down.router]", "default = all", "[down.router.class.all]", "discipline = fq_codel", keys,
        "[up]", f"mtu = {MTU}B", "bandwidth = unlimited", "delay = 10ms", f"send_buffer = {MTU}B", ""])


def down_events(conf: Path, packets: Path) -> list[Event]:
    return down_lines(conf, "--print-packets-from", str(packets), events=ROUTER_EVENTS)


def compare(events: list[Event], ref: FqCodel, by_id: dict[int, Arrival]) -> list[tuple[int, str]]:
    """The emulator's decisions, each (packet id, drop|mark|send); the reference's are in
    ref.decisions."""
    key = stream_key(SEED, REPLICATION, FLOW_HASH_DOWN)
    got: list[tuple[int, str]] = []
    for e in events:
        if e.event == "in":
            a = by_id[e.pkt]
            ref.enqueue(Packet(e.pkt, e.t, e.ip_len, a.ecn), bucket(flow_hash(key, 17, a.flow, 0), ref.flows))
            continue
        how = {"drop_router": "drop", "ecn_mark": "mark", "enqueue": "send"}[e.event]
        if how == "send" and got[-1:] == [(e.pkt, "mark")]:
            continue   # the marked packet moving on
        if len(got) == len(ref.decisions):
            ref.dequeue(e.t)
            if ref.count() == 0:
                ref.dequeue(e.t)   # the empty dequeue that follows at once
        got.append((e.pkt, how))
    return got


@pytest.mark.parametrize("keys, ref_args", [
    ("limit = 100", {"limit": 100}),
    ("limit = 80\nfq_codel.flows = 8\nfq_codel.quantum = 300\nfq_codel.ecn = false\nfq_codel.target = 2ms\n"
     "fq_codel.interval = 30ms", {"limit": 80, "flows": 8, "quantum": 300, "ecn": False, "target": 2_000,
                                   "interval": 30_000}),
])
def test_fq_codel_decides_what_rfc_8290_decides(tmp_path, keys, ref_args):
    require_programs("squall-emulator")
    stream = arrivals()
    packets = tmp_path / "packets.txt"
    packets.write_text("".join(f"{a.t} down {a.size} {a.ecn} {a.flow}\n" for a in stream))
    conf = tmp_path / "fq_codel.conf"
    conf.write_text(config(keys))
    ref = FqCodel(maxpacket=MTU, **ref_args)
    got = compare(down_events(conf, packets), ref, {i + 1: a for i, a in enumerate(stream)})
    expected = ref.decisions
    first = next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b), min(len(got), len(expected)))
    assert got == expected, (f"decision {first}: emulator {got[first:first + 5]}, "
                             f"RFC 8290 {expected[first:first + 5]}")
    kinds = {how for _, how in got}
    assert ref.overflows > 0 and ref.new_to_old > 0 and "drop" in kinds, (ref.overflows, ref.new_to_old, kinds)
    assert ("mark" in kinds) == ref_args.get("ecn", True)
