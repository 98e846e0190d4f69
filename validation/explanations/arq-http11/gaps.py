"""ACK gaps against the RTO in effect: why IIP's r4 HTTP/1.1 long pages have no spurious RTO.

    PYTHONPATH=. python validation/explanations/arq-http11/gaps.py RUN_DIR... [--cells GLOB]
        [--out results.json --key NAME]

Linux re-arms the retransmission timer at every ACK that acknowledges new data (and when it
sends data with nothing outstanding), so a timeout fires only when no such ACK arrives for a
whole RTO. For every server -> client connection of every replication of the RUN_DIRs'
cells, this reads the fixed host's capture with tshark (not squall's capture reader) and
finds each "ACK gap": an interval during which sequence space (data, SYN, FIN) was outstanding
and no ACK of new sequence space arrived. It ends at the next such ACK (or the end of the
capture). Each gap is set beside the RTO the timer was armed with at its start, from the
kernel's own tcp_info (`fixed.tcpinfo.tsv`, 50 ms samples): the first sample of the
connection inside the gap (the ACK that opened the gap had already updated the RTO), else the
last one before it; a gap opened by the SYN-ACK has the kernel's initial 1 s (the request
socket is not sampled). A gap longer than its RTO is one in which the timer must have fired.

squall's own count is set beside it: the RTO events of the connection
(analysis.metrics.per_connection.analyse_replication's retransmission list, kind "rto"), the ones whose
segment had been delivered ("spurious" in analysis/metrics/tcp.py) and, per replication, the
ones that fired too early (validation.rto_causes: the verdict's count), and the kernel's own
count of detected spurious RTOs (summary/runs.csv `host.fixed.spurious_rtos.kernel`, when the
run was analysed). Each RTO event is matched with the gap it lies in. Independently of squall,
each gap longer than its RTO gets a cause from the two captures alone (`timeout_cause`, the
classes of validation/rto_causes.py), so the too-early timeouts are counted twice.

Results per cell group (link, page, HTTP version; all TCP variants and runs together), in
milliseconds; "_at" names the replication (run/cell/rep) of a longest gap or smallest margin.
"""
from __future__ import annotations

import argparse
import bisect
import csv
import fnmatch
import json
import statistics
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

from analysis.metrics.per_connection import analyse_replication
from analysis.results.stored import open_text, stored
from analysis.metrics.tcp import RTO
from validation.rto_causes import TOO_EARLY, replication_causes

SEQ_MOD = 1 << 32
SERVER_PORT = 8080
SYN, FIN, ACK = 0x02, 0x01, 0x10
INITIAL_RTO_US = 1_000_000      # TCP_TIMEOUT_INIT: the SYN-ACK's timer
FIELDS = ("frame.time_epoch", "ip.src", "tcp.srcport", "ip.dst", "tcp.dstport", "tcp.seq_raw",
          "tcp.ack_raw", "tcp.len", "tcp.flags", "tcp.options.timestamp.tsval")


def packets(pcap: Path) -> list[tuple]:
    """(t µs, src port, dst port, seq, ack, len, flags, TSval) of each TCP packet, by tshark."""
    argv = ["tshark", "-n", "-r", str(pcap), "-Y", "tcp", "-T", "fields", "-E", "separator=\t",
            "-o", "tcp.analyze_sequence_numbers:FALSE"]
    for f in FIELDS:
        argv += ["-e", f]
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        t, _src, sp, _dst, dp, seq, ack, ln, fl, tsval = line.split("\t")
        sec, _, frac = t.partition(".")
        rows.append((int(sec) * 1_000_000 + int((frac + "000000")[:6]), int(sp), int(dp), int(seq),
                     int(ack or 0), int(ln or 0), int(fl, 16), int(tsval.split(",")[0] or 0)))
    return rows


def tcpinfo(path: Path) -> dict[int, list[tuple[int, int, int]]]:
    """Per client port: (t µs on the capture's clock, rto µs, srtt µs, unacked segments) of
    each sample of an established server connection."""
    t0, out = 0, defaultdict(list)
    with open_text(path) as f:
        for line in f:
            if line.startswith("# t0_realtime_us"):
                t0 = int(line.split()[-1])
            if line.startswith("#") or line.startswith("time_us"):
                continue
            c = line.rstrip("\n").split("\t")
            if len(c) < 12 or int(c[2]) != SERVER_PORT or c[11] in ("", "0"):     # "": no tcp_info
                continue
            out[int(c[4])].append((t0 + int(c[0]), int(c[11]), int(c[9]), int(c[13])))
    return out


