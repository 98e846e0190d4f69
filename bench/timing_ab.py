"""Paired timing comparison of emulator builds: each variant on its own lane, all at once.

    python -m bench.timing_ab --variant before=/path/to/old/bin --variant after=build/bin \\
        --rate 10000 --rounds 8 --out bench/results/timing-ab-NAME.json

Not part of `make bench` (no run()): it answers "did this change help?" on a machine whose
load changes from one second to the next. Each round runs every variant at the same time,
one lane each (lanes $SQUALL_BENCH_LANE downwards), with the same UDP stream (128 B IP
packets through an unlimited link with 50 ms delay, as bench/emulator.py's timing rounds)
and cyclictest beside them; the variants change lanes from round to round. So every variant
sees the same machine in every round, and a difference that shows in most rounds is the
change's, not the load's. A variant is a directory of built programs (SQUALL_BIN_DIR) and
optionally the NPAs' priority (`NAME=DIR:npa=9`; default: the session's).

Per variant and round: the emulator's `# lateness_us` (p50, p99, max), its `# standby` and
`# log_writer` trailer lines, and the CPU time of the emulator (all its threads) and of the
two NPAs during the stream (from /proc/<pid>/task/*/schedstat, nanoseconds).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from analysis.read.emulog import read_emulator_log
from bench.cyclictest import Cyclictest
from bench.emulator import (BIG_BUFFER, CYCLICTEST_LIMIT_S, TIMING_DELAY_US, TIMING_PACKET, TIMING_SECONDS, _write_json, bench_lane, cpu_seconds,
                            machine, steal_ms, trailer_numbers, udp_streams)
from testbed.lanes import lane as lanes
from testbed.link.session import LinkSession
from testbed.link.simple import error_free


def parse_variant(text: str) -> dict:
    name, sep, rest = text.partition("=")
    if not sep or not name or not rest:
        raise argparse.ArgumentTypeError(f"--variant {text!r}: expected NAME=BIN_DIR[:npa=N]")
    bin_dir, _, option = rest.partition(":npa=")
    variant = {"name": name, "bin_dir": str(Path(bin_dir).resolve())}
    if option:
        variant["npa_priority"] = int(option)
    if not (Path(bin_dir) / "squall-emulator").exists():
        raise argparse.ArgumentTypeError(f"--variant {text!r}: no squall-emulator in {bin_dir}")
    return variant


def one_round(addrs: list, variants: list[dict], rate_pps: int, workdir: Path) -> dict:
    link = error_free(None, TIMING_DELAY_US, 1500, send_buffer=BIG_BUFFER, recv_buffer=BIG_BUFFER)
    steal_before = steal_ms()
    saved = os.environ.get("SQUALL_BIN_DIR")
    with ExitStack() as stack:
        sessions = []
        for a, v in zip(addrs, variants):
            os.environ["SQUALL_BIN_DIR"] = v["bin_dir"]     # program_path() reads it at start
            session = LinkSession(a, link, workdir / f"link-{v['name']}")
            session.npa_priority = v.get("npa_priority", session.npa_priority)
            sessions.append(stack.enter_context(session))
        if saved is None:
            os.environ.pop("SQUALL_BIN_DIR", None)
        else:
            os.environ["SQUALL_BIN_DIR"] = saved
        pids = [{name: s.programs.programs[name].proc.pid for name in ("emulator", "npa-router", "npa-mobile")}
                for s in sessions]
        before = [{k: cpu_seconds(p) for k, p in ps.items()} for ps in pids]
        with Cyclictest(max(s.top_priority for s in sessions), CYCLICTEST_LIMIT_S, workdir / "cyclictest",
                        interval_us=1_000_000 // rate_pps) as ct:
            time.sleep(0.2)
            streams = udp_streams(addrs, workdir / "udp", TIMING_PACKET, f"{rate_pps}pps", TIMING_SECONDS)
            after = [{k: cpu_seconds(p) for k, p in ps.items()} for ps in pids]
    cyclic = ct.result()
    out = {"cyclictest_us": {k: cyclic[k] for k in ("p50", "p99", "max")},
           "steal_ms_per_cpu": [b - a for a, b in zip(steal_before, steal_ms())],
           "loadavg_1min": round(os.getloadavg()[0], 2), "variants": {}}
    for a, v, s, stream, b, e in zip(addrs, variants, sessions, streams, before, after):
        log = read_emulator_log(s.result.log_path)
        out["variants"][v["name"]] = {
            "lane": a.lane, "lateness_us": log.counts("lateness_us"),
            "standby": trailer_numbers(s.result.log_path, "standby"),
            "log_writer": trailer_numbers(s.result.log_path, "log_writer"),
            "emulator_cpu_s": round(e["emulator"] - b["emulator"], 3),
            "npas_cpu_s": round(e["npa-router"] - b["npa-router"] + e["npa-mobile"] - b["npa-mobile"], 3),
            "sent": stream["sent"], "received": stream["received"], "lost": stream["lost"]}
    return out


def summarise(rounds: list[dict], names: list[str]) -> dict:
    def spread(values: list) -> list:
        return [min(values), max(values)] if values else []
    summary = {}
    for name in names:
        late = [r["variants"][name]["lateness_us"] for r in rounds]
        summary[name] = {q: spread([x[q] for x in late]) for q in ("p50", "p99", "max")}
        summary[name]["emulator_cpu_s"] = spread([r["variants"][name]["emulator_cpu_s"] for r in rounds])
        summary[name]["p99_over_cyclictest"] = spread(
            [round(r["variants"][name]["lateness_us"]["p99"] / r["cyclictest_us"]["p99"], 2) for r in rounds])
    first = names[0]
    for name in names[1:]:
        summary[name][f"rounds_p99_below_{first}"] = sum(
            r["variants"][name]["lateness_us"]["p99"] < r["variants"][first]["lateness_us"]["p99"] for r in rounds)
    summary["cyclictest"] = {q: spread([r["cyclictest_us"][q] for r in rounds]) for q in ("p50", "p99", "max")}
    return summary


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.timing_ab", description=__doc__.splitlines()[0])
    p.add_argument("--variant", action="append", type=parse_variant, required=True,
                   help="NAME=BIN_DIR[:npa=N], at least two")
    p.add_argument("--rate", type=int, default=10_000, help="packets/s per lane (default 10000)")
    p.add_argument("--rounds", type=int, default=8)
    p.add_argument("--out", type=Path, required=True, help="results file (JSON)")
    p.add_argument("--note", default="", help="what is compared, for the results file")
    args = p.parse_args(argv)
    variants = args.variant
    if len(variants) < 2 or len({v["name"] for v in variants}) != len(variants):
        p.error("give at least two --variant with different names")
    first = bench_lane()
    # The command with each variant's directory replaced by its name: where a build was put is
    # nothing a reader of the results needs (the note says what each variant is).
    command = " ".join(["python -m bench.timing_ab", f"--rate {args.rate}", f"--rounds {args.rounds}",
                        *(f"--variant {v['name']}=<{v['name']}>" + (f":npa={v['npa_priority']}" if "npa_priority" in v
                                                                    else "") for v in variants)])
    numbers = {"benchmark": "timing_ab", "note": args.note, "machine": machine(), "command": command,
               "rate_pps": args.rate, "seconds": TIMING_SECONDS, "packet_ip_bytes": TIMING_PACKET,
               "delay_us": TIMING_DELAY_US,
               "variants": [{k: v for k, v in variant.items() if k != "bin_dir"} for variant in variants],
               "rounds": []}
    lanes.cleanup_leftovers()
    with ExitStack() as stack, tempfile.TemporaryDirectory(prefix="squall-timing-ab-") as tmp:
        addrs = [stack.enter_context(lanes.lane_up(first - i)) for i in range(len(variants))]
        for r in range(args.rounds):
            order = variants[r % len(variants):] + variants[:r % len(variants)]   # lanes rotate
            result = one_round(addrs, order, args.rate, Path(tmp) / f"round-{r}")
            numbers["rounds"].append(result)
            print(json.dumps({"round": r, "cyclictest_p99": result["cyclictest_us"]["p99"],
                              **{k: v["lateness_us"] for k, v in result["variants"].items()}}), flush=True)
    numbers["summary"] = summarise(numbers["rounds"], [v["name"] for v in variants])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    _write_json(args.out, numbers)
    print(json.dumps(numbers["summary"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
