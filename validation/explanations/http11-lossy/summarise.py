"""results.json of the HTTP/1.1 lossy-page experiment (validation/README.md, "HTTP/1.1's fast
lossy pages").

    python summarise.py RUN_DIR [--full-data validation/data/iip-http/replications.csv
                                 --full-raw ROUND_RUN_DIR...] > results.json

RUN_DIR is a run of http11-lossy.toml. Per replication, from the emulator log alone (the
packets that entered the link and their fate): the channel's state at t = 0, its first bad
period, the page's first error drop and how much of the page's data the client had received
before it, the error drops of data (downlink, with payload), of the client's packets (uplink)
and of handshakes; from squall's analysis (summary/runs.csv): the page time (the client's
capture, first SYN to the ACK of the last FIN), the server's timeouts and fast retransmits
(squall's TCP analysis of the server's capture); from squall-http's own record
(web.client.stdout) when the main object's last byte arrived (a page that timed out with the
main object unfinished counts as longer than any). Per cell the medians (a page that timed
out at 300 s counts as longer than any), and per link, variant and channel start the case of
the conclusion "HTTP/1.0 beats HTTP/1.1 for s+2s" (1.0's median below 1.1's).

--full-raw adds the same per-replication facts for the full validation's raw runs of the same
cells (the round directories' run directories, channel fresh), their page times from the
committed replications.csv (--full-data): the evidence the experiment was designed from.
"""
from __future__ import annotations

import argparse
import csv
import gzip
import json
import math
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from validation.reference import Key, load_reference  # noqa: E402

TIMEOUT_S = 300.0


def channel_and_drops(log: Path) -> dict:
    """Facts of one replication from its emulator log (columns: docs of squall-emulator's log,
    `# columns` line)."""
    start_state = None
    states: list[tuple[float, str]] = []
    entered: dict[str, list[str]] = {}
    drops: list[tuple[float, str, list[str]]] = []
    delivered: list[tuple[float, str, int]] = []     # (time out, seq, payload) downlink data
    with gzip.open(log, "rt") as f:
        for line in f:
            if line.startswith("#"):
                continue
            c = line.rstrip("\n").split("\t")
            t, event = int(c[0]) / 1e6, c[1]
            if event == "start":
                start_state = c[5]
            elif event == "state":
                states.append((t, c[5]))
            elif event == "in":
                entered[c[3]] = c
            elif event == "drop_err":
                drops.append((t, c[2], entered.get(c[3], c)))
            elif event == "out" and c[2] == "down" and c[18] not in ("-", "0"):
                delivered.append((t, c[15], int(c[18])))
    first_bad = next((t for t, s in states if s == "bad"), None)
    if start_state == "bad":
        first_bad = 0.0
    first_bad_end = None
    if first_bad is not None:
        first_bad_end = next((t for t, s in states if s == "good" and t > first_bad), None)
    first_drop = drops[0][0] if drops else None
    seen: set[str] = set()
    before = 0
    for t, seq, length in sorted(delivered):
        if first_drop is not None and t >= first_drop:
            break
        if seq not in seen:
            seen.add(seq)
            before += length
    data_drops = sum(1 for _, d, c in drops if d == "down" and c[18] not in ("-", "0"))
    handshake = sum(1 for _, _, c in drops if "S" in c[17])
    in_first_bad = sum(1 for t, _, _ in drops
                       if first_bad is not None and t >= first_bad
                       and (first_bad_end is None or t < first_bad_end))
    return {"channel_at_start": start_state,
            "first_bad_s": None if first_bad is None else round(first_bad, 3),
            "first_bad_end_s": None if first_bad_end is None else round(first_bad_end, 3),
            "first_error_drop_s": None if first_drop is None else round(first_drop, 3),
            "data_bytes_before_first_drop": before,
            "error_drops": len(drops), "error_drops_data": data_drops,
            "error_drops_uplink": sum(1 for _, d, _ in drops if d == "up"),
            "error_drops_handshake": handshake,
            "error_drops_in_first_bad": in_first_bad}


def number(text: str | None) -> float | None:
    return float(text) if text not in ("", None) else None


def median(values: list[float | None]) -> float | str | None:
    """The median, a page that timed out (None) counting as longer than any."""
    if not values:
        return None
    middle = statistics.median([math.inf if v is None else v for v in values])
    return "timeout" if math.isinf(middle) else round(middle, 3)


def comparable(value: float | str | None) -> float | None:
    return TIMEOUT_S if value == "timeout" else value


def replication(rep: Path, row: dict) -> dict:
    time = number(row.get("web.response_time_s")) if row.get("status") == "ok" else None
    facts = channel_and_drops(rep / "emulator.log.gz")
    main_done = None
    try:    # squall-http's own record: when the main object's last byte arrived
        client = json.loads((rep / "web.client.stdout").read_text())
        main = client["objects"][0]
        if main.get("complete"):
            main_done = round((main["last_byte_us"] - client["page_start_us"]) / 1e6, 3)
    except (OSError, ValueError, KeyError, IndexError):
        pass
    return {"replication": int(rep.name[4:]), "status": row.get("status"),
            "time_s": None if time is None else round(time, 3),
            "server_timeouts": number(row.get("host.fixed.timeouts")),
            "server_fast_retransmits": number(row.get("host.fixed.fast_retransmissions")),
            "client_timeouts": number(row.get("host.mobile.timeouts")),
            "main_object_done_s": main_done,
            **facts}


