"""results.json of the host-2004 experiment (README.md): per cell and host arm, the studies'
metrics as the validation measures them (validation/measures.py) beside the Baseline
reference values, their signed ln r (the validation's ratio, counts as (x + 1) / (ref + 1)),
and per study and arm the signed median ln r by metric family, all arms over the same
replications (same seed: the same channel timelines). Per replication: the page time, and,
counted with tshark on the client's capture, the SYNs it sent again and its pure ACKs.

    python validation/explanations/host-2004/summarise.py [RUN_DIR...] > results.json

Without arguments: every run under validation/out/host-2004/ (run.sh's).
"""
from __future__ import annotations

import json
import math
import re
import statistics
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
from validation.compare import _family_of, _is_central, _ratio, compare_row  # noqa: E402
from validation.measures import Measurements, cell_key, measure_cell  # noqa: E402
from validation.reference import Key, load_reference  # noqa: E402
from analysis.aggregate.run_analysis import cell_summaries  # noqa: E402
from validation.run import load_cells  # noqa: E402

ARMS = {"baseline": "the validation's baseline profile (today's initial RTO 1 s, quick ACKs)",
        "linux-2.4": "the linux-2.4 profile: initial RTO 3 s for SYN and SYN-ACK (BPF); min/max RTO and "
                     "delayed-ACK cap pinned at 2.4's values, which are today's too",
        "no-quickack": "baseline + the client (squall-http, the receiver of the pages) re-arming TCP_QUICKACK = 0 "
                       "after every read (delayed_acks); nginx keeps the kernel's quick ACKs"}
COUNTS = {"congestion drops", "error drops", "Σ maximum drops", "retransmissions"}


def client_packets(pcap: Path) -> tuple[int, int]:
    """(SYNs sent again, pure ACKs) of the client (the mobile host), from its capture."""
    out = subprocess.run(["tshark", "-r", str(pcap), "-Y", "tcp", "-T", "fields", "-e", "ip.src", "-e", "tcp.srcport", "-e", "tcp.flags.syn",
                          "-e", "tcp.flags.ack", "-e", "tcp.len"], check=True, capture_output=True, text=True).stdout
    rows = [line.split("\t") for line in out.splitlines()]
    opening = [row[0] for row in rows if row[2] in ("1", "True") and row[3] in ("0", "False")]
    client = opening[0] if opening else ""       # who sends a SYN without ACK
    syns: dict[str, int] = defaultdict(int)
    pure_acks = 0
    for src, port, syn, ack, length in rows:
        if src != client:
            continue
        if syn in ("1", "True") and ack in ("0", "False"):
            syns[port] += 1
        elif ack in ("1", "True") and length == "0":
            pure_acks += 1
    return sum(n - 1 for n in syns.values()), pure_acks


def replication_row(r) -> dict:
    pcap = Path(r.ref.directory) / "mobile.pcap.gz"
    syn_again, pure_acks = client_packets(pcap) if pcap.exists() else (None, None)
    time = r.values.get("web.response_time_s") if r.counts else None
    finite = time is not None and math.isfinite(time)        # a page that timed out has none
    return {"replication": r.ref.rep, "status": r.ref.status, "page_time_s": round(time, 3) if finite else None,
            "syn_retransmitted": syn_again, "client_pure_acks": pure_acks}


def cell_metrics(study: str, cell, reference: dict[Key, object]) -> dict[str, dict]:
    m = Measurements()
    measure_cell(study, cell, m)
    metrics = {}
    for key, ours in m.values.items():
        ref = reference.get(Key(study, key.link, "baseline", key.workload, key.http, key.metric))
        family = _family_of(key.metric)
        if ref is None or ours is None or family is None or ref.value is None:
            continue
        ratio = _ratio(compare_row(ref, ours), family in COUNTS)
        ln_r = math.log(ratio) if ratio and 0 < ratio < math.inf else None
        # a minimum or maximum of 5 replications is not one of the study's 20-30 (validation/compare.py)
        metrics[key.metric] = {"family": family, "ours": round(ours, 3), "reference": ref.value,
                               "ln_r": None if ln_r is None else round(ln_r, 3),
                               "counted": _is_central(key.metric) or family in COUNTS}
    return metrics


