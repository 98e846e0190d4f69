"""Whether a replication's instruments can be trusted (docs/runner.md, "Instruments"):

- every program ended by squall's request — the HTTP servers (nginx), the emulator and the
  NPAs (`check_programs`), each capture's tcpdump (`check_captures`);
- every capture is complete: tcpdump dropped nothing, its file holds every packet tcpdump
  says it captured, at least as many packets as the emulator log saw enter the link from its
  host (`in`) and leave the link towards it (`out`), and each of those itself (joined by
  packet identity); more is fine (a packet a tc router dropped before the link is in the
  sender's capture only);
- no host answered datagrams with ICMP port unreachable: a receiver that ended early, with
  whatever exit status, did not receive what was sent to it (testbed/run/unreachable.py);
- the end-to-end timing error is within the scenario's tolerance (testbed/run/timing.py);
- no flow's programs waited long for a CPU (`check_cpu_wait`).

Each judgement leaves its numbers in status.json (`captures`, `servers`, `timing_error`,
`cpu_wait`); a failed check makes the replication `failed` with a reason naming the program or
capture and the numbers, a timing error beyond the tolerance or a starved flow makes an
otherwise ok one `degraded`.
"""
from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from analysis.metrics.capture_vs_log import (SENDS, CaptureFile, EmulatorLog, directions, matched, read_capture_file,
                                             read_log, receives, side_addresses, udp_generator_packets, unmatched)
from analysis.results.degraded import DETAILS_KEY, details_of, reason_of
from analysis.results.directory import LOG_NAME
from testbed.scenario.tolerances import DEFAULT_CPU_WAIT_SHARE, share_text
from testbed.lanes.capture import parse_tcpdump_statistics, tcpdump_messages
from testbed.processes import Ending, describe_code
from testbed.run import timing
from testbed.run.unreachable import unreachable_evidence
from testbed.scenario.flows import PacedStream


class Outcome(Protocol):
    status: str

    def fail(self, reason: str, status: str = "failed") -> None: ...


class Stopped(Protocol):
    """A capture or a server after its context ended (testbed/lanes/capture.py, http_server.py)."""
    ending: Ending | None


class StoppedCapture(Stopped, Protocol):
    """A capture after its context ended, with when squall asked it to stop (None: unknown on
    the emulator's clock, so every logged packet is expected in it)."""
    stop_requested_us: int | None


# Packets the emulator logged this shortly before a capture was asked to stop are not expected
# in it: a received one may still have been on its way (the egress path), a sent one in
# tcpdump's buffer. The emulator-engine router stops the captures before the emulator's STOP
# (which takes the TUNs), so a late retransmission can enter the link after its capture ended.
STOP_MARGIN_US = 50_000


# A flow whose programs waited for a CPU longer than the scenario's share of its run time
# (cpu_wait_tolerance), and longer than the floor, was measured on an overloaded machine: its
# times hold up to that much waiting that the link did not cause. The floor keeps a short flow's
# start-up (a few ms while the other programs start, before its first packet) from counting.
CPU_WAIT_FLOOR_US = 10_000


# --- programs ---------------------------------------------------------------------------------

def check_programs(servers: dict[str, Stopped], link_exit_codes: dict[str, int] | None,
                   outcome: Outcome, details: dict[str, Any]) -> None:
    """The HTTP servers by flow name, then the link's programs. A server's death is the cause of
    its client's error, so this runs before the flows are judged."""
    details["servers"] = {}
    for flow, server in servers.items():
        ending = server.ending
        details["servers"][flow] = {"program": "nginx", "ending": None if ending is None else asdict(ending)}
        if ending is not None and not ending.clean:
            outcome.fail(f"flow {flow}: the HTTP server (nginx) {ending.describe()}")
    # The emulator exits 0 after STOP, the NPAs on SIGTERM: anything else is a death that
    # happened after the flows (a death during them is already the reason).
    if outcome.status == "ok":
        for name, code in (link_exit_codes or {}).items():
            if code != 0:
                outcome.fail(f"the {name} ended ({describe_code(code)}), not by squall's stop")


def check_samplers(exit_codes: dict[str, int | None], outcome: Outcome, details: dict[str, Any]) -> None:
    """squall-tcp-sampler ends with 0 on squall's SIGTERM; anything else lost its series."""
    details["tcp_samplers"] = dict(exit_codes)
    for stem, code in exit_codes.items():
        if code != 0:
            outcome.fail(f"the TCP sampler at the {stem} host (squall-tcp-sampler) "
                         f"{'never ended' if code is None else 'ended (' + describe_code(code) + ')'}, "
                         f"not by squall's stop: its {stem}.tcpinfo.tsv is incomplete")


# --- captures ---------------------------------------------------------------------------------

