"""Why a run's "spurious" RTOs were unnecessary: an isolating measurement for the ARQ conclusion.

    python -m validation.rto_causes RUN_DIR [--cells GLOB] [--out FILE.json]

squall counts an RTO as spurious when the segment it retransmitted had been delivered
(analysis/metrics/tcp.py: the first retransmission after a timeout, its original's fate in the
emulator log). The studies meant a timeout that fired while the data or its acknowledgement was
still on its way (the ARQ's delays). The two differ when the acknowledgement was lost: the data
arrived, the ACK never did, and the timeout was the sender's only way on. For each such RTO of
the data sender at the fixed host, the two hosts' captures say which it was:

- `data late`: the original reached the mobile host only after the RTO (queue or ARQ delay);
- `ack in flight`: the mobile host had acknowledged it before the RTO, and the link delivered
  such an ACK, after the RTO (delay on the way back, e.g. held by the uplink's ARQ);
- `ack lost`: the mobile host had acknowledged it before the RTO, and the link dropped every
  such ACK (a later ACK covered the data);
- `ack unknown`: none of those ACKs was delivered and the log does not say of every one that
  the link dropped it (still inside at STOP, or not joined);
- `receiver late`: the mobile host had the data before the RTO but acknowledged it only after.

(`acked before`, the fixed host having the ACK before its timeout, is counted if it occurs.)
`data late`, `ack in flight` and `receiver late` are timeouts that fired too early (spurious in
the studies' sense); `ack lost` is a loss the timeout recovered from. Whether an ACK was
delivered or dropped is the link's own record (its fate in the emulator log, joined by packet
identity), not a guess from arrival order: an ACK held by the uplink's ARQ can arrive after a
later one was sent.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

from analysis.results import cell_selection
from analysis.join.identity import PacketFate
from analysis.read.pcap import Packet, read_packets
from analysis.metrics.per_connection import analyse_replication
from analysis.results.stored import stored
from analysis.metrics.tcp import RTO, SEQ_MOD

SYN_ACK = 0x12
ACK = 0x10
CAUSES = ("data late", "ack in flight", "receiver late", "ack lost", "ack unknown", "acked before")
TOO_EARLY = ("data late", "ack in flight", "receiver late")


def cause(rto_us: int, data_arrived_us: int | None, acks_sent: list[tuple[int, bool | None]],
          acks_arrived_us: list[int]) -> str:
    """The cause of one unnecessary RTO at time rto_us: when the original reached the receiver,
    when the receiver sent ACKs covering it and whether the link delivered each (None: its log
    does not say), and when such ACKs reached the sender (µs, one clock)."""
    if data_arrived_us is None or data_arrived_us > rto_us:
        return "data late"
    before = [delivered for sent_us, delivered in acks_sent if sent_us <= rto_us]
    if not before:
        return "receiver late"
    if any(t <= rto_us for t in acks_arrived_us):
        return "acked before"       # the sender had it: not expected of a timeout
    if any(before):
        return "ack in flight"
    return "ack lost" if all(delivered is False for delivered in before) else "ack unknown"


def _covers(p: Packet, end: int) -> bool:
    return bool(p.tcp_flags & ACK) and (p.tcp_ack - end) % SEQ_MOD < SEQ_MOD // 2


def _delivered(fates: Mapping[int, PacketFate], p: Packet) -> bool | None:
    """True: the link delivered it; False: the link dropped it; None: the log does not say."""
    fate = fates.get(p.frame_no)
    if fate is None or not (fate.fate == "out" or fate.fate.startswith("drop_")):
        return None
    return fate.fate == "out"


def replication_causes(rep: Path) -> Counter:
    """The causes of the unnecessary RTOs of the data sent by the fixed host."""
    found: Counter = Counter()
    metrics = analyse_replication(rep)
    fates = metrics.fates.get("mobile")      # the ACKs' fates: analyse_replication's join, not a second one
    if fates is None:
        raise ValueError(f"{rep}: no mobile capture, so no ACK the mobile host sent and no fate of one")
    fixed = [p for p in read_packets(stored(rep, "fixed.pcap")) if p.proto == 6]
    mobile = [p for p in read_packets(stored(rep, "mobile.pcap")) if p.proto == 6]
    for side, m in metrics.tcp:
        if side != "fixed":
            continue
        sport, cport = m.server[1], m.client[1]
        syn = next((p for p in fixed if p.sport == sport and p.dport == cport
                    and p.tcp_flags & SYN_ACK == SYN_ACK), None)
        if syn is None:
            continue
        down = [p for p in mobile if p.sport == sport and p.dport == cport]
        acks_out = [p for p in mobile if p.sport == cport and p.dport == sport]
        acks_in = [p for p in fixed if p.sport == cport and p.dport == sport]
        for x in m.retransmission_list:
            if x.kind != RTO or not x.unnecessary:
                continue
            seq = (syn.tcp_seq + x.rel_seq) % SEQ_MOD
            end = (seq + x.length) % SEQ_MOD
            arrived = next((p.ts_us for p in down if p.tcp_seq == seq), None)
            found[cause(x.ts_us, arrived, [(p.ts_us, _delivered(fates, p)) for p in acks_out if _covers(p, end)],
                        [p.ts_us for p in acks_in if _covers(p, end)])] += 1
    return found


def replication_totals(rep: Path) -> dict[str, float]:
    """A replication's `conn.rto_too_early` and `conn.rto_after_ack_loss` (validation data);
    {} when its captures or log cannot be read, said on stderr (the values then stay empty)."""
    try:
        found = replication_causes(rep)
    except Exception as e:   # noqa: BLE001 — a replication without its files has no such values
        print(f"rto_causes: {rep}: no RTO causes ({type(e).__name__}: {e})", file=sys.stderr)
        return {}
    return {"conn.rto_too_early": float(sum(found.get(c, 0) for c in TOO_EARLY)),
            "conn.rto_after_ack_loss": float(found.get("ack lost", 0))}


def run_causes(run: Path, cells: str) -> dict:
    """Per link (the cell id's `link-…` part) the causes over every replication of the cells."""
    by_link: dict[str, Counter] = {}
    replications: Counter = Counter()
    for rep in sorted(run.glob("cells/*/rep-*")):
        cell = rep.parent.name
        if not cell_selection.selected(cell, cells) or rep.name.endswith(".partial"):
            continue
        link = next((part for part in cell.split("_") if part.startswith("link-")), "link-?")
        by_link.setdefault(link, Counter()).update(replication_causes(rep))
        replications[link] += 1
    return {link: {"replications": replications[link], **{c: counts.get(c, 0) for c in CAUSES},
                   "too_early": sum(counts.get(c, 0) for c in TOO_EARLY)}
            for link, counts in sorted(by_link.items())}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run", type=Path)
    p.add_argument("--cells", default="*")
    p.add_argument("--out", type=Path)
    args = p.parse_args(argv)
    result = {"run": args.run.name, "cells": args.cells, "by_link": run_causes(args.run, args.cells)}
    text = json.dumps(result, indent=1)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
