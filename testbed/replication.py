"""One replication of one cell on a testbed (DESIGN.md §3.4), written into a work directory.

Order (docs/runner.md): link up (emulator + NPAs, not started; an `engine = "emulator"`
router goes into the emulator's configuration) → TCP profile (tcp.json) →
captures at the fixed host (fixed.pcap) and the mobile host (mobile.pcap) → tc router →
servers and receivers → START (t = 0) → queue monitor → flows at their offsets → wait for
every flow or the timeout → stop everything (STOP: the emulator log gets its trailer) →
workloads.json and the verdict. The caller (testbed/runner.py) owns the run directory:
it gets the work directory from RunDir.begin and hands the Status to RunDir.finish.

Only the `Testbed`/`Host` protocols of testbed/hosts.py are used: no namespace here.
"""
from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from . import tcp_profile
from .flows import BulkFlow, Flow, HttpFlow, UdpFlow
from .hosts import Host, Link, Testbed
from .link import DirectionConfig, LinkConfig
from .processes import Program
from .results import Status, utc_stamp, write_json_atomic
from .router_session import RouterRun
from .scenario import ResolvedCell

POLL_S = 0.05
READY_TIMEOUT_S = 10.0
STOP_GRACE_S = 3.0
DRAIN_MARGIN_S = 0.2
STDERR_TAIL = 400
PORT_BASE = {"http": 8080, "bulk": 5001, "udp": 6001}
WORKLOADS_FILE = "workloads.json"


class Interrupted(Exception):
    """The run is being stopped (SIGINT/SIGTERM): the replication is abandoned, not recorded."""


class ReplicationFailed(Exception):
    """Something the replication needs did not work; the message names the program and why."""


@dataclass(frozen=True)
class Job:
    cell: ResolvedCell
    replication: int
    seed: int
    timeout_us: int


@dataclass
class RunningFlow:
    """A flow's programs: `active` (client or sender) decides when it ends."""
    flow: Flow
    port: int
    server_host: Host
    client_host: Host
    active: Program | None = None
    passive: Program | None = None          # bulk/udp receiver
    ended_at: float | None = None           # monotonic time the active program exited
    passive_stopped: bool = False

    @property
    def roles(self) -> tuple[str, str]:
        return {"http": ("client", "server"), "bulk": ("sender", "receiver"),
                "udp": ("sender", "receiver")}[self.flow.kind]

    def finished(self) -> bool:
        return self.ended_at is not None and (self.passive is None or self.passive.proc.poll() is not None)


@dataclass
class Outcome:
    status: str = "ok"
    reasons: list[str] = field(default_factory=list)

    def fail(self, reason: str, status: str = "failed") -> None:
        """The first failure decides the status; later reasons are kept beside it."""
        if self.status == "ok":
            self.status = status
        self.reasons.append(reason)


def run(testbed: Testbed, job: Job, work: Path, stop: threading.Event) -> Status:
    """Runs the replication in `work`; returns its Status. Raises Interrupted when `stop` is set."""
    return _Replication(testbed, job, work, stop).run()