def check_captures(work: Path, captures: dict[str, StoppedCapture], outcome: Outcome, details: dict[str, Any],
                   *, tolerance_us: int, router_between: bool, paced: dict[str, PacedStream] | None = None,
                   late_answer_ports: frozenset[int] = frozenset()) -> None:
    """Reads the log and the captures once: each capture's health, then the timing error
    (judged only while the replication is ok), paced senders' schedules included;
    `late_answer_ports`: the flows' (run/unreachable.py)."""
    log, log_error = read_log(work / LOG_NAME)
    files = {stem: read_capture_file(work / f"{stem}.pcap", stem) for stem in captures}
    details["captures"] = {}
    for stem, capture in captures.items():
        evidence, problems = _capture_health(stem, capture.ending, _read_text(work / f"{stem}.pcap.stderr"),
                                             files[stem], log, log_error, _cutoff_us(capture, log))
        details["captures"][stem] = evidence
        if problems:
            outcome.fail(f"the capture at the {stem} host ({stem}.pcap) {'; '.join(problems)}")
    if log is None:
        if outcome.status == "ok":
            outcome.fail(f"{LOG_NAME} cannot be read, so the captures cannot be checked: {log_error}")
        return
    _check_unreachable(files, log, outcome, details, late_answer_ports)
    measured = _timing_error(log, files, tolerance_us, router_between, _schedules(files, paced or {}))
    if measured is None:
        return
    details["timing_error"] = measured
    beyond = details["timing_error"]["beyond_tolerance"]
    if beyond and outcome.status == "ok":
        degrade(outcome, details, f"timing error beyond the tolerance of {tolerance_us} us: {'; '.join(beyond)}",
                "timing_tolerance")


def _check_unreachable(files: dict[str, CaptureFile], log: EmulatorLog, outcome: Outcome,
                       details: dict[str, Any], late_answer_ports: frozenset[int] = frozenset()) -> None:
    """Datagrams that arrived at a host where nothing listened (run/unreachable.py); judged
    while the replication is ok (at a timeout squall itself stops receivers that still get
    datagrams)."""
    sides = side_addresses(log)
    for stem, f in files.items():
        if f.records is None:
            continue
        evidence, problem = unreachable_evidence(f.side, f.records, f.sources, sides[f.side],
                                                 log.start_realtime_us, late_answer_ports)
        details["captures"][stem]["unreachable"] = evidence
        if problem is not None and outcome.status == "ok":
            outcome.fail(problem)


def _timing_error(log: EmulatorLog, files: dict[str, CaptureFile], tolerance_us: int,
                  router_between: bool, schedules: dict[str, np.ndarray] | None = None) -> dict[str, Any] | None:
    """timing.measure over the readable captures; None without a t = 0 or a readable capture."""
    points = {stem: matched(f, log) for stem, f in files.items() if f.records is not None}
    if log.start_realtime_us is None or not points:
        return None
    return timing.measure(points, log.start_realtime_us, tolerance_us, router_between, log.counts("lateness_us"),
                          schedules)


def _schedules(files: dict[str, CaptureFile], paced: dict[str, PacedStream]) -> dict[str, np.ndarray]:
    """Each paced flow's sender lateness from its sender's capture (flows without a readable
    capture or a generator datagram in it are left out)."""
    out = {}
    for flow, stream in paced.items():
        capture = files.get(stream.side)
        if capture is None or capture.records is None:
            continue
        ts_us, seq = udp_generator_packets(capture, stream.port)
        if len(seq):
            out[flow] = timing.schedule_lateness(ts_us, seq, stream.interval_us)
    return out


def capture_timing(log: EmulatorLog, pcaps: dict[str, Path], tolerance_us: int) -> dict[str, Any] | None:
    """The end-to-end timing error of a link without a tc router, from capture files by host
    side (fixed | mobile), as a replication measures it (for bench/emulator.py)."""
    return _timing_error(log, {side: read_capture_file(path, side) for side, path in pcaps.items()}, tolerance_us, False)