def gaps(pkts: list[tuple], cport: int) -> list[dict]:
    """The ACK gaps of the server's data to client port cport (see the module's doc)."""
    isn = next((p[3] for p in pkts if p[1] == SERVER_PORT and p[2] == cport and p[6] & SYN), None)
    if isn is None:
        return []
    una = nxt = 0               # relative to the ISN; the SYN is 0
    found, start, by_syn = [], None, False
    for t, sp, dp, seq, ack, ln, fl, _ in pkts:
        if sp == SERVER_PORT and dp == cport:
            rel = (seq - isn) % SEQ_MOD
            end = rel + ln + bool(fl & SYN) + bool(fl & FIN)
            if end > nxt:
                if una >= nxt:                      # nothing was outstanding: the timer is armed now
                    start, by_syn, head = t, bool(fl & SYN), una
                nxt = end
        elif sp == cport and dp == SERVER_PORT and fl & ACK:
            rel = (ack - isn) % SEQ_MOD
            if una < rel <= nxt:                    # new sequence space acknowledged
                if start is not None:
                    found.append({"start": start, "end": t, "syn": by_syn, "head": (isn + head) % SEQ_MOD})
                una = rel
                start, by_syn, head = (t, False, una) if una < nxt else (None, False, una)
    if start is not None:
        found.append({"start": start, "end": pkts[-1][0], "syn": by_syn, "open": True,
                      "head": (isn + head) % SEQ_MOD})
    return found


def timeout_cause(fixed: list[tuple], mobile: list[tuple], cport: int, g: dict) -> str | None:
    """What the two captures say of the timeout in a gap longer than its RTO, as
    validation/rto_causes.py's classes but from tshark alone: the resend of the gap's oldest
    outstanding segment at the fixed host; its original (the copy sent before, told from the
    resend by its TSval) at the mobile host; the mobile host's ACKs covering it (an ACK is
    known at the fixed host by its ack number and TSval). None: no resend in the gap."""
    head = g["head"]
    mine = [p for p in fixed if p[1] == SERVER_PORT and p[2] == cport and p[3] == head]
    retx = next((p for p in mine if g["start"] < p[0] <= g["end"] and
                 any(q[0] < p[0] for q in mine)), None)
    if retx is None:
        return None
    orig = [q for q in mine if q[0] < retx[0]][-1]
    end = (head + orig[5] + bool(orig[6] & SYN) + bool(orig[6] & FIN)) % SEQ_MOD
    arrived = next((p[0] for p in mobile if p[1] == SERVER_PORT and p[2] == cport and p[3] == head
                    and p[7] == orig[7]), None)
    if arrived is None:
        return "original lost"
    if arrived > retx[0]:
        return "data late"
    covers = lambda p: p[6] & ACK and (p[4] - end) % SEQ_MOD < SEQ_MOD // 2    # noqa: E731
    sent = {(p[4], p[7]) for p in mobile if p[1] == cport and p[2] == SERVER_PORT and covers(p)
            and p[0] <= retx[0]}
    if not sent:
        return "receiver late"
    came = [p[0] for p in fixed if p[1] == cport and p[2] == SERVER_PORT and (p[4], p[7]) in sent]
    if came and min(came) <= retx[0]:
        return "acked before"
    return "ack in flight" if came else "ack lost"


def rto_armed(samples: list[tuple[int, int, int, int]], start: int, end: int) -> tuple[int | None, int | None]:
    """(rto µs, srtt µs) the timer was armed with at a gap's start: the first sample in the gap,
    else the last one before it."""
    times = [s[0] for s in samples]
    i = bisect.bisect_left(times, start)
    if i < len(samples) and samples[i][0] < end:
        return samples[i][1], samples[i][2]
    if i > 0:
        return samples[i - 1][1], samples[i - 1][2]
    return None, None