@dataclass
class _Replication:
    testbed: Testbed
    job: Job
    work: Path
    stop: threading.Event
    outcome: Outcome = field(default_factory=Outcome)
    running: list[RunningFlow] = field(default_factory=list)
    fetches: list[tuple[Host, str]] = field(default_factory=list)   # (host, file) brought into work
    details: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    link: Link | None = None
    router: RouterRun | None = None

    def run(self) -> Status:
        started_utc, t_begin = utc_stamp(), time.monotonic()
        self.details.update(testbed=self.testbed.describe(), seed=self.job.seed,
                            replication=self.job.replication, cell=self.job.cell.cell_id)
        try:
            with ExitStack() as stack:
                self._set_up(stack)
                self.timings["setup_s"] = round(time.monotonic() - t_begin, 3)
                self._run_flows()
            _check_link(self.link, self.outcome, self.details)
        except (Interrupted, KeyboardInterrupt):
            raise
        except Exception as e:   # a program or tool that failed to come up: record why, go on
            self.outcome.fail(f"{type(e).__name__}: {e}")
            self.details["link_exit_codes"] = getattr(getattr(self.link, "result", None), "exit_codes", None)
        if self.stop.is_set():
            raise Interrupted()
        _fetch(self.fetches, self.work)
        _collect(self.running, self.work, self.outcome, self.details)
        self.timings["total_s"] = round(time.monotonic() - t_begin, 3)
        self.details["timings"] = self.timings
        return Status(self.outcome.status, "; ".join(self.outcome.reasons), started_utc,
                      self.timings["total_s"], self.details)

    def _set_up(self, stack: ExitStack) -> None:
        """Everything up to, not including, START; each piece is undone by `stack`."""
        job, work = self.job, self.work
        router_config = job.cell.sections.get("router")
        self.link = self.testbed.link(job.cell.link, work, job.seed, job.replication, router=router_config)
        stack.callback(self.link.close)
        self.link.bring_up()
        _apply_tcp(self.testbed, job.cell, work)
        for stem, (host, dev) in self.testbed.capture_points.items():
            stack.enter_context(host.capture(dev, host.files(work) / f"{stem}.pcap"))
            self.fetches.append((host, f"{stem}.pcap"))
        # engine "emulator": the router stage is in emulator.conf; RouterRun writes its notes
        if router_config is not None:
            self.router = stack.enter_context(self.testbed.router(router_config, work))
        stack.callback(_stop_programs, self.running)      # also what started before a failure
        for i, flow in enumerate(job.cell.sections.get("flows", ())):
            self.running.append(_prepare(self.testbed, flow, i, work, stack))
            self.fetches += _files_of(self.running[-1])

    def _run_flows(self) -> None:
        """START (t = 0), the flows until they end, then the router's final files."""
        assert self.link is not None
        t0_realtime_us = self.link.start()
        t0 = time.monotonic()
        self.details["t0_realtime_us"] = t0_realtime_us
        if self.router is not None:
            self.router.start_monitor(t0_realtime_us=t0_realtime_us)
        for item in self.running:
            _launch(item, self.work, t0, self.job)
        link_alive = _wait(self.running, self.link, self.job, t0, self.stop, self.outcome)
        self.timings["flows_s"] = round(time.monotonic() - t0, 3)
        # The last segments (e.g. the ACK of the server's FIN) are still inside the link when the
        # programs end: keep the link and the captures until they are out, or connections look cut.
        if link_alive and self.stop.wait(_link_drain_s(self.job.cell.link)):
            raise Interrupted()
        _stop_programs(self.running)
        if self.router is None or not link_alive:    # without its TUN there is no qdisc to read
            return
        if self.router.engine == "emulator":
            self.link.close()       # STOP: the log's trailer holds the router stage's counters
        self.router.finish()


# --- set-up ------------------------------------------------------------------------------

def _apply_tcp(testbed: Testbed, cell: ResolvedCell, work: Path) -> None:
    """tcp.json: the effective settings, and what each host's TCP metrics cache holds at the
    start (empty unless a CBI profile kept it from the previous replication)."""
    profile = cell.sections.get("tcp") or tcp_profile.load("linux-default")
    settings = testbed.apply_tcp(profile)
    settings["metrics_cache_at_start"] = {
        host.role: host.run(["ip", "tcp_metrics", "show"], check=False).stdout.splitlines()
        for host in (testbed.fixed, testbed.mobile)}
    tcp_profile.write_tcp_json(work / "tcp.json", settings)


def _prepare(testbed: Testbed, flow: Flow, index: int, work: Path, stack: ExitStack) -> RunningFlow:
    """Starts what must listen before t = 0 (HTTP server, receivers)."""
    down = flow.direction == "down"
    server, client = (testbed.fixed, testbed.mobile) if down else (testbed.mobile, testbed.fixed)
    if isinstance(flow, (BulkFlow, UdpFlow)):
        server, client = client, server          # the sender is where the data starts
    item = RunningFlow(flow, PORT_BASE[flow.kind] + index, server, client)
    if isinstance(flow, HttpFlow):
        site = server.files(work) / f"{flow.name}.server"
        stack.callback(_keep_server_logs, server, site, work, flow.name)
        stack.enter_context(server.http_server(item.port, site, [flow.page.sizes]))
        return item
    listen = f"{server.address}:{item.port}"
    tool = "squall-bulk" if isinstance(flow, BulkFlow) else "squall-udp"
    argv = [server.program(tool), "recv", "--listen", listen, "--tos", str(flow.tos),
            "--log", str(server.files(work) / f"{flow.name}.receiver.log")]
    item.passive = server.start(f"{flow.name}.receiver", argv, work)
    try:
        _wait_line(item.passive, "listening", READY_TIMEOUT_S)
    except BaseException:
        _stop_programs([item])
        raise
    return item


def _keep_server_logs(host: Host, site: Path, work: Path, name: str) -> None:
    """nginx's logs stay as <flow>.access.log / .error.log; the document tree goes."""
    _fetch([(host, f"{name}.server/{log}") for log in ("access.log", "error.log")], work,
           rename=lambda path: f"{name}.{Path(path).name}")
    host.run(["rm", "-rf", "--", str(site)], check=False)


