"""Which quantity the IIP report's mixture tables call jitter, measured with tshark alone.

    PYTHONPATH=. python validation/explanations/jitter/spacing.py RUN_DIR... [--out results.json]

For every replication of a mixtures run (validation/out/full/iip-mixture/round-K/<run>/) it
reads the UDP stream in the mobile host's capture with tshark (not squall's analysis): the
squall-udp header gives each datagram's sequence number and send time. Over the pairs received
one after the other with consecutive sequence numbers (the report: "if a packet is lost and the
two received packets are not therefore consecutive, the spacing is ignored") it computes two
candidates: the mean change of spacing |Δreceive − Δsend| (what squall reports as jitter) and
the mean receive spacing Δreceive. Each cell's range over its replications is set beside the
table's (min, max)."""
from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
from pathlib import Path

from validation.reference import Key, load_reference

GENERATOR_MAGIC = "53515544"  # "SQUD", workloads/README.md


def datagrams(pcap: Path) -> list[tuple[float, int, int]]:
    """(receive time s, sequence number, send time µs) of each generator datagram, first copy only."""
    out = subprocess.run(["tshark", "-n", "-r", str(pcap), "-Y", "udp && udp.payload", "-T", "fields",
                          "-e", "frame.time_epoch", "-e", "udp.payload"],
                         capture_output=True, text=True, check=True).stdout
    seen: set[int] = set()
    rows = []
    for line in out.splitlines():
        when, payload = line.split("\t")
        if not payload.startswith(GENERATOR_MAGIC):
            continue
        seq, sent_us = int(payload[8:24], 16), int(payload[24:40], 16)
        if seq not in seen:
            seen.add(seq)
            rows.append((float(when), seq, sent_us))
    return rows


def candidates(rows: list[tuple[float, int, int]]) -> dict[str, float | int | None]:
    pairs = [((t2 - t1) * 1e3, (s2 - s1) / 1e3) for (t1, q1, s1), (t2, q2, s2) in zip(rows, rows[1:])
             if q2 == q1 + 1]
    return {"datagrams": len(rows), "pairs": len(pairs),
            "change_of_spacing_ms": statistics.mean(abs(r - s) for r, s in pairs) if pairs else None,
            "receive_spacing_ms": statistics.mean(r for r, _ in pairs) if pairs else None}


def reference_key(cell: str, metric: str) -> Key:
    """`link-e0_workload-2tcp+1udp-0s-0s-0s-ds_tcp-baseline` -> the tables' key (validation.reference)."""
    labels = dict(part.split("-", 1) for part in cell.split("_"))
    return Key("iip", labels["link"], labels["tcp"], labels["workload"], "", metric)


def log_ratio_summary(pairs: list[tuple[float, float]]) -> dict[str, float]:
    logs = sorted(abs(math.log(ours / theirs)) for ours, theirs in pairs)
    return {"values": len(logs), "median_abs_ln_ratio": round(statistics.median(logs), 4),
            "within_2_percent": round(sum(v <= math.log(1.02) for v in logs) / len(logs), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results.json")
    args = parser.parse_args()
    reference = {row.key: row.value for row in load_reference()}
    cells: dict[str, dict] = {}
    for run in args.runs:
        for rep in sorted(run.glob("cells/*udp*/rep-*")):
            cell = rep.parent.name
            measured = candidates(datagrams(rep / "mobile.pcap.gz"))
            cells.setdefault(cell, {"replications": {}})["replications"][rep.name] = measured
            print(cell, rep.name, measured, flush=True)
    compared: dict[str, list[tuple[float, float]]] = {"change_of_spacing_ms": [], "receive_spacing_ms": []}
    for cell, entry in sorted(cells.items()):
        table = [reference.get(reference_key(cell, f"udp.Jitter_{end}")) for end in ("min", "max")]
        entry["table_ms"] = table
        for name, pairs in compared.items():
            values = [r[name] for r in entry["replications"].values() if r[name] is not None]
            entry[name] = [round(min(values), 3), round(max(values), 3)] if values else None
            for ours, theirs in zip(entry[name] or [], table):
                if theirs is not None:
                    pairs.append((ours, theirs))
    result = {"experiment": "the IIP report's UDP jitter: mean change of spacing or mean receive spacing",
              "command": "python validation/explanations/jitter/spacing.py " + " ".join(
                  str(Path(*r.parts[-4:])) for r in args.runs),
              "check": "tshark -Y udp on each replication's mobile.pcap.gz; consecutive sequence numbers only",
              "tshark": subprocess.run(["tshark", "--version"], capture_output=True, text=True).stdout.splitlines()[0],
              "runs": {r.name: json.loads((r / "meta.json").read_text()).get("squall_revision") for r in args.runs},
              "summary": {name: log_ratio_summary(pairs) for name, pairs in compared.items() if pairs},
              "cells": cells}
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result["summary"], indent=1))


if __name__ == "__main__":
    main()
