"""Benchmark: capture header extraction speed (packets per second on one core).

Writes a synthetic pcap of TCP segments (Ethernet, IPv4, TCP with a timestamp option,
512-byte payload, captured with a 96-byte snap length as the testbed's captures are)
and times `analysis.read.pcap.read_capture` on it: the C
reader plus the numpy load. Also times the conversion of the records to Packet objects,
which the per-connection metrics use, and the emulator log reader (events per second).

Full analysis: a replication directory of a long synthetic TCP transfer
(bench/analysis_transfer.py: fixed.pcap and mobile.pcap of >= 1 M frames each, and the
matching emulator log) through `analyse_replication` (both captures, the log, the join,
the metrics), beside `tshark -r fixed.pcap -q -z conv,tcp` on the same file in the same
run when tshark is installed (else "tshark not installed" in the JSON).

Both are run `--repeats` times (default 3), alternating, and the medians compared (the
machine is shared); the stage breakdown is one more run, step by step.

    python -m bench.analysis [RESULTS_DIR] [--packets N] [--full-frames N] [--repeats N]
"""

from __future__ import annotations

import argparse
import json
import shutil
import struct
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from analysis.metrics.connections import tcp_connections_of
from analysis.read.emulog import COLUMNS, read_emulator_log
from analysis.gc_pause import gc_paused
from analysis.join.by_identity import join_records
from analysis.read.pcap import ip_packets, ip_records, read_capture
from analysis.metrics.tcp import default_sender, tcp_metrics
from analysis.results.layout import ReplicationRef
from analysis.aggregate.replication_values import analyse_run_replication
from bench.emulator import machine
from bench.analysis_transfer import (DPORT, ETHERNET, FIXED, MOBILE, PAYLOAD, SNAPLEN, SPORT,
                                     START_US, ip_tcp, pcap_rows, write_transfer)

DEFAULT_PACKETS = 2_000_000
DEFAULT_FULL_FRAMES = 1_000_000
FULL_REPEATS = 3
LOG_EVENTS = 300_000


def write_synthetic_pcap(path: Path, packets: int) -> int:
    """A little-endian µs pcap of `packets` frames with increasing times, IP ids and
    sequence numbers (the transfer's data segments, every 100 µs). Returns the file size."""
    i = np.arange(packets, dtype=np.int64)
    rows = pcap_rows(ETHERNET + ip_tcp(FIXED, MOBILE, SPORT, DPORT, 0x18, PAYLOAD), packets,
                     SNAPLEN, START_US + i * 100, i % 65536, (1 + i * PAYLOAD) % 2**32,
                     np.ones(packets, np.int64), len(ETHERNET))
    file_header = struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1)
    with open(path, "wb") as f:
        f.write(file_header)
        f.write(rows.tobytes())
    return len(file_header) + rows.size


def write_synthetic_log(path: Path, events: int) -> None:
    """An emulator log (format 1) of `events` packet events (in/enqueue/tx/recv/out)."""
    names = ("in", "enqueue", "tx", "recv", "out")
    lines = ["# squall-emulator event log", "# format 1", "# seed 1", "# replication 0",
             "# started yes", "# start_realtime_us 1795312345000000",
             f"# columns {' '.join(COLUMNS)}"]
    for i in range(events):
        pkt = i // len(names) + 1
        lines.append(f"{i * 10}\t{names[i % len(names)]}\tdown\t{pkt}\t552\tgood\t0\t552\t0\t"
                     f"tcp\t198.18.60.1\t40000\t198.18.61.2\t5001\t{pkt % 65536}\t"
                     f"{1 + 512 * pkt}\t1\tPA\t512\t-")
    lines.append(f"# end time_us {events * 10} reason stop")
    path.write_text("\n".join(lines) + "\n")


