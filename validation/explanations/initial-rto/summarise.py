"""results.json of the initial-RTO experiment (validation/README.md, "the initial RTO").

    python summarise.py rto-1s=RUN_DIR rto-3s=RUN_DIR [...] > results.json

Per cell and variant: the page time of every replication (squall's analysis: the client's
capture, first SYN to the ACK of the last FIN; squall-http's own beside it), and, counted
independently with tshark from the two hosts' captures, the SYNs the client and the SYN-ACKs
the server sent again, with the time from each connection's first SYN (SYN-ACK) to its first
retransmission, and how many of them arrived although an earlier copy had (the SYNs at the
server, the SYN-ACKs at the client more than once). The reference is the IIP report's Baseline Time (tables 13, 16, 19, 22).
"""
from __future__ import annotations

import csv
import json
import re
import statistics
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from validation.reference import Key, load_reference  # noqa: E402


def handshake_packets(pcap: Path, syn_ack: bool, tsval: bool = False) -> dict[int, list]:
    """Per connection (the client's port), the capture times of its SYNs (syn_ack: SYN-ACKs)
    (tsval: (time, TSval) pairs)."""
    flags = "tcp.flags.syn == 1 && tcp.flags.ack == " + ("1" if syn_ack else "0")
    out = subprocess.run(["tshark", "-r", str(pcap), "-Y", flags, "-T", "fields",
                          "-e", "tcp.dstport" if syn_ack else "tcp.srcport", "-e", "frame.time_epoch",
                          "-e", "tcp.options.timestamp.tsval"],
                         check=True, capture_output=True, text=True).stdout
    streams: dict[int, list] = defaultdict(list)   # by port
    for line in out.splitlines():
        port, when, value = line.split("\t")
        streams[int(port)].append((float(when), value) if tsval else float(when))
    return streams


def syn_timeouts_too_early(client: Path, server: Path) -> int:
    """Connections whose SYN timed out while the reply to the first SYN was on its way: the
    server sent its first SYN-ACK before the client sent its SYN again, and that SYN-ACK
    (known by its TSval; the two captures share one clock) reached the client."""
    sent = handshake_packets(client, syn_ack=False)
    replies_sent = handshake_packets(server, syn_ack=True, tsval=True)
    replies_got = handshake_packets(client, syn_ack=True, tsval=True)
    early = 0
    for port, syns in sent.items():
        if len(syns) < 2 or not replies_sent.get(port):
            continue
        replied, first_reply = replies_sent[port][0]
        arrived = any(value == first_reply for _, value in replies_got.get(port, []))
        early += replied < syns[1] and arrived
    return early


def retransmissions(streams: dict[int, list[float]]) -> tuple[int, list[float]]:
    """Packets sent again, and each retransmitting connection's first gap (s)."""
    again = sum(len(times) - 1 for times in streams.values())
    gaps = [round(times[1] - times[0], 3) for times in streams.values() if len(times) > 1]
    return again, gaps


def analysed(run: Path) -> dict[tuple[str, int], dict]:
    """(cell, replication) -> the row of squall's analysis (summary/runs.csv)."""
    with open(run / "summary" / "runs.csv", newline="") as f:
        return {(row["cell"], int(row["replication"])): row for row in csv.DictReader(f)}


def number(text: str) -> float | None:
    return float(text) if text not in ("", None) else None


def replication(rep: Path, row: dict) -> dict:
    syns = handshake_packets(rep / "mobile.pcap.gz", syn_ack=False)
    syn_acks = handshake_packets(rep / "fixed.pcap.gz", syn_ack=True)
    syn_again, syn_gaps = retransmissions(syns)
    synack_again, synack_gaps = retransmissions(syn_acks)
    # Sent again although one had got through: the same SYN arriving at the server (or SYN-ACK
    # at the client) more than once.
    syn_twice, _ = retransmissions(handshake_packets(rep / "fixed.pcap.gz", syn_ack=False))
    synack_twice, _ = retransmissions(handshake_packets(rep / "mobile.pcap.gz", syn_ack=True))
    time = number(row["web.response_time_s"])
    client = number(row["web.client_response_time_s"])
    kernel = [number(row[f"host.{host}.syn_retransmissions.kernel"]) for host in ("mobile", "fixed")]
    return {"replication": int(row["replication"]), "status": row["status"],
            "time_s": None if time is None else round(time, 3),
            "client_time_s": None if client is None else round(client, 3),
            "error_drops": number(row["web.error_drops"]),
            "connections": len(syns),
            "syn_retransmitted": syn_again, "syn_first_gap_s": syn_gaps,
            "synack_retransmitted": synack_again, "synack_first_gap_s": synack_gaps,
            "syn_arrived_again": syn_twice, "synack_arrived_again": synack_twice,
            "syn_timeouts_too_early": syn_timeouts_too_early(rep / "mobile.pcap.gz",
                                                             rep / "fixed.pcap.gz"),
            "kernel_syn_retrans": None if None in kernel else int(sum(kernel))}