def replication(rep: Path) -> dict:
    pkts = packets(stored(rep, "fixed.pcap"))
    mobile = packets(stored(rep, "mobile.pcap"))
    info = tcpinfo(stored(rep, "fixed.tcpinfo.tsv"))
    metrics = analyse_replication(rep)
    rtos = {m.client[1]: [(x.ts_us, bool(x.unnecessary)) for x in m.retransmission_list if x.kind == RTO]
            for side, m in metrics.tcp if side == "fixed" and m.server[1] == SERVER_PORT}
    causes = replication_causes(rep)
    flight = sorted(x[3] for samples in info.values() for x in samples if x[3] > 0)
    out = {"connections": len(rtos), "gaps": [], "rtos": 0, "rtos_unnecessary": 0,
           "rtos_too_early": sum(causes.get(c, 0) for c in TOO_EARLY),
           "rtos_in_exceeded_gap": 0, "rtos_unmatched": [],
           "rtos_syn": 0, "rtos_unnecessary_syn": 0,
           "in_flight": (flight[len(flight) // 2], flight[-1]) if flight else None}
    for cport, events in rtos.items():
        conn_gaps = gaps(pkts, cport)
        for g in conn_gaps:
            if g["syn"]:
                g["rto"], g["srtt"] = INITIAL_RTO_US, None
            else:
                g["rto"], g["srtt"] = rto_armed(info.get(cport, []), g["start"], g["end"])
            g["len"] = g["end"] - g["start"]
            g["exceeded"] = g["rto"] is not None and g["len"] > g["rto"]
            g["rto_events"] = 0
            g["cause"] = timeout_cause(pkts, mobile, cport, g) if g["exceeded"] else None
        for ts, unnecessary in events:
            out["rtos"] += 1
            out["rtos_unnecessary"] += unnecessary
            g = next((g for g in conn_gaps if g["start"] < ts <= g["end"]), None)
            if g is None:
                out["rtos_unmatched"].append(ts)
                continue
            g["rto_events"] += 1
            out["rtos_syn"] += g["syn"]
            out["rtos_unnecessary_syn"] += g["syn"] and unnecessary
            out["rtos_in_exceeded_gap"] += g["exceeded"]
            g.setdefault("first_rto_after", ts - g["start"])
        out["gaps"] += [{k: g[k] for k in ("len", "rto", "srtt", "syn", "exceeded", "rto_events", "cause")}
                        | ({"first_rto_after": g["first_rto_after"]} if "first_rto_after" in g else {})
                        for g in conn_gaps if not g.get("open")]
    return out


def group_of(cell: str) -> tuple[str, ...]:
    """A cell's group: the values of its axes except the TCP variant (link, page, HTTP version
    for iip-http; page and window for arq-http11.toml)."""
    return tuple(v for k, v in (p.split("-", 1) for p in cell.split("_")) if k != "tcp")


def summarise(reps: list[tuple[str, str, dict]]) -> dict:
    """One cell group's numbers over its replications (label, cell, replication result):
    the data gaps (opened by data or an ACK, the RTO from tcp_info) and the SYN-ACK gaps
    (the initial 1 s RTO) apart, then squall's RTO events and where they lie."""
    out = {"replications": len(reps), "connections": sum(r["connections"] for _, _, r in reps)}
    for kind, syn in (("data", False), ("syn_ack", True)):
        out[kind] = _gap_summary([(g, label) for label, _, r in reps for g in r["gaps"]
                                  if g["syn"] == syn and g["rto"] is not None])
    out["squall"] = {
        "rto_events": sum(r["rtos"] for _, _, r in reps),
        "rto_events_on_syn_ack": sum(r["rtos_syn"] for _, _, r in reps),
        "rto_events_in_a_gap_longer_than_its_rto": sum(r["rtos_in_exceeded_gap"] for _, _, r in reps),
        "rto_events_outside_any_gap": sum(len(r["rtos_unmatched"]) for _, _, r in reps),
        "spurious_rtos": sum(r["rtos_unnecessary"] for _, _, r in reps),
        "spurious_rtos_on_syn_ack": sum(r["rtos_unnecessary_syn"] for _, _, r in reps),
        "rto_too_early": sum(r["rtos_too_early"] for _, _, r in reps),
        "rto_too_early_per_run": round(sum(r["rtos_too_early"] for _, _, r in reps) / len(reps), 2),
    }
    pages = [r["page_s"] for _, _, r in reps if r.get("page_s") is not None]
    kernel = [r["kernel_spurious"] for _, _, r in reps if r.get("kernel_spurious") is not None]
    flights = [r["in_flight"] for _, _, r in reps if r["in_flight"]]
    out["segments_in_flight"] = ({"median_of_runs": statistics.median(f[0] for f in flights),
                                  "max": max(f[1] for f in flights)} if flights else None)
    out["page_time_s_median"] = round(statistics.median(pages), 2) if pages else None
    out["squall"]["kernel_spurious_rtos_per_run"] = round(sum(kernel) / len(kernel), 2) if kernel else None
    early = sum(g["cause"] in TOO_EARLY for _, _, r in reps for g in r["gaps"])
    out["tshark"] = {"timeouts_too_early": early, "timeouts_too_early_per_run": round(early / len(reps), 2)}
    return out


def _gap_summary(gs: list[tuple[dict, str]]) -> dict:
    if not gs:
        return {"gaps": 0}
    ms = lambda us: None if us is None else round(us / 1000)    # noqa: E731
    longest, where = max(gs, key=lambda x: x[0]["len"])
    margin, mwhere = min(gs, key=lambda x: x[0]["rto"] - x[0]["len"])
    long_gaps = [g for g, _ in gs if g["len"] >= 1_000_000]
    exceeded = [g for g, _ in gs if g["exceeded"]]
    # the timer's lateness: first RTO event in a gap − (gap start + armed RTO)
    lags = [g["first_rto_after"] - g["rto"] for g in exceeded if "first_rto_after" in g]
    return {
        "gaps": len(gs),
        "longest_ms": ms(longest["len"]), "longest_rto_ms": ms(longest["rto"]),
        "longest_srtt_ms": ms(longest["srtt"]), "longest_at": where,
        "smallest_margin_ms": ms(margin["rto"] - margin["len"]),
        "smallest_margin_gap_ms": ms(margin["len"]), "smallest_margin_rto_ms": ms(margin["rto"]),
        "smallest_margin_at": mwhere,
        "gaps_over_1s": len(long_gaps),
        "gaps_over_1s_median_ms": ms(statistics.median(g["len"] for g in long_gaps)) if long_gaps else None,
        "gaps_over_1s_median_rto_ms": ms(statistics.median(g["rto"] for g in long_gaps)) if long_gaps else None,
        "longer_than_rto": len(exceeded),
        "longer_than_rto_with_rto_event": sum(bool(g["rto_events"]) for g in exceeded),
        "longer_than_rto_by_tshark_cause": dict(sorted(Counter(str(g["cause"]) for g in exceeded).items())),
        "rto_event_lateness_ms": [ms(min(lags)), ms(max(lags))] if lags else None,
    }


def run_rows(run: Path) -> dict[tuple[str, int], dict]:
    """summary/runs.csv of a run (squall's analysis), by cell and replication; {} without it."""
    path = run / "summary" / "runs.csv"
    if not path.exists():
        return {}
    with open(path, newline="") as f:
        return {(r["cell"], int(r["replication"])): r for r in csv.DictReader(f)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("runs", type=Path, nargs="+")
    p.add_argument("--cells", default="link-r[04]_*", help="glob on cell ids")
    p.add_argument("--out", type=Path, help="JSON file; the result goes under --key, other keys are kept")
    p.add_argument("--key", default="measurement")
    args = p.parse_args(argv)
    groups: dict[tuple, list] = defaultdict(list)
    for run in args.runs:
        summary = run_rows(run)
        for rep in sorted(run.glob("cells/*/rep-*")):
            cell = rep.parent.name
            if rep.name.endswith(".partial") or not fnmatch.fnmatch(cell, args.cells):
                continue
            label = f"{run.name}/{cell}/{rep.name}"
            r = replication(rep)
            row = summary.get((cell, int(rep.name.split("-")[1])), {})
            r["page_s"] = float(row["web.response_time_s"]) if row.get("web.response_time_s") else None
            r["kernel_spurious"] = (float(row["host.fixed.spurious_rtos.kernel"])
                                    if row.get("host.fixed.spurious_rtos.kernel") else None)
            groups[group_of(cell)].append((label, cell, r))
            print(label, file=sys.stderr)
    result = {"runs": [r.name for r in args.runs], "cells": args.cells,
              "groups": {" ".join(k): summarise(v) for k, v in sorted(groups.items())}}
    if args.out:
        whole = json.loads(args.out.read_text()) if args.out.exists() else {}
        whole[args.key] = result
        args.out.write_text(json.dumps(whole, indent=1) + "\n")
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
