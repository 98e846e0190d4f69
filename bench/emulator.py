"""Emulator: delivery timing accuracy, and relay capacity beside a naive TUN-to-TUN relay.

Both through a real lane ($SQUALL_BENCH_LANE, default 59), with UDP traffic from the
fixed host (squall-udp) to the mobile host:

- timing: lateness of delivered packets (the log trailer's `# lateness_us`: actual
  minus scheduled delivery) at 1 000 and 10 000 packets/s through an unlimited-rate
  link with 50 ms delay. Target: p99 <= 100 µs at 10 000 packets/s.
- capacity: packets/s received at the mobile host under a saturating sender, for 64 B
  and 1400 B IP packets, through emulator + two NPAs (unlimited link, no delay) and
  through `squall-naive-relay` (one process copying TUN to TUN); their ratio.
  All programs run at normal priority here: under SCHED_FIFO the relays would starve
  the sender and receiver, and the numbers would measure that instead.
  For each relaying program: CPU time and wakeups (voluntary context switches)
  during the stream, per received packet (a program that never sleeps because it
  cannot keep up shows almost no wakeups).
"""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from analysis.emulog import read_emulator_log
from testbed import lane as lanes
from testbed.addresses import LaneAddresses
from testbed.link_session import REALTIME_PRIORITY, REPO_ROOT, LinkSession, program_path
from testbed.measure import summary as program_summary
from testbed.processes import ProgramGroup
from testbed.simple_link import error_free

RATES_PPS = (1_000, 10_000)
TIMING_DELAY_US = 50_000
TIMING_SECONDS = 5
TIMING_PACKET = 128                    # IP bytes (100 B UDP payload)
CAPACITY_SIZES = (64, 1400)           # IP bytes
CAPACITY_SECONDS = 3
UDP_IP_HEADERS = 28
LATENESS_TARGET_P99_US = 100
BIG_BUFFER = 64 * 1024 * 1024
PORT = 6001


def bench_lane() -> int:
    # 59: the last of the lanes reserved for performance work (50-59), clear of the tests' lanes.
    return int(os.environ.get("SQUALL_BENCH_LANE", "59"))


def machine() -> dict:
    return {"nproc": os.cpu_count(), "kernel": platform.release(), "machine": platform.machine(),
            "cpu": _cpu_model(), "python": platform.python_version(), "git_rev": _git_rev(),
            "loadavg_at_start": [round(x, 2) for x in os.getloadavg()]}


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _git_rev() -> str:
    proc = subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True)
    return proc.stdout.strip() or "unknown"


# --- CPU and wakeups of the relaying programs ---------------------------------------
@dataclass(frozen=True)
class Usage:
    cpu_s: float          # user + system
    wakeups: int          # voluntary context switches: the process slept and was woken


def usage(pid: int) -> Usage | None:
    """The process's CPU time and voluntary context switches so far (None if it is gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()     # after "pid (comm)"; utime is field 14
    ticks = int(fields[11]) + int(fields[12])
    switches = next(int(line.split()[1]) for line in status.splitlines()
                    if line.startswith("voluntary_ctxt_switches"))
    return Usage(ticks / os.sysconf("SC_CLK_TCK"), switches)


def usage_report(before: dict[str, Usage | None], after: dict[str, Usage | None], packets: int) -> dict:
    """Per program: CPU seconds, wakeups, and both per received packet."""
    report = {}
    for name, b in before.items():
        a = after.get(name)
        if a is None or b is None:
            continue
        cpu, wakeups = a.cpu_s - b.cpu_s, a.wakeups - b.wakeups
        report[name] = {"cpu_s": round(cpu, 3), "wakeups": wakeups,
                        "cpu_us_per_packet": round(cpu * 1e6 / packets, 2) if packets else None,
                        "packets_per_wakeup": round(packets / wakeups, 1) if wakeups else None}
    return report


def snapshot(pids: dict[str, int]) -> dict[str, Usage | None]:
    return {name: usage(pid) for name, pid in pids.items()}


# --- one UDP stream through the lane ----------------------------------------------------
def udp_stream(addr: LaneAddresses, workdir: Path, size_ip: int, rate: str, seconds: float) -> dict:
    """squall-udp from the fixed host to the mobile host; the receiver's summary."""
    udp = str(program_path("squall-udp"))
    target = f"{addr.mobile_host}:{PORT}"
    with ProgramGroup(workdir) as group:
        receiver = group.start("udp-recv", addr.ns.mobile,
                               [udp, "recv", "--listen", target, "--idle-timeout", "1s"])
        group.wait_ready("udp-recv", "listening", 5)
        sender = group.start("udp-send", addr.ns.fixed,
                             [udp, "send", "--connect", target, "--size", str(size_ip - UDP_IP_HEADERS),
                              "--rate", rate, "--duration", f"{seconds}s"])
        sent = program_summary(sender, group.wait_exit("udp-send", seconds + 30))
        received = program_summary(receiver, group.wait_exit("udp-recv", 30))
    return {"sent": sent["packets"], "send_errors": sent.get("send_errors", 0),
            "received": received["received"], "lost": received["lost"],
            "packets_per_s": received["packets_per_s"]}


