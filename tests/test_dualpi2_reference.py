"""The emulator's DualPI2 router stage decides packet for packet what tests/support_dualpi2.py
(RFC 9332's pseudocode with Linux sch_dualpi2's rules) decides for the same arrivals, draws and
dequeue opportunities: which queue is served, which packet is dropped or marked.

The emulator runs its own link model (`squall-emulator --print-packets-from`: one MTU
packet per millisecond, the ECN fields cycling through a pattern with L4S (ECT(1), CE) and
classic (Not-ECT, ECT(0)) packets) with a DualPI2 class on the down router and a bandwidth
that moves from a load the controller holds (k p' < 1), to a drained queue, to an overload
(k p' > 1). The dequeue opportunities are the emulator's `enqueue` events; at each the
reference drops what it drops and must send the same packet."""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import require_programs
from support_dry_run import Line, emulator_lines, one_class_router
from support_dualpi2 import DualPi2Params, dualpi2_reference

SEED, REPLICATION, MTU, COUNT = 4711, 5, 1000, 30_000
ECN = "0,2,0,1,0,0,3,0"          # 2 of 8 L4S (1 Mbit/s of the 8 offered), 6 classic
ECN_OF = [int(e) for e in ECN.split(",")]
# 7.5 Mbit/s: held; 12 Mbit/s: drained; 5 Mbit/s: overload (C gets 3 of its 6 Mbit/s)
BANDWIDTH = "0s:7500kbit, 10s:12Mbit, 14s:5Mbit, 24s:7500kbit"

CASES = {
    "defaults": ({}, DualPi2Params(mtu=MTU)),
    "overflow-k3-wc50-step2ms": (
        {"dualpi2.overflow": "true", "dualpi2.coupling": "3", "dualpi2.c_protection": "50", "dualpi2.step_thresh": "2ms",
         "dualpi2.target": "5ms", "dualpi2.tupdate": "10ms", "limit": "400"},
        DualPi2Params(target_us=5000, tupdate_us=10_000, k=3.0, step_us=2000, wc=50, overflow=True, limit=400,
                      mtu=MTU)),
}


def emulator_config(keys: dict[str, str]) -> str:
    return one_class_router(SEED, REPLICATION, MTU, BANDWIDTH, {"discipline": "dualpi2", "limit": "10000", **keys})


def fates_of(lines: list[Line]) -> dict[int, str]:
    """drop, send or mark per down packet, as the emulator logged it."""
    fates = {line.pkt: "?" for line in lines if line.event == "in"}
    fates.update({line.pkt: "send" for line in lines if line.event == "enqueue"})
    fates.update({line.pkt: "mark" for line in lines if line.event == "ecn_mark"})
    fates.update({line.pkt: "drop" for line in lines if line.event == "drop_router"})
    return fates


def replay(lines: list[Line], params: DualPi2Params) -> tuple[dict[int, str], list[str]]:
    ref = dualpi2_reference(params, SEED, REPLICATION)
    fates: dict[int, str] = {}
    wrong: list[str] = []
    index = 0
    for line in lines:
        if line.event == "in":
            ecn = ECN_OF[index % len(ECN_OF)]
            index += 1
            if not ref.dualpi2_enqueue(line.t, line.pkt, MTU, ecn):
                fates[line.pkt] = "drop"
        elif line.event == "enqueue":
            if not ref.lq and not ref.cq:
                wrong.append(f"t={line.t}: the emulator sent {line.pkt}, the reference holds nothing")
                continue
            dropped, sent, marked = ref.dualpi2_dequeue(line.t)
            fates.update({pkt: "drop" for pkt in dropped})
            fates[sent] = "mark" if marked else "send"
            if sent != line.pkt:
                wrong.append(f"t={line.t}: the emulator sent {line.pkt}, the reference {sent}")
    return fates, wrong


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_packet_meets_the_fate_the_reference_gives_it(case: str, tmp_path: Path) -> None:
    require_programs("squall-emulator")
    keys, params = CASES[case]
    conf = tmp_path / "dualpi2.conf"
    conf.write_text(emulator_config(keys))
    lines = emulator_lines(conf, COUNT, MTU, ECN)
    got = fates_of(lines)
    expected, wrong = replay(lines, params)
    assert len(got) == COUNT
    differ = [(pkt, got[pkt], want) for pkt, want in expected.items() if got[pkt] != want]
    assert not differ, f"{len(differ)} of {len(got)} fates differ, first: {differ[:5]}"
    assert not wrong, f"{len(wrong)} dequeues differ, first: {wrong[:3]}"
    # the run exercises what it is for: classic drops, L4S marks, L before C
    l4s = {line.pkt for i, line in enumerate(x for x in lines if x.event == "in") if ECN_OF[i % 8] % 2}
    assert sum(f == "drop" for p, f in got.items() if p not in l4s) > 300
    assert sum(f == "mark" for p, f in got.items() if p in l4s) > 300