def measure(packets: int = DEFAULT_PACKETS, workdir: Path | None = None) -> dict[str, float]:
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        path = Path(tmp) / "synthetic.pcap"
        size = write_synthetic_pcap(path, packets)
        start = time.perf_counter()
        capture = read_capture(path)
        read_s = time.perf_counter() - start
        if len(capture.records) != packets:
            raise RuntimeError(f"{path}: read {len(capture.records)} records, wrote {packets}")
        sample = min(packets, 200_000)
        sliced = type(capture)(capture.path, capture.linktype, capture.records[:sample])
        start = time.perf_counter()
        ip_packets(sliced)
        objects_s = time.perf_counter() - start
        log_path = Path(tmp) / "emulator.log"
        write_synthetic_log(log_path, LOG_EVENTS)
        start = time.perf_counter()
        read_emulator_log(log_path)
        log_s = time.perf_counter() - start
    return {
        "packets": packets,
        "file_bytes": size,
        "read_seconds": read_s,
        "records_per_s": packets / read_s,
        "megabytes_per_s": size / read_s / 1e6,
        "packet_objects_per_s": sample / objects_s,
        "log_events_per_s": LOG_EVENTS / log_s,
    }


def _tshark(path: Path) -> dict[str, object]:
    tshark = shutil.which("tshark")
    if tshark is None:
        return {"tshark": "tshark not installed"}
    start = time.perf_counter()
    proc = subprocess.run([tshark, "-r", str(path), "-q", "-z", "conv,tcp"],
                          capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        return {"tshark": f"tshark failed with status {proc.returncode}: "
                          f"{proc.stderr.strip()[-300:]}"}
    return {"tshark": "ok", "tshark_seconds": seconds}


def _stages(rep: Path) -> dict[str, float]:
    """Where the full analysis spends its time (the steps of analyse_replication)."""
    seconds: dict[str, float] = {}

    def timed(name: str, f, *args):
        start = time.perf_counter()
        value = f(*args)
        seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - start
        return value

    log = timed("log_reader", read_emulator_log, rep / "emulator.log")
    for side in ("fixed", "mobile"):
        records = timed("capture_reader", lambda p: ip_records(read_capture(p)),
                        rep / f"{side}.pcap")
        fates = timed("join", join_records, records, log, side)
        conns = timed("connections", tcp_connections_of, records)
        if side == "fixed":
            sender = timed("connections", default_sender, conns[0])
            # from the connection's records, as analyse_replication measures it
            timed("tcp_metrics", tcp_metrics, conns[0], sender, fates)
    return seconds


def _analyse(rep: Path) -> tuple[float, dict]:
    start = time.perf_counter()
    # what `squall analyze` does for each replication
    result = analyse_run_replication(ReplicationRef("bench", 1, rep, "ok", ""))
    return time.perf_counter() - start, result


def measure_full(frames: int = DEFAULT_FULL_FRAMES, workdir: Path | None = None,
                 repeats: int = FULL_REPEATS) -> dict[str, object]:
    """The whole analysis of one replication of a long transfer, and tshark's TCP
    conversation statistics on its fixed-host capture, alternately `repeats` times each
    (the machine is shared: the medians are compared)."""
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        rep = Path(tmp)
        per_capture = write_transfer(rep, frames)
        start = time.perf_counter()
        read_capture(rep / "fixed.pcap")
        reader_s = time.perf_counter() - start
        full_runs: list[float] = []
        tshark_runs: list[float] = []
        tshark: dict[str, object] = {}
        for _ in range(repeats):
            full_s, result = _analyse(rep)
            if result.error or result.values.get("run.fate_out") != 2 * per_capture // 3:
                raise RuntimeError(f"{rep}: the synthetic transfer was not analysed as "
                                   f"written: {result.error or result.values}")
            full_runs.append(full_s)
            del result
            tshark = _tshark(rep / "fixed.pcap")
            if "tshark_seconds" in tshark:
                tshark_runs.append(float(tshark["tshark_seconds"]))  # type: ignore[arg-type]
        full_s = statistics.median(full_runs)
        numbers: dict[str, object] = {
            "full_frames_per_capture": per_capture,
            "full_capture_reader_frames_per_s": per_capture / reader_s,
            "full_analysis_seconds": full_s,
            "full_analysis_seconds_runs": full_runs,
            # every frame of both captures, joined with the log and measured
            "full_analysis_frames_per_s": 2 * per_capture / full_s,
            "full_analysis_fixed_capture_frames_per_s": per_capture / full_s,
        }
        with gc_paused():   # as analyse_run_replication runs
            numbers["full_analysis_stage_seconds"] = _stages(rep)
        numbers["tshark"] = tshark.get("tshark")
        if tshark_runs:
            tshark_s = statistics.median(tshark_runs)
            numbers["tshark_seconds"] = tshark_s
            numbers["tshark_seconds_runs"] = tshark_runs
            numbers["tshark_frames_per_s"] = per_capture / tshark_s
            # > 1: the whole analysis (two captures and the log) beat tshark on one capture
            numbers["tshark_seconds_over_full_analysis_seconds"] = tshark_s / full_s
            numbers["tshark_seconds_over_capture_reader_seconds"] = tshark_s / reader_s
    return numbers


def summary(numbers: dict[str, float]) -> list[str]:
    lines = [f"capture reader: {numbers['records_per_s']:,.0f} frames/s "
             f"({numbers['packets']:,.0f} frames, {numbers['megabytes_per_s']:,.0f} MB/s)",
             f"Packet objects: {numbers['packet_objects_per_s']:,.0f}/s",
             f"emulator log: {numbers['log_events_per_s']:,.0f} events/s"]
    if "full_analysis_seconds" in numbers:
        lines.append(f"full analysis of a {numbers['full_frames_per_capture']:,.0f}-frame "
                     f"transfer (2 captures + log): {numbers['full_analysis_seconds']:.1f} s "
                     "(median), "
                     f"{numbers['full_analysis_frames_per_s']:,.0f} frames/s")
        stages = numbers.get("full_analysis_stage_seconds") or {}
        lines.append("  stages: " + ", ".join(f"{k} {v:.1f} s" for k, v in stages.items()))
        if "tshark_seconds" in numbers:
            lines.append(f"tshark -z conv,tcp on the fixed capture: "
                         f"{numbers['tshark_seconds']:.1f} s (median; tshark / full analysis = "
                         f"{numbers['tshark_seconds_over_full_analysis_seconds']:.2f})")
        else:
            lines.append(f"tshark: {numbers.get('tshark')}")
    return lines


def run(results_dir: str | Path) -> dict[str, float]:
    """The bench registry's entry point: measures and writes analysis.json."""
    return measure_and_write(Path(results_dir), DEFAULT_PACKETS, DEFAULT_FULL_FRAMES, FULL_REPEATS)


def measure_and_write(results: Path, packets: int, full_frames: int, repeats: int) -> dict:
    # The machine and its load first: on a shared machine they explain the spread between runs.
    numbers: dict = {"machine": machine(), **measure(packets)}
    if full_frames > 0:
        numbers.update(measure_full(full_frames, repeats=repeats))
    results.mkdir(parents=True, exist_ok=True)
    (results / "analysis.json").write_text(json.dumps(numbers, indent=2) + "\n")
    return numbers


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results_dir", nargs="?", default="bench/results")
    parser.add_argument("--packets", type=int, default=DEFAULT_PACKETS)
    parser.add_argument("--full-frames", type=int, default=DEFAULT_FULL_FRAMES,
                        help="frames per capture of the full-analysis transfer (0: skip)")
    parser.add_argument("--repeats", type=int, default=FULL_REPEATS,
                        help="full analyses and tshark runs, alternating (medians reported)")
    args = parser.parse_args(argv)
    numbers = measure_and_write(Path(args.results_dir), args.packets, args.full_frames, args.repeats)
    json.dump(numbers, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
