"""The emulator's CoDel (router stage, `discipline = codel`) decides packet for packet what
RFC 8289's pseudocode decides (tests/support_codel.py) for the same arrivals and the same
dequeue opportunities. The emulator's own link model runs in virtual time
(`squall-emulator --print-packets`: one MTU packet every millisecond, or
`--print-packets-from`: given times, sizes and ECN fields) over a send buffer of one MTU and a
bandwidth schedule that overloads the link, drains it, overloads it again and then nearly
matches the arrivals, so the queue enters the drop state, leaves it, re-enters it within 16
intervals (count reuse) and settles.

The reference walks the emulator's events in order: each `in` joins its queue (or is a tail
drop at the limit); where the emulator's first decision of a dequeue opportunity appears
(`drop_router`, `ecn_mark` or `enqueue`), the reference runs dequeue() at that time, and each
of its drops, marks and its send must be the emulator's next decisions. A queue left empty by a
dequeue is dequeued once more at once (emulator/LINK_MODEL.md "CoDel": the stage asks again
while the send buffer takes packets). Packet sizes in the file cases are above half the MTU,
so the send buffer takes a packet exactly when it is empty: a dequeue's next head always fits
(LINK_MODEL.md says what happens when it does not)."""
from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

from conftest import require_programs
from support_codel import CoDelQueue, Packet
from support_dry_run import ROUTER_EVENTS, down_lines
from testbed.paths import bin_dir
from support_dry_run import Line as Event

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


def down_events(conf: Path, *source: str) -> list[Event]:
    return down_lines(conf, *source, events=ROUTER_EVENTS)


def compare(events: list[Event], ref: CoDelQueue, ecn: dict[int, int]) -> tuple[list, list]:
    """(the emulator's decisions, the reference's), each a list of (packet id, drop|mark|send)."""
    got: list[tuple[int, str]] = []
    for e in events:
        if e.event == "in":
            if len(ref.queue) + 1 > LIMIT:
                ref.decisions.append((e.pkt, "drop"))
            else:
                ref.enqueue(Packet(e.pkt, e.t, e.ip_len, ecn.get(e.pkt, 0)))
            continue
        how = {"drop_router": "drop", "ecn_mark": "mark", "enqueue": "send"}[e.event]
        if how == "send" and got[-1:] == [(e.pkt, "mark")]:
            continue   # the marked packet moving on
        if len(got) == len(ref.decisions):
            ref.dequeue(e.t)
            if not ref.queue:
                ref.dequeue(e.t)   # the empty dequeue that follows at once
        got.append((e.pkt, how))
    return got, ref.decisions


def assert_same(name: str, got: list, expected: list) -> None:
    first = next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b), min(len(got), len(expected)))
    assert got == expected, (f"{name}: decision {first}: emulator {got[first:first + 5]}, "
                             f"RFC 8289 {expected[first:first + 5]}")


@pytest.mark.parametrize("extra, target, interval", [("", 5_000, 100_000),
                                                      ("codel.target = 2ms\ncodel.interval = 30ms", 2_000, 30_000)])
def test_codel_drops_exactly_the_packets_rfc_8289_drops(tmp_path, extra, target, interval):
    require_programs("squall-emulator")
    conf = tmp_path / "codel.conf"
    conf.write_text(config(extra))
    ref = CoDelQueue(maxpacket=MTU, target=target, interval=interval)
    got, expected = compare(down_events(conf, "--print-packets", str(PACKETS)), ref, {})
    assert ref.entries >= 3 and ref.reuses >= 1, (
        f"the schedule should enter the drop state again and reuse the count (entries {ref.entries}, "
        f"reuses {ref.reuses})")
    assert_same(f"{target} us / {interval} us", got, expected)


@pytest.mark.parametrize("ecn, ce_threshold", [(True, 0), (False, 0), (False, 3_000)])
def test_codel_marks_and_drops_mixed_sizes_and_ecn_fields_as_rfc_8289(tmp_path, ecn, ce_threshold):
    """Random sizes (501-1000 B), ECN fields (Not-ECT, ECT(1), ECT(0), CE) and gaps (a Poisson
    stream of 1.1 packets per ms); with `codel.ecn = true` ECN-capable packets are marked where
    Not-ECT ones are dropped (Linux's codel_dequeue), without it all are dropped; with
    `codel.ce_threshold` ECN-capable packets sent after more than it are marked."""
    require_programs("squall-emulator")
    draw = random.Random(8289)
    lines, fields, t = [], {}, 0
    for i in range(PACKETS):
        t += int(draw.expovariate(1.1 / 1000))
        field = draw.randrange(4)
        lines.append(f"{t} down {draw.randint(MTU // 2 + 1, MTU)} {field}")
        fields[i + 1] = field
    packets = tmp_path / "packets.txt"
    packets.write_text("\n".join(lines) + "\n")
    conf = tmp_path / "codel.conf"
    conf.write_text(config(f"codel.ecn = {'true' if ecn else 'false'}\ncodel.ce_threshold = {ce_threshold}us"))
    ref = CoDelQueue(maxpacket=MTU, ecn=ecn, ce_threshold=ce_threshold)
    got, expected = compare(down_events(conf, "--print-packets-from", str(packets)), ref, fields)
    marks = sum(1 for _, how in got if how == "mark")
    assert (marks >= 50) == (ecn or ce_threshold > 0) and ref.entries >= 3, (marks, ref.entries)
    assert_same(f"ecn {ecn}, ce_threshold {ce_threshold} us", got, expected)


@pytest.mark.parametrize("line, reason", [
    ("5 down 1000\n4 down 1000", 'packets.txt:3: expected "t_us dir ip_len [ecn [flow]]" with t_us >= 5'),
    ("0 sideways 1000", "packets.txt:2: expected a direction down or up, ip_len >= 1 and an ECN field 0-3"),
    ("0 down 1000 4", "packets.txt:2: expected a direction down or up, ip_len >= 1 and an ECN field 0-3"),
    ("0 down", 'packets.txt:2: expected "t_us dir ip_len [ecn [flow]]" with t_us >= 0'),
    ("0 down 1000 0 65536", "packets.txt:2: expected a flow number 0-65535"),
])
def test_a_packet_file_line_the_model_cannot_take_is_named(tmp_path, line, reason):
    require_programs("squall-emulator")
    (tmp_path / "packets.txt").write_text("# t_us dir ip_len ecn\n" + line + "\n")
    conf = tmp_path / "codel.conf"
    conf.write_text(config(""))
    done = subprocess.run([str(bin_dir() / "squall-emulator"), "--print-packets-from", str(tmp_path / "packets.txt"),
                           str(conf)], capture_output=True, text=True, timeout=30)
    assert done.returncode == 1 and done.stderr == f"squall-emulator: {tmp_path / reason}\n"
