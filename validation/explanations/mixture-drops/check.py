"""The mixture-drops run, counted without squall's analysis: per replication and TCP flow (the
receiver's port), data segments the fixed host sent minus those the mobile host received
(tshark on the two hosts' captures), the emulator log's drop lines (router or send buffer), the
largest window the receiver advertised, and the flow's slow start up to its first
retransmission (segments sent, segments acknowledged, ACKs received). Beside them squall's
own values from the run's summary/runs.csv.

    python validation/explanations/mixture-drops/check.py RUN_DIR

prints one JSON object per replication (results.json holds them, per cell, under `runs`).
"""
from __future__ import annotations

import csv
import gzip
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

FIELDS = ("frame.time_epoch", "ip.src", "tcp.srcport", "tcp.dstport", "tcp.len", "tcp.seq_raw",
          "tcp.ack_raw", "tcp.window_size", "tcp.flags.syn")
BULK_PORTS = range(5001, 5010)     # the bulk receivers (docs/scenarios.md: 5001 + i)


def tshark_rows(pcap: Path) -> list[list[str]]:
    args = ["tshark", "-n", "-r", str(pcap), "-Y", "tcp", "-T", "fields", "-E", "separator=\t"]
    for f in FIELDS:
        args += ["-e", f]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return [line.split("\t") for line in out.splitlines() if line]


def capture_counts(rep: Path) -> dict[int, dict]:
    fixed = tshark_rows(rep / "fixed.pcap.gz")
    mobile = tshark_rows(rep / "mobile.pcap.gz")
    flows: dict[int, dict] = defaultdict(lambda: {"sent": 0, "received": 0, "max_window_B": 0})
    t0 = min(float(r[0]) for r in fixed)
    per_flow: dict[int, list] = defaultdict(list)
    for r in fixed:
        sport, dport, length = int(r[2]), int(r[3]), int(r[4] or 0)
        if dport in BULK_PORTS and length > 0:
            flows[dport]["sent"] += 1
            per_flow[dport].append(("data", float(r[0]) - t0, int(r[5]), length))
        elif sport in BULK_PORTS:
            if r[8] != "1" and r[7]:
                flows[sport]["max_window_B"] = max(flows[sport]["max_window_B"], int(r[7]))
            per_flow[sport].append(("ack", float(r[0]) - t0, int(r[6]), 0))
    for r in mobile:
        dport, length = int(r[3]), int(r[4] or 0)
        if dport in BULK_PORTS and length > 0:
            flows[dport]["received"] += 1
    for port, events in per_flow.items():
        flows[port].update(slow_start(events))
    for v in flows.values():
        v["dropped"] = v["sent"] - v["received"]
    return dict(flows)


def slow_start(events: list) -> dict:
    """Up to the flow's first retransmission: data segments sent, segments acknowledged (bytes
    acknowledged / 524, the MSS), ACKs that acknowledged new data; and the segments in flight
    then. cwnd += segments acknowledged gives sent = 2 + 2 x acked (IW2); cwnd += 1 per ACK
    (a 2004 Linux) sent = 2 + acked + ACKs."""
    isn = None
    high = 0
    acked = 0
    sent = acks = 0
    t_first = None
    for kind, t, num, length in events:
        if kind == "data":
            if isn is None:
                isn = num - 1            # the SYN took one sequence number
            end = (num - isn - 1 + length) % 2**32
            if end <= high:              # a retransmission: slow start is over
                t_first = t
                break
            high = end
            sent += 1
        elif isn is not None:
            rel = (num - isn - 1) % 2**32
            if 0 < rel <= high and rel > acked:
                acked = rel
                acks += 1
    return {"ss_segments_sent": sent, "ss_segments_acked": round(acked / 524, 1),
            "ss_acks": acks, "ss_in_flight_at_loss": round((high - acked) / 524, 1),
            "first_retransmission_s": None if t_first is None else round(t_first, 2)}


def log_drops(rep: Path) -> dict[int, dict]:
    out: dict[int, dict] = defaultdict(lambda: {"log_drops": 0, "log_drops_before_20s": 0})
    with gzip.open(rep / "emulator.log.gz", "rt") as f:
        for line in f:
            c = line.rstrip("\n").split("\t")
            if len(c) < 20 or c[1] not in ("drop_router", "drop_sbuf") or c[9] != "tcp":
                continue
            port = int(c[13])
            if port in BULK_PORTS and int(c[18]) > 0:
                out[port]["log_drops"] += 1
                if int(c[0]) < 20_000_000:
                    out[port]["log_drops_before_20s"] += 1
    return dict(out)


def squall_values(run: Path) -> dict[tuple[str, int], dict]:
    rows = {}
    with open(run / "summary" / "runs.csv") as f:
        for r in csv.DictReader(f):
            rows[(r["cell"], int(r["replication"]))] = r
    return rows


def main(run: Path) -> None:
    squall = squall_values(run)
    for cell in sorted((run / "cells").iterdir()):
        for rep in sorted(cell.glob("rep-*")):
            n = int(rep.name.split("-")[1])
            status = json.loads((rep / "status.json").read_text()).get("status")
            caps = capture_counts(rep)
            logs = log_drops(rep)
            row = squall.get((cell.name, n), {})
            flows = {}
            for port in sorted(caps):
                name = f"tcp{port - 5000}"
                flows[name] = {**caps[port], **logs.get(port, {"log_drops": 0, "log_drops_before_20s": 0}),
                               "squall_congestion_drops": row.get(f"{name}.congestion_drops"),
                               "squall_elapsed_s": row.get(f"{name}.elapsed_s")}
            print(json.dumps({"cell": cell.name, "replication": n, "status": status,
                              "run.congestion_drops": row.get("run.congestion_drops"),
                              "flows": flows}))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