def _files_of(item: RunningFlow) -> list[tuple[Host, str]]:
    roles = [(item.client_host, item.roles[0])] + ([(item.server_host, item.roles[1])] if item.passive else [])
    return [(host, f"{item.flow.name}.{role}.log") for host, role in roles]


def _fetch(files: list[tuple[Host, str]], work: Path, rename: Callable[[str], str] = str) -> None:
    """Brings each host's files into `work`; a file a program never wrote is simply absent."""
    for host, name in files:
        try:
            host.fetch(host.files(work) / name, work / rename(name))
        except FileNotFoundError:
            pass


def _wait_line(program: Program, prefix: str, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not any(line.startswith(prefix) for line in program.stdout().splitlines()):
        code = program.proc.poll()
        if code is not None or time.monotonic() > deadline:
            what = f"exited with code {code}" if code is not None else f"did not print '{prefix} ...' in {timeout_s:g} s"
            raise ReplicationFailed(f"{program.describe()} {what}; its stderr: {_tail(program.stderr())}")
        time.sleep(0.02)


# --- the flows ------------------------------------------------------------------------------

def _launch(item: RunningFlow, work: Path, t0: float, job: Job) -> None:
    flow = item.flow
    offset_us = max(0, flow.start_us - int((time.monotonic() - t0) * 1e6))
    peer = f"{item.server_host.address}:{item.port}"
    host = item.client_host
    common = ["--start-offset", f"{offset_us}us", "--tos", str(flow.tos),
              "--log", str(host.files(work) / f"{flow.name}.{item.roles[0]}.log")]
    if isinstance(flow, HttpFlow):
        # A label of workloads.toml is passed as such (squall-http has the same table), so the
        # client's summary names the workload for the analysis; other pages go as sizes.
        page = ["--objects", ",".join(str(s) for s in flow.page.sizes)] if flow.page.label == "custom" \
            else ["--workload", flow.page.label]
        argv = [host.program("squall-http"), "--connect", peer, *page, "--http", flow.http,
                "--request-size", str(flow.request_size), "--timeout", f"{job.timeout_us}us"]
        argv += ["--parallel", str(flow.parallel)] if flow.http == "1.0" else \
            ["--persistent", str(flow.persistent)] + (["--pipeline"] if flow.pipeline else [])
    elif isinstance(flow, BulkFlow):
        argv = [host.program("squall-bulk"), "send", "--connect", peer, "--count", str(flow.transfer.count),
                "--length", str(flow.transfer.length)] + (["--nodelay"] if flow.nodelay else [])
    else:
        argv = [host.program("squall-udp"), "send", "--connect", peer, "--size", str(flow.stream.size),
                "--rate", f"{flow.stream.rate_bps}bit"]
        argv += ["--duration", f"{flow.duration_us}us"] if flow.duration_us else []
        argv += ["--count", str(flow.count)] if flow.count else []
    item.active = host.start(f"{flow.name}.{item.roles[0]}", argv + common, work)


def _delay_and_retries_s(d: DirectionConfig) -> float:
    """A packet's time in one direction of the link once sent: the delay and every ARQ retry."""
    return (d.delay_us + d.arq_retransmissions * d.arq_delay_us) / 1e6


def _drain_s(link: LinkConfig, flow: Flow) -> float:
    """How long the last packet of a flow can still be in the link after it was sent."""
    return _delay_and_retries_s(link.direction(flow.direction)) + 1.0


def _link_drain_s(link: LinkConfig) -> float:
    """Longest time a packet sent now can stay in the link: a full send buffer ahead of it at
    the slowest rate, the propagation delay and every ARQ retry (either direction)."""
    def one(d: DirectionConfig) -> float:
        rates = [s.rate_bps for s in d.bandwidth if s.rate_bps]
        serialisation = d.send_buffer * 8 / min(rates) if rates else 0.0
        return serialisation + _delay_and_retries_s(d)
    return max(one(link.down), one(link.up)) + DRAIN_MARGIN_S


def _wait(running: list[RunningFlow], link: Link, job: Job, t0: float, stop: threading.Event,
          outcome: Outcome) -> bool:
    """Until every flow ended, the timeout, or a link program died (then returns False)."""
    deadline = t0 + job.timeout_us / 1e6
    while True:
        if stop.is_set():
            raise Interrupted()
        dead = link.dead_programs()
        if dead:
            for name, (code, stderr) in dead.items():
                outcome.fail(f"the {name} exited with code {code} during the replication; "
                             f"its stderr: {_tail(stderr)}")
            return False
        now = time.monotonic()
        for item in running:
            _advance(item, job.cell.link, now)
        if all(item.finished() for item in running):
            return True
        if now >= deadline:
            late = [item.flow.name for item in running if not item.finished()]
            outcome.fail(f"flows {', '.join(late)} still running after the timeout of "
                         f"{job.timeout_us / 1e6:g} s", status="timeout")
            return True
        time.sleep(POLL_S)


def _advance(item: RunningFlow, link: LinkConfig, now: float) -> None:
    if item.ended_at is None and item.active is not None and item.active.proc.poll() is not None:
        item.ended_at = now
    if item.ended_at is None or item.passive is None or item.passive_stopped:
        return
    failed = item.active is not None and item.active.proc.returncode != 0
    # A receiver still waiting after the sender failed, or a UDP receiver after the last
    # datagram could have arrived, is ended (SIGTERM: it prints its summary).
    if failed or now - item.ended_at >= _drain_s(link, item.flow):
        _signal(item.passive, signal.SIGTERM)
        item.passive_stopped = True


def _stop_programs(running: list[RunningFlow]) -> None:
    programs = [p for item in running for p in (item.active, item.passive) if p is not None]
    for program in programs:
        _signal(program, signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE_S
    for program in programs:
        try:
            program.proc.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            program.proc.kill()
            program.proc.wait()


def _signal(program: Program, sig: int) -> None:
    if program.proc.poll() is None:
        try:
            program.proc.send_signal(sig)
        except ProcessLookupError:
            pass


# --- results --------------------------------------------------------------------------------

def _check_link(link: Link | None, outcome: Outcome, details: dict[str, Any]) -> None:
    result = getattr(link, "result", None)
    if result is None:
        return
    details["link_exit_codes"] = result.exit_codes
    if outcome.status == "ok" and not result.stop_acknowledged:
        outcome.fail(f"the emulator did not acknowledge STOP, so emulator.log may lack its trailer; "
                     f"its stderr: {_tail(result.stderr.get('emulator', ''))}")


def _collect(running: list[RunningFlow], work: Path, outcome: Outcome, details: dict[str, Any]) -> None:
    """workloads.json (every flow's programs, exit codes and summaries) and the flows' verdicts."""
    workloads: dict[str, Any] = {}
    for item in running:
        entry: dict[str, Any] = {"kind": item.flow.kind, "direction": item.flow.direction,
                                 "workload": _workload_label(item.flow),
                                 "start_us": item.flow.start_us, "tos": item.flow.tos, "port": item.port}
        for role, program, host in ((item.roles[0], item.active, item.client_host),
                                    (item.roles[1], item.passive, item.server_host)):
            if program is None:
                continue
            code = program.proc.poll()
            summary = _summary(program)
            entry[role] = {"host": host.role, "argv": program.argv, "exit_code": code, "summary": summary}
            _judge(item.flow.name, role, program, code, summary, outcome)
        workloads[item.flow.name] = entry
    write_json_atomic(work / WORKLOADS_FILE, workloads)
    details["flows"] = {name: {role: {"exit_code": e[role]["exit_code"],
                                      "ok": bool(e[role]["summary"] and e[role]["summary"].get("ok"))}
                               for role in ("client", "sender", "receiver") if role in e}
                        for name, e in workloads.items()}


def _workload_label(flow: Flow) -> str:
    workload = flow.page if isinstance(flow, HttpFlow) else flow.transfer if isinstance(flow, BulkFlow) else flow.stream
    return workload.label


def _judge(flow: str, role: str, program: Program, code: int | None, summary: dict | None,
           outcome: Outcome) -> None:
    if outcome.status != "ok":
        return    # the first cause is the reason; later ones are its consequences
    if code is None:
        outcome.fail(f"flow {flow}: the {role} {program.describe()} had not ended")
    elif code != 0 or summary is None or not summary.get("ok"):
        error = (summary or {}).get("error") or _tail(program.stderr())
        outcome.fail(f"flow {flow}: the {role} ({Path(program.argv[0]).name}) exited with code {code}: {error}")


def _summary(program: Program) -> dict | None:
    for line in reversed(program.stdout().splitlines()):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                return None
    return None


def _tail(text: str) -> str:
    """The end of a program's stderr on one line (status.json reasons are one sentence each)."""
    text = " | ".join(line.strip() for line in text.strip().splitlines() if line.strip())
    if not text:
        return "(empty)"
    return text if len(text) <= STDERR_TAIL else "..." + text[-STDERR_TAIL:]