def summary(reps: list[dict]) -> dict:
    ok = [r for r in reps if r["status"] == "ok"]
    return {"replications": len(reps), "timeouts": sum(r["status"] == "timeout" for r in reps),
            "median_time_s": median([r["time_s"] for r in reps]),
            "median_error_drops": median([r["error_drops"] for r in reps]),
            "median_server_timeouts": median([r["server_timeouts"] for r in ok]),
            "pages_starting_in_bad": sum(r["channel_at_start"] == "bad" for r in reps),
            "median_data_bytes_before_first_drop":
                median([r["data_bytes_before_first_drop"] for r in reps]),
            "median_first_error_drop_s": median([r["first_error_drop_s"] for r in reps
                                                 if r["first_error_drop_s"] is not None]),
            "pages_with_handshake_drops": sum(r["error_drops_handshake"] > 0 for r in reps),
            "median_main_object_done_s": median([r["main_object_done_s"] for r in reps])}


def axes_of(cell: str) -> dict[str, str]:
    return dict(part.split("-", 1) for part in cell.split("_"))


def main(argv: list[str]) -> None:
    p = argparse.ArgumentParser()
    p.add_argument("run", nargs="?")
    p.add_argument("--full-data", type=Path)
    p.add_argument("--full-raw", nargs="*", default=[])
    a = p.parse_args(argv)
    reference = {row.key: row.value for row in load_reference()}
    cells = {}
    rows: dict = {}
    if a.run:
        with open(Path(a.run) / "summary" / "runs.csv", newline="") as f:
            rows = {(r["cell"], int(r["replication"])): r for r in csv.DictReader(f)}
    for cell_dir in sorted(Path(a.run).glob("cells/*")) if a.run else []:
        ax = axes_of(cell_dir.name)
        reps = [replication(rep, rows.get((cell_dir.name, int(rep.name[4:])), {"status": "missing"}))
                for rep in sorted(cell_dir.glob("rep-??"))]
        cells[cell_dir.name] = {
            "link": ax["link"], "tcp": ax["tcp"], "http": ax["http"], "start": ax["start"],
            "reference_time_s": reference.get(Key("iip", ax["link"], ax["tcp"], "s+2s", ax["http"], "Time")),
            "reference_drops_e": reference.get(Key("iip", ax["link"], ax["tcp"], "s+2s", ax["http"], "Drops_e")),
            **summary(reps), "runs": reps}
    cases = []
    for (link, tcp, start) in sorted({(c["link"], c["tcp"], c["start"]) for c in cells.values()}):
        get = {c["http"]: c for c in cells.values()
               if (c["link"], c["tcp"], c["start"]) == (link, tcp, start)}
        if {"1.0", "1.1"} <= get.keys():
            t10, t11 = get["1.0"]["median_time_s"], get["1.1"]["median_time_s"]
            r10, r11 = get["1.0"]["reference_time_s"], get["1.1"]["reference_time_s"]
            cases.append({"link": link, "tcp": tcp, "start": start,
                          "http10_s": t10, "http11_s": t11,
                          "holds": comparable(t10) < comparable(t11),
                          "reference_http10_s": r10, "reference_http11_s": r11,
                          "reference_holds": None if None in (r10, r11) else r10 < r11})
    out = {"experiment": "validation/explanations/http11-lossy/http11-lossy.toml",
           "command": "squall run validation/explanations/http11-lossy/http11-lossy.toml "
                      "--lane-base 114 --parallel 2 --prepare-ahead",
           "reference": "IIP report tables 13-18 (r0) and 19-24 (r2): Time, the median page time; "
                        "Drops_e, the median error drops",
           "note": "a page still running at the scenario's 300 s is a timeout and counts as "
                   "longer than any in a median; data_bytes_before_first_drop: the page's "
                   "downlink payload the client had received before the link's first error drop "
                   "in either direction (the s+2s page is 10 480 B of objects plus headers)",
           "cases": cases,
           "cells": cells}
    if a.full_raw:
        with open(a.full_data, newline="") as f:
            full_rows = {(r["cell"], int(r["replication"])): r for r in csv.DictReader(f)}
        full = defaultdict(list)
        for round_run in a.full_raw:
            for rep in sorted(Path(round_run).glob("cells/link-r[02]_tcp-*_workload-s+2s_http-1.*/rep-??")):
                cell = rep.parent.name
                if (cell, int(rep.name[4:])) not in full_rows:
                    continue     # a replication the committed data does not hold
                full[cell].append(replication(rep, full_rows.get((cell, int(rep.name[4:])), {"status": "missing"})))
        out["full_validation"] = {
            "what": "the full validation's r0/r2 s+2s cells (scenarios/iip-http.toml, channel "
                    "fresh), every round's raw run: facts per replication from the emulator log",
            "cells": {cell: {**summary(sorted(reps, key=lambda r: r["replication"])),
                             "runs": sorted(reps, key=lambda r: r["replication"])}
                      for cell, reps in sorted(full.items())}}
    text = json.dumps(out, indent=1)
    # one line per replication
    text = re.sub(r'\{\n\s+"replication"(.*?)\n\s+\}',
                  lambda m: '{"replication"' + re.sub(r'\n\s+', ' ', m.group(1)) + '}', text, flags=re.S)
    print(text)


if __name__ == "__main__":
    main(sys.argv[1:])