# --- timing accuracy ----------------------------------------------------------------
def timing(addr: LaneAddresses, workdir: Path, rate_pps: int) -> dict:
    link = error_free(None, TIMING_DELAY_US, 1500, send_buffer=BIG_BUFFER, recv_buffer=BIG_BUFFER)
    with LinkSession(addr, link, workdir / "link") as session:
        stream = udp_stream(addr, workdir / "udp", TIMING_PACKET, f"{rate_pps}pps", TIMING_SECONDS)
    log = read_emulator_log(session.result.log_path)
    if log.cut_short:
        raise RuntimeError(f"{session.result.log_path} has no trailer: the emulator did not stop cleanly")
    late = log.counts("lateness_us")
    # Other work on the machine (other lanes' programs, also under SCHED_FIFO, builds)
    # is what makes p99 vary between runs: record how busy it was.
    return {"rate_pps": rate_pps, "packet_ip_bytes": TIMING_PACKET, "delay_us": TIMING_DELAY_US,
            "seconds": TIMING_SECONDS, "lateness_us": late, **stream,
            "loadavg_1min_after": round(os.getloadavg()[0], 2)}


# --- capacity -----------------------------------------------------------------------
def capacity_emulator(addr: LaneAddresses, workdir: Path, size_ip: int) -> dict:
    link = error_free(None, 0, 1500, send_buffer=BIG_BUFFER, recv_buffer=BIG_BUFFER)
    with LinkSession(addr, link, workdir / "link", priority=0) as session:
        return measured_stream(addr, workdir, size_ip, session.programs)


def capacity_naive(addr: LaneAddresses, workdir: Path, size_ip: int) -> dict:
    relay = [str(program_path("squall-naive-relay")),
             "--netns-a", addr.ns.emu, "--address-a", addr.emu_wireless.cidr,
             "--peer-a", addr.mobile_wireless.address,
             "--netns-b", addr.ns.mobile, "--address-b", addr.mobile_wireless.cidr,
             "--peer-b", addr.emu_wireless.address, "--route-b", addr.fixed_net, "--mtu", "1500"]
    with ProgramGroup(workdir / "relay") as group:
        group.start("naive-relay", None, relay)
        group.wait_ready("naive-relay", "ready", 10)
        return measured_stream(addr, workdir, size_ip, group)


def measured_stream(addr: LaneAddresses, workdir: Path, size_ip: int, relays: ProgramGroup) -> dict:
    """A saturating stream, with the CPU time and wakeups of the relaying programs."""
    pids = {name: p.proc.pid for name, p in relays.programs.items()}
    before = snapshot(pids)
    stream = udp_stream(addr, workdir / "udp", size_ip, "max", CAPACITY_SECONDS)
    return {**stream, "programs": usage_report(before, snapshot(pids), stream["received"])}