def median(values: list[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def signed_bias(cells: dict[str, dict]) -> dict:
    """Per study and arm, per family: the signed median ln r of the counted metrics (central
    statistics and counts) and how many values it is of."""
    logs: dict[str, dict[str, dict[str, list[float]]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for cell in cells.values():
        for arm in ARMS:
            for metric in cell.get(arm, {}).get("metrics", {}).values():
                if metric["ln_r"] is not None and metric["counted"]:
                    logs[cell["study"]][arm][metric["family"]].append(metric["ln_r"])
                    logs[cell["study"]][arm]["all"].append(metric["ln_r"])
    return {study: {arm: {family: {"median_ln_r": median(v), "n": len(v)} for family, v in families.items()}
                    for arm, families in arms.items()} for study, arms in logs.items()}


def paired_page_times(cells: dict[str, dict]) -> dict:
    """Per cell and arm: the median over the replications both finished of ln(page time /
    baseline's), and how many pages of each arm timed out (left out of the ratio)."""
    result = {}
    for name, cell in cells.items():
        base = {row["replication"]: row["page_time_s"] for row in cell.get("baseline", {}).get("replications", [])}
        result[name] = {}
        for arm in ARMS:
            if arm == "baseline" or arm not in cell:
                continue
            logs = [math.log(row["page_time_s"] / base[row["replication"]]) for row in cell[arm]["replications"]
                    if row["page_time_s"] and base.get(row["replication"])]
            timeouts = {a: sum(row["status"] == "timeout" for row in cell[a]["replications"]) for a in ("baseline", arm)}
            result[name][arm] = {"median_ln_ratio": median(logs), "n": len(logs), "timeouts": timeouts}
    return result


def merged_cells(runs: list[Path]) -> dict[tuple[str, str], tuple[str, list[str], object]]:
    """(scenario, cell) -> (study, its runs' revisions, the cell with every run's replications):
    a scenario's replications may come from several runs (run.sh's iip-6-10 adds 6-10)."""
    merged: dict[tuple[str, str], tuple[str, list[str], object]] = {}
    for run in runs:
        study = "saarto" if "saarto" in run.name else "iip"
        scenario = re.sub(r"-\d{8}T\d{6}Z$", "", run.name)
        revision = f"{run.name}: " + json.loads((run / "meta.json").read_text())["squall_revision"]
        for cell in load_cells(run, rewrite_summary=False):
            if (scenario, cell.cell) not in merged:
                merged[(scenario, cell.cell)] = (study, [revision], cell)
                continue
            _, revisions, first = merged[(scenario, cell.cell)]
            revisions.append(revision)
            first.replications = sorted(first.replications + cell.replications, key=lambda r: r.ref.rep)
            first.summaries = cell_summaries(first.replications)
    return merged


def main(argv: list[str]) -> None:
    runs = [Path(a) for a in argv] or sorted(p.parent for p in (ROOT / "validation/out/host-2004").glob("*/*/meta.json"))
    reference = {row.key: row for row in load_reference()}
    cells: dict[str, dict] = {}
    for (scenario, cell_id), (study, revisions, cell) in merged_cells(runs).items():
        arm = cell.labels["host"]
        name = f"{scenario}/" + re.sub(r"_host-[^_]+$", "", cell_id)
        key = cell_key(study, cell, "")
        entry = cells.setdefault(name, {"study": study, "link": key.link, "workload": key.workload,
                                        "http": key.http, "runs": revisions})
        entry[arm] = {"metrics": cell_metrics(study, cell, reference),
                      "replications": [replication_row(r) for r in cell.replications]}
    text = json.dumps({"experiment": "validation/explanations/host-2004/ (iip.toml, iip-long.toml, saarto.toml)", "arms": ARMS,
                       "reference": "the studies' Baseline rows (validation/reference.py); ln r as the validation's "
                                    "(validation/compare.py), signed: > 0 squall higher",
                       "signed_median_ln_r": signed_bias(cells), "paired_page_time": paired_page_times(cells),
                       "cells": cells}, indent=1, ensure_ascii=False)
    text = re.sub(r"\{[^\[\]{}]*\}", lambda m: re.sub(r"\s+", " ", m.group(0)), text)   # one line per record
    sys.stdout.write(text + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