def _read_text(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def _cutoff_us(capture: StoppedCapture, log: EmulatorLog | None) -> int | None:
    """The emulator time after which the log's packets are not expected in the capture."""
    if capture.stop_requested_us is None or log is None or log.start_realtime_us is None:
        return None
    return capture.stop_requested_us - log.start_realtime_us - STOP_MARGIN_US


def _capture_health(stem: str, ending: Ending | None, stderr: str, file: CaptureFile, log: EmulatorLog | None,
                    log_error: str | None, cutoff_us: int | None = None) -> tuple[dict[str, Any], list[str]]:
    """status.json's entry of one capture (its tcpdump's ending and stderr, the file) and what
    is wrong with it (empty: nothing). Logged packets later than `cutoff_us` (emulator time)
    are not counted against the capture."""
    stats, messages = parse_tcpdump_statistics(stderr), tcpdump_messages(stderr)
    evidence: dict[str, Any] = {"file": f"{stem}.pcap", "ending": None if ending is None else asdict(ending),
                                "tcpdump": stats, "frames_in_file": file.frames if file.error is None else None}
    if messages:
        evidence["tcpdump_messages"] = messages
    problems = []
    if ending is not None and not ending.clean:
        problems.append(f"tcpdump {ending.describe()}" + (f": {' | '.join(messages)}" if messages else ""))
    if not stats:
        problems.append("tcpdump printed no statistics at its end")
    dropped = {k: v for k, v in stats.items() if k.startswith("dropped") and v}
    if dropped:
        problems.append("tcpdump lost packets: " + ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in dropped.items()))
    if file.error is not None:
        problems.append(f"cannot be read: {file.error}")
        return evidence, problems
    if "captured" in stats and file.frames < stats["captured"]:
        problems.append(f"holds {file.frames} packets, but tcpdump captured {stats['captured']}")
    if log is not None:
        counts = directions(file, log, cutoff_us)
        evidence.update(counts)
        if cutoff_us is not None:
            evidence["log_counted_until_us"] = cutoff_us
        sent, received = counts["sent"], counts["received"]
        if sent["captured"] < sent["log_in"]:
            problems.append(f"holds {sent['captured']} packets the {stem} host sent, but the emulator log saw "
                            f"{sent['log_in']} enter the link from it (`in` {SENDS[stem]})")
        if received["captured"] < received["log_out"]:
            problems.append(f"holds {received['captured']} packets the {stem} host received, but the emulator log "
                            f"sent {received['log_out']} towards it (`out` {receives(stem)})")
        if not problems:      # enough packets in all; then each logged one must be among them
            missing = unmatched(file, log, cutoff_us)
            evidence["unmatched"] = missing
            for what, n in missing.items():
                if n:
                    problems.append(f"lacks {n} of the packets the emulator log saw "
                                    + (f"enter the link from the {stem} host" if what == "sent"
                                       else f"leave the link towards the {stem} host")
                                    + " (the capture holds others instead)")
    elif log_error is not None:
        evidence["log_error"] = log_error
    return evidence, problems


# --- CPU wait ---------------------------------------------------------------------------------

def check_cpu_wait(workloads: dict[str, Any], outcome: Outcome, details: dict[str, Any],
                   share: float = DEFAULT_CPU_WAIT_SHARE) -> None:
    """Per flow, the time its programs waited for a CPU (`cpu_wait_us` of each role in
    workloads.json, the kernel's pressure stall information; testbed/cpu_wait.py) against
    the active program's run time: beyond `share` of it (the scenario's cpu_wait_tolerance) and
    CPU_WAIT_FLOOR_US an otherwise ok replication is `degraded`. Flows whose programs were not measured (lab hosts, no PSI) are left out."""
    measured: dict[str, Any] = {}
    for flow, entry in workloads.items():
        roles = {role: e for role, e in entry.items() if isinstance(e, dict) and "cpu_wait_us" in e}
        waits = {role: e["cpu_wait_us"] for role, e in roles.items() if e["cpu_wait_us"] is not None}
        run_us = next((e["run_time_us"] for e in roles.values() if e.get("run_time_us")), None)
        if not waits or run_us is None:
            continue
        total = sum(waits.values())
        measured[flow] = {"cpu_wait_us": waits, "run_time_us": run_us, "share": round(total / run_us, 6)}
        if total > max(share * run_us, CPU_WAIT_FLOOR_US) and outcome.status == "ok":
            degrade(outcome, details, f"flow {flow}: its programs waited {total / 1000:.0f} ms for a CPU "
                    f"({_who_waited(roles, waits)}), {100 * total / run_us:.1f} % of its {run_us / 1e6:.1f} s "
                    f"(the limit is {share_text(share)}, the scenario's cpu_wait_tolerance, and at least "
                    f"{CPU_WAIT_FLOOR_US // 1000} ms)", "cpu_wait_tolerance")
    details["cpu_wait"] = measured


def _who_waited(roles: dict[str, Any], waits: dict[str, int]) -> str:
    """`server iperf3 100 ms, client iperf3 10 ms`: each role's program and wait, the longest first."""
    def program(role: str) -> str:
        argv = roles[role].get("argv") or []
        return f" {Path(argv[0]).name}" if argv else ""
    return ", ".join(f"{role}{program(role)} {us / 1000:.0f} ms"
                     for role, us in sorted(waits.items(), key=lambda item: -item[1]))


def degrade(outcome: Outcome, details: dict[str, Any], cause: str, tolerance_key: str) -> None:
    """An otherwise ok replication beyond a tolerance: `degraded`, its cause kept in the details for
    the end of the run and the report (analysis/results/degraded.py)."""
    details[DETAILS_KEY] = details_of(cause, tolerance_key)
    outcome.fail(reason_of(cause, tolerance_key), status="degraded")