def capacity(addr: LaneAddresses, workdir: Path, size_ip: int) -> dict:
    emu = capacity_emulator(addr, workdir / f"emulator-{size_ip}", size_ip)
    naive = capacity_naive(addr, workdir / f"naive-{size_ip}", size_ip)
    for r in (emu, naive):
        r["gbit_per_s"] = r["packets_per_s"] * size_ip * 8 / 1e9
    return {"packet_ip_bytes": size_ip, "seconds": CAPACITY_SECONDS, "emulator": emu, "naive_relay": naive,
            "ratio": emu["packets_per_s"] / naive["packets_per_s"] if naive["packets_per_s"] else None}


# --- registry entry -----------------------------------------------------------------
def run(results_dir: Path) -> dict:
    results_dir = Path(results_dir)
    with tempfile.TemporaryDirectory(prefix="squall-bench-emulator-") as tmp:
        numbers = measure_all(Path(tmp))
    _write_json(results_dir / "emulator.json", numbers)
    return numbers


def measure_all(workdir: Path) -> dict:
    number = bench_lane()
    lanes.cleanup_leftovers()
    numbers: dict = {"benchmark": "emulator", "machine": machine(),
                     "command": _command(),
                     "lane": number,
                     "scheduling": {"timing": f"emulator and NPAs SCHED_FIFO {REALTIME_PRIORITY}"
                                    if REALTIME_PRIORITY > 0 else "normal",
                                    "capacity": "normal (all programs)"},
                     "timing": [], "capacity": []}
    started = time.time()
    with lanes.lane_up(number) as addr:
        for rate in RATES_PPS:
            numbers["timing"].append(timing(addr, workdir / f"timing-{rate}", rate))
        for size in CAPACITY_SIZES:
            numbers["capacity"].append(capacity(addr, workdir, size))
    p99 = next(t["lateness_us"].get("p99") for t in numbers["timing"] if t["rate_pps"] == 10_000)
    numbers["target"] = {"lateness_p99_us_at_10000_pps": LATENESS_TARGET_P99_US,
                         "met": p99 is not None and p99 <= LATENESS_TARGET_P99_US}
    numbers["seconds"] = round(time.time() - started, 1)
    return numbers


def _command() -> str:
    if sys.argv and sys.argv[0].endswith("run.py"):
        return " ".join(["python -m bench.run", *sys.argv[1:]])
    return " ".join(sys.argv)


def _write_json(path: Path, numbers: dict) -> None:
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(numbers, indent=2) + "\n")
    tmp.replace(path)


def summary(numbers: dict) -> list[str]:
    m = numbers["machine"]
    lines = [f"machine: {m['nproc']} CPUs ({m['cpu']}), kernel {m['kernel']}"]
    for t in numbers["timing"]:
        late = t["lateness_us"]
        lines.append(f"timing {t['rate_pps']:>6} pkt/s: lateness p50 {late.get('p50')} µs, p99 {late.get('p99')} µs, "
                     f"max {late.get('max')} µs over {late.get('n')} packets ({t['lost']} lost)")
    target = numbers["target"]
    lines.append(f"target p99 <= {target['lateness_p99_us_at_10000_pps']} µs at 10 000 pkt/s: "
                 f"{'met' if target['met'] else 'NOT met'}")
    for c in numbers["capacity"]:
        e, n = c["emulator"], c["naive_relay"]
        ratio = f"{c['ratio']:.2f}" if c["ratio"] is not None else "n/a"
        lines.append(f"capacity {c['packet_ip_bytes']:>4} B: emulator+NPAs {e['packets_per_s']:,.0f} pkt/s "
                     f"({e['gbit_per_s']:.3f} Gbit/s), naive relay {n['packets_per_s']:,.0f} pkt/s "
                     f"({n['gbit_per_s']:.3f} Gbit/s), ratio {ratio}")
        for name, u in {**e.get("programs", {}), **n.get("programs", {})}.items():
            lines.append(f"    {name}: {u['cpu_us_per_packet']} µs CPU and {u['packets_per_wakeup']} "
                         f"packets per wakeup")
    return lines