def mean(values: list[float]) -> float:
    return round(statistics.mean(values), 2)


def median(values: list[float | None]) -> float | str | None:
    """The median, a page that timed out (None) counting as longer than any."""
    if not values:
        return None
    ordered = sorted(values, key=lambda v: float("inf") if v is None else v)
    n = len(ordered)
    middle = ordered[n // 2 - 1: n // 2 + 1] if n % 2 == 0 else [ordered[n // 2]]
    if None in middle:
        return "timeout"
    return round(statistics.mean(middle), 3)


def main(argv: list[str]) -> None:
    reference = {row.key: row.value for row in load_reference()}
    cells: dict[str, dict] = {}
    for arg in argv:
        variant, run = arg.split("=", 1)
        rows = analysed(Path(run))
        for cell_dir in sorted(Path(run).glob("cells/*")):
            axes = dict(part.split("-", 1) for part in cell_dir.name.split("_"))
            cell = cells.setdefault(cell_dir.name, {
                "link": axes["link"], "workload": axes["workload"], "http": axes["http"],
                "reference": {m: reference.get(Key("iip", axes["link"], "baseline",
                                                   axes["workload"].removesuffix("-running"),
                                                   axes["http"], m))
                              for m in ("Time", "Drops_e")}})
            reps = [replication(rep, rows[(cell_dir.name, int(rep.name[4:]))])
                    for rep in sorted(cell_dir.glob("rep-??"))]
            cell[variant] = {
                "median_time_s": median([r["time_s"] for r in reps]),
                "timeouts": sum(r["status"] == "timeout" for r in reps),
                "median_error_drops": median([r["error_drops"] for r in reps if r["status"] == "ok"]),
                "syn_retransmitted_per_page": mean([r["syn_retransmitted"] for r in reps]),
                "synack_retransmitted_per_page": mean([r["synack_retransmitted"] for r in reps]),
                "syn_timeouts_too_early_per_page": mean([r["syn_timeouts_too_early"] for r in reps]),
                "handshake_arrived_again_per_page": mean([r["syn_arrived_again"] + r["synack_arrived_again"]
                                                          for r in reps]),
                # per replication, 1..n
                **{key: [r[key] for r in reps] for key in reps[0] if key != "replication"}}
    text = json.dumps({
        "experiment": "validation/explanations/initial-rto/initial-rto.toml",
        "variants": {"rto-1s": "today's initial RTO (1 s)",
                     "rto-3s": "initial_rto.bpf.c attached: 3 s, as Linux 2.4"},
        "reference": "IIP report tables 13, 16, 19, 22 (Baseline): Time, the median page "
                     "response time; Drops_e, error drops (HTTP/1.0: the highest median over "
                     "the connection groups, not the page's sum)",
        "checked_with": "page time: squall's analysis (client capture, first SYN to the ACK of "
                        "the last FIN) and squall-http's own; SYN and SYN-ACK retransmissions: "
                        "tshark on the client's and the server's capture, equal to the growth "
                        "of the two kernels' TCPSynRetrans in every replication",
        "cells": cells}, indent=1)
    # one line per list of numbers
    text = re.sub(r"\[[^\[\]{}]*\]", lambda m: re.sub(r"\s+", " ", m.group(0)), text)
    sys.stdout.write(text + "\n")

if __name__ == "__main__":
    main(sys.argv[1:])
