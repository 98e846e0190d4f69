"""The emulator's CoDel (router stage, `discipline = codel`) decides packet for packet what
RFC 8289's pseudocode decides (tests/support_codel.py) for the same arrivals and the same
dequeue opportunities. The emulator's own link model runs (`squall-emulator --print-packets`:
one MTU packet every millisecond) over a send buffer of one packet and a bandwidth schedule
that overloads the link, drains it, overloads it again and then matches the arrivals, so
the queue enters the drop state, leaves it, re-enters it within 16 intervals (count reuse)
and settles. The reference walks the emulator's events in order: each `in` joins its queue;
where the emulator's first decision of a dequeue opportunity appears (`drop_router` or
`enqueue`), the reference runs dequeue() at that time, and each of its drops and its send
must be the emulator's next decisions. A queue left empty by a dequeue is dequeued once more
at once (emulator/LINK_MODEL.md "CoDel": the stage asks again while the send buffer takes
packets)."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import require_programs
from support_codel import CoDelQueue, Packet
from testbed.paths import bin_dir

MTU = 1000
SCHEDULE = "0s:4Mbit, 0.5s:16Mbit, 0.8s:4Mbit, 1.3s:16Mbit, 1.6s:6Mbit, 3s:16Mbit, 3.3s:7Mbit"
PACKETS = 6000
LIMIT = 1000


def config(extra: str) -> str:
    return "\n".join([
        "token = 0123456789abcdef", "log = /dev/null", "seed = 1",
        "[channel]", "good = fixed(1000s)", "bad = fixed(1s)",
        "[down]", f"mtu = {MTU}B", f"bandwidth = {SCHEDULE}", "delay = 10ms", f"send_buffer = {MTU}B",
        "[down.router]", "default = all", "[down.router.class.all]", "discipline = codel", f"limit = {LIMIT}",
        extra,
        "[up]", f"mtu = {MTU}B", "bandwidth = unlimited", "delay = 10ms", f"send_buffer = {MTU}B", ""])


def down_events(conf: Path) -> list[tuple[int, str, int]]:
    done = subprocess.run([str(bin_dir() / "squall-emulator"), "--print-packets", str(PACKETS), str(conf)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    events = []
    for line in done.stdout.splitlines():
        t, direction, event, pkt, *_ = line.split("\t")
        if direction == "down" and event in ("in", "enqueue", "drop_router", "ecn_mark"):
            events.append((int(t), event, int(pkt)))
    return events


def emulator_decisions(events: list[tuple[int, str, int]]) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    for _, event, pkt in events:
        if event == "drop_router":
            out.append((pkt, "drop"))
        elif event == "ecn_mark":
            out.append((pkt, "mark"))
        elif event == "enqueue" and out[-1:] != [(pkt, "mark")]:
            out.append((pkt, "send"))
    return out


def reference_decisions(events: list[tuple[int, str, int]], ref: CoDelQueue) -> list[tuple[int, str]]:
    """The reference's decisions: a tail drop for an arrival that finds LIMIT packets queued,
    and each dequeue run where the emulator's opportunity began."""
    made = 0   # emulator decisions accounted for by the reference so far
    for t, event, pkt in events:
        if event == "in":
            if len(ref.queue) + 1 > LIMIT:
                ref.decisions.append((pkt, "drop"))
            else:
                ref.enqueue(Packet(pkt, t, MTU))
        elif event != "ecn_mark" and not (event == "enqueue" and ref.decisions[made - 1:made] == [(pkt, "mark")]):
            if made == len(ref.decisions):
                ref.dequeue(t)
                if not ref.queue:
                    ref.dequeue(t)   # the empty dequeue that follows at once
            made += 1
    return ref.decisions


@pytest.mark.parametrize("extra, name", [("", "defaults"),
                                          ("codel.target = 2ms\ncodel.interval = 30ms", "2ms-30ms")])
def test_codel_drops_exactly_the_packets_rfc_8289_drops(tmp_path, extra, name):
    require_programs("squall-emulator")
    conf = tmp_path / "codel.conf"
    conf.write_text(config(extra))
    events = down_events(conf)
    target, interval = (2_000, 30_000) if extra else (5_000, 100_000)
    ref = CoDelQueue(maxpacket=MTU, target=target, interval=interval)
    expected = reference_decisions(events, ref)
    got = emulator_decisions(events)
    drops = sum(1 for _, how in got if how == "drop")
    assert ref.entries >= 3 and ref.reuses >= 1, (
        f"{name}: the schedule should enter the drop state again and reuse the count "
        f"(entries {ref.entries}, reuses {ref.reuses}, {drops} drops)")
    first = next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b), None)
    assert first is None and len(got) == len(expected), (
        f"{name}: decision {first}: emulator {got[first:first + 5] if first is not None else got[len(expected):][:5]}, "
        f"RFC 8289 {expected[first:first + 5] if first is not None else expected[len(got):][:5]}")
