"""One replication of one cell on a testbed (DESIGN.md §3.4), written into a work directory.

Order (docs/runner.md): link up (emulator + NPAs, not started; an `engine = "emulator"`
router goes into the emulator's configuration) → TCP profile (tcp.json) →
captures at the fixed host (fixed.pcap) and the mobile host (mobile.pcap) → tc router →
servers and receivers → clients that start before t = 0 (PRESTARTS: a browser, ready and
waiting) → START (t = 0) → queue monitor → flows at their offsets → wait for
every flow or the timeout → stop everything (STOP: the emulator log gets its trailer) →
workloads.json and the verdict. The caller (testbed/run/runner.py) owns the run directory:
it gets the work directory from RunDir.begin and hands the Status to RunDir.finish.

Only the `Testbed`/`Host` protocols (testbed/link/testbed.py, testbed/hosts.py) are used: no
namespace here.
"""
from __future__ import annotations

import signal
import subprocess
import threading
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from analysis.results.directory import TCPINFO_SUFFIX, WORKLOADS_FILE
from testbed import tcp_profile, tcp_table
from testbed.link import session as link_session
from testbed.scenario.flows import FlowBase, Readiness
from testbed.hosts import Host, Router
from testbed.link.testbed import Link, Testbed
from testbed.processes import START_POLL_S, Program, ready_line, wait_for
from testbed.run import drain_bound, instruments
from testbed.run.drain_bound import STOP_GRACE_S
from testbed.run.flow_slots import FlowSlots
from testbed.run.kernel_counters import KernelCounters
from testbed.run.results import Status, utc_stamp, write_json_atomic
from testbed.router.engines import engine_of
from testbed.scenario.cell import ResolvedCell
from testbed.scenario.tolerances import Tolerances

POLL_S = 0.05
READY_TIMEOUT_S = 10.0
PRESTART_READY_TIMEOUT_S = 60.0     # a browser's start-up on a busy machine
PRESTART_READY = Readiness(line="ready")
LISTEN_POLL_S = 0.02       # a listening socket is an `ss` process away (a ready line: START_POLL_S)
TCPINFO_INTERVAL = "50ms"
# Where a host cannot tell its connections' state, the drain ends once the link is empty and
# quiet this long: longer than a delayed ACK (40 ms on Linux, up to 200 ms with TCP_QUICKACK
# off) answering the last packet delivered.
DRAIN_QUIET_S = 0.25
STDERR_TAIL = 400


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
    tolerances: Tolerances = Tolerances()


@dataclass
class RunningFlow:
    """A flow's programs: `active` (client or sender) decides when it ends."""
    flow: FlowBase
    port: int
    active_host: Host
    passive_host: Host
    active: Program | None = None
    passive: Program | None = None          # the receiver (None: a web server, or not started)
    http_server: Any = None                 # a web server's nginx (its ending: run/instruments.py)
    launch_at: float | None = None          # monotonic time to start the active program (not yet started)
    launched_at: float | None = None        # monotonic time the active program was started (a
                                            # PRESTARTS program: told to start)
    cpu_wait_before_us: int | None = None   # a PRESTARTS program's CPU wait before its start
    ended_at: float | None = None           # monotonic time the active program exited
    passive_stopped: bool = False
    stopped: set[str] = field(default_factory=set)   # roles squall stopped while they were running

    def programs(self) -> list[tuple[str, Program | None, Host]]:
        """(role, program, host) of the active and the passive role."""
        return list(zip(self.flow.ROLES, (self.active, self.passive), (self.active_host, self.passive_host)))

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


def run(testbed: Testbed, job: Job, work: Path, stop: threading.Event, slots: FlowSlots | None = None) -> Status:
    """Runs the replication in `work`; returns its Status. Raises Interrupted when `stop` is set.
    With `slots`, START waits for a free slot, given back when the flows end (run/flow_slots.py)."""
    return _Replication(testbed, job, work, stop, slots).run()


@dataclass
class _Replication:
    testbed: Testbed
    job: Job
    work: Path
    stop: threading.Event
    slots: FlowSlots | None = None
    outcome: Outcome = field(default_factory=Outcome)
    running: list[RunningFlow] = field(default_factory=list)
    fetches: list[tuple[Host, str]] = field(default_factory=list)   # (host, file) brought into work
    details: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    captures: dict[str, Any] = field(default_factory=dict)          # stem -> the running capture
    samplers: dict[str, Program] = field(default_factory=dict)      # stem -> its squall-tcp-sampler
    link: Link | None = None
    router: Router | None = None
    counters: KernelCounters | None = None

    def run(self) -> Status:
        started_utc, t_begin = utc_stamp(), time.monotonic()
        self.details.update(testbed=self.testbed.describe(), seed=self.job.seed,
                            replication=self.job.replication, cell=self.job.cell.cell_id)
        counters = self.counters = KernelCounters.before(self.testbed)
        try:
            with ExitStack() as stack:
                self._set_up(stack)
                self.timings["setup_s"] = round(time.monotonic() - t_begin, 3)
                self._run_flows()
                t_stop = time.monotonic()
            self.timings["stop_s"] = round(time.monotonic() - t_stop, 3)   # captures, servers, link down
            _check_link(self.link, self.outcome, self.details)
        except (Interrupted, KeyboardInterrupt):
            raise
        except Exception as e:   # a program or tool that failed to come up: record why, go on
            self.outcome.fail(f"{type(e).__name__}: {e}")
            self.details["link_exit_codes"] = getattr(getattr(self.link, "result", None), "exit_codes", None)
        if self.stop.is_set():
            raise Interrupted()
        t_checks = time.monotonic()
        _fetch(self.fetches, self.work)
        self._check_instruments(counters)
        self.timings["checks_s"] = round(time.monotonic() - t_checks, 3)
        self.timings["total_s"] = round(time.monotonic() - t_begin, 3)
        self.details["timings"] = self.timings
        return Status(self.outcome.status, "; ".join(self.outcome.reasons), started_utc,
                      self.timings["total_s"], self.details)

    def _counters_after(self) -> None:
        if self.counters is not None:
            self.counters.take_after(self.testbed)

    def _check_instruments(self, counters: KernelCounters) -> None:
        """Every program's ending (a dead server before its client's error), the flows' verdicts,
        the captures against the log and the timing error, the kernel's counters
        (run/instruments.py, run/kernel_counters.py)."""
        servers = {item.flow.name: item.http_server for item in self.running if item.http_server is not None}
        instruments.check_programs(servers, self.details.get("link_exit_codes"), self.outcome, self.details)
        instruments.check_samplers({stem: p.proc.returncode for stem, p in self.samplers.items()},
                                   self.outcome, self.details)
        workloads = _collect(self.running, self.work, self.outcome, self.details)
        router = self.job.cell.router
        instruments.check_captures(self.work, self.captures, self.outcome, self.details,
                                   tolerance_us=self.job.tolerances.timing_us,
                                   router_between=router is not None and engine_of(router).on_host_path,
                                   paced={f.name: stream for i, f in enumerate(self.job.cell.flows)
                                          if (stream := f.paced(i)) is not None},
                                   late_answer_ports=frozenset(p for f in self.job.cell.flows
                                                               for p in f.late_answer_ports()))
        # after every failure check
        instruments.check_cpu_wait(workloads, self.outcome, self.details, self.job.tolerances.cpu_wait_share)
        counters.finish(self.testbed, self.work, self.details)

    def _set_up(self, stack: ExitStack) -> None:
        """Everything up to, not including, START; each piece is undone by `stack`."""
        job, work = self.job, self.work
        routers = job.cell.routers
        self.link = self.testbed.link(job.cell.link, work, job.seed, job.replication, router=routers)
        stack.callback(self.link.close)
        self.link.bring_up()
        _apply_tcp(self.testbed, job.cell, work)
        for stem, (host, dev) in self.testbed.capture_points.items():
            self.captures[stem] = stack.enter_context(host.capture(dev, host.files(work) / f"{stem}.pcap"))
            self.fetches.append((host, f"{stem}.pcap"))
        self._start_samplers(stack)
        # the kernel's counters end where the captures end (run/kernel_counters.py)
        stack.callback(self._counters_after)
        # an engine in the emulator is in emulator.conf already; RouterRun writes its notes
        if routers:
            self.router = stack.enter_context(self.testbed.router(routers, work))
        stack.callback(_stop_programs, self.running)      # also what started before a failure
        for i, flow in enumerate(job.cell.flows):
            self.running.append(_prepare(self.testbed, flow, i, work, stack, job.timeout_us))
            self.fetches += [(_host(self.testbed, side), name) for side, name in flow.log_files()]
        for item in self.running:      # started together, so their start-up times overlap
            if item.passive is not None:
                _wait_ready(item.passive, item.passive_host, item.port, item.flow.readiness(), READY_TIMEOUT_S)
        prestarted = [item for item in self.running if item.flow.PRESTARTS]
        for item in prestarted:        # after their servers: a browser may look at them at start-up
            _start_active(item, work, job, offset_us=0)
        for item in prestarted:
            assert item.active is not None
            _wait_ready(item.active, item.active_host, item.port, PRESTART_READY, PRESTART_READY_TIMEOUT_S)

    def _start_samplers(self, stack: ExitStack) -> None:
        """tcp_info of every connection at each capture point, every 50 ms (<stem>.tcpinfo.tsv,
        instruments/README.md); stopped before the captures."""
        for stem, (host, _dev) in self.testbed.capture_points.items():
            out = host.files(self.work) / f"{stem}.{TCPINFO_SUFFIX}"
            argv = [host.program("squall-tcp-sampler"), "--output", str(out), "--interval", TCPINFO_INTERVAL]
            self.samplers[stem] = host.start(f"{stem}.tcp-sampler", argv, self.work)
            self.fetches.append((host, out.name))
        stack.callback(_stop_samplers, self.samplers)

    def _run_flows(self) -> None:
        """START (t = 0), the flows until they end, then the router's final files."""
        assert self.link is not None
        t_slot = time.monotonic()
        if self.slots is not None and not self.slots.acquire(self.stop):
            raise Interrupted()
        try:
            if self.slots is not None:
                self.timings["slot_wait_s"] = round(time.monotonic() - t_slot, 3)
            t0_realtime_us = self.link.start()
            t0 = time.monotonic()
            self.details["t0_realtime_us"] = t0_realtime_us
            if self.router is not None:
                self.router.start_monitor(t0_realtime_us=t0_realtime_us)
            for item in self.running:
                _launch(item, self.work, t0, self.job)
            link_alive = _wait(self.running, self.link, self.job, t0, self.stop, self.outcome, self.work)
            self.timings["flows_s"] = round(time.monotonic() - t0, 3)
        finally:
            if self.slots is not None:     # the drain's few segments run beside the next one's flows
                self.slots.release()
        # The last segments (e.g. the ACK of the server's FIN) are still inside the link when the
        # programs end: keep the link and the captures until they are out, or connections look cut.
        t_drain = time.monotonic()
        if link_alive:
            # a timed-out flow's connections still send: waiting for their retransmissions would
            # only keep the link up to the limit
            self.details["drain"] = _drain(self.link, (self.testbed.fixed, self.testbed.mobile),
                                           drain_bound.drain_s(self.job.cell.link, self.job.cell.routers),
                                           self.stop,
                                           wait_for_retransmissions=self.outcome.status != "timeout")
        _stop_programs(self.running)
        self.timings["drain_s"] = round(time.monotonic() - t_drain, 3)
        if self.router is None or not link_alive:    # without its TUN there is no qdisc to read
            return
        self.router.finish_on_link()      # a tc router's qdiscs, while its TUN is there
        if self.router.finishes_after_link:
            self._counters_after()
            for capture in self.captures.values():   # stopped by squall, before wl0 goes with the link
                capture.__exit__(None, None, None)
            self.link.close()       # STOP: the log's trailer holds the router stage's counters
        self.router.finish()


# --- set-up ------------------------------------------------------------------------------

def _apply_tcp(testbed: Testbed, cell: ResolvedCell, work: Path) -> None:
    """tcp.json: the effective settings, and what each host's TCP metrics cache holds at the
    start (empty unless a CBI profile kept it from the previous replication)."""
    profile = cell.tcp or tcp_profile.load("linux-default")
    settings = testbed.apply_tcp(profile)
    settings["metrics_cache_at_start"] = {
        host.role: host.run(["ip", "tcp_metrics", "show"], check=False).stdout.splitlines()
        for host in (testbed.fixed, testbed.mobile)}
    tcp_profile.write_tcp_json(work / "tcp.json", settings)


def _prepare(testbed: Testbed, flow: FlowBase, index: int, work: Path, stack: ExitStack,
             timeout_us: int) -> RunningFlow:
    """Starts what must listen before t = 0 (a web server, ready when this returns, or a
    receiver, whose readiness the caller waits for)."""
    active, passive = (_host(testbed, side) for side in flow.hosts())
    item = RunningFlow(flow, flow.port(index), active, passive)
    role = flow.ROLES[1]
    argv = flow.passive_argv(passive.program, _endpoint(passive.address, item.port),
                             passive.files(work) / flow.log_name(role), peer=active.address, timeout_us=timeout_us)
    if argv is None:
        if flow.web_pages():      # a web server
            site = passive.files(work) / flow.program_name(role)     # <flow>.server
            stack.callback(_keep_server_logs, passive, site, work, flow.name)
            item.http_server = stack.enter_context(passive.http_server(item.port, site, flow.web_pages()))
        return item
    item.passive = passive.start(flow.program_name(role), argv, work)
    return item


def _endpoint(address: str, port: int) -> str:
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"


def _keep_server_logs(host: Host, site: Path, work: Path, name: str) -> None:
    """nginx's logs stay as <flow>.access.log / .error.log; the document tree goes."""
    _fetch([(host, f"{site.name}/{log}") for log in ("access.log", "error.log")], work,
           rename=lambda path: f"{name}.{Path(path).name}")
    host.run(["rm", "-rf", "--", str(site)], check=False)


def _host(testbed: Testbed, side: str) -> Host:
    return {"fixed": testbed.fixed, "mobile": testbed.mobile}[side]


def _fetch(files: list[tuple[Host, str]], work: Path, rename: Callable[[str], str] = str) -> None:
    """Brings each host's files into `work`; a file a program never wrote is simply absent."""
    for host, name in files:
        try:
            host.fetch(host.files(work) / name, work / rename(name))
        except FileNotFoundError:
            pass


def _wait_ready(program: Program, host: Host, port: int, ready: Readiness, timeout_s: float) -> None:
    """Until the passive program is ready as its flow says (a line, or a socket on the port)."""
    line = ready.line
    if line is not None:
        what, done, poll_s = f"print '{line} ...'", lambda: ready_line(program, line) is not None, START_POLL_S
    elif ready.listen:
        what, done, poll_s = f"listen on port {port}", lambda: _listening(host, port), LISTEN_POLL_S
    else:
        what, done, poll_s = "", lambda: True, START_POLL_S
    failed = wait_for(program, done, timeout_s, poll_s)
    if failed is not None:
        raise ReplicationFailed(f"{program.describe()} {failed.said(what)}; its stderr: {_tail(program.stderr())}")
    if ready.delay_us:
        time.sleep(ready.delay_us / 1e6)
        code = program.proc.poll()
        if code is not None:
            raise ReplicationFailed(f"{program.describe()} exited with code {code} before the flow started; "
                                    f"its stderr: {_tail(program.stderr())}")


def _listening(host: Host, port: int) -> bool:
    """A TCP socket listens, or a UDP socket is bound, on `port` at the host."""
    found = host.run(["ss", "-H", "-l", "-n", "-t", "-u", f"sport = :{port}"], check=False, timeout=5.0)
    return found.returncode == 0 and bool(found.stdout.strip())


# --- the flows ------------------------------------------------------------------------------

def _launch(item: RunningFlow, work: Path, t0: float, job: Job) -> None:
    """Starts the active program now: a generator waits for its start offset itself; any other
    program is started at the flow's start (by _wait, once it is due)."""
    flow = item.flow
    now = time.monotonic()
    offset_us = max(0, flow.start_us - int((now - t0) * 1e6))
    if not flow.STARTS_ITSELF and offset_us > 0:
        item.launch_at = t0 + flow.start_us / 1e6
        return
    item.launch_at = None
    if flow.PRESTARTS:      # running and ready since before t = 0: told to start now
        assert item.active is not None
        item.cpu_wait_before_us = item.active.cpu_wait_us()
        item.launched_at = time.monotonic()
        _signal(item.active, signal.SIGUSR1)
        return
    _start_active(item, work, job, offset_us)


def _start_active(item: RunningFlow, work: Path, job: Job, offset_us: int) -> None:
    flow, host, role = item.flow, item.active_host, item.flow.ROLES[0]
    argv = flow.active_argv(host.program, _endpoint(item.passive_host.address, item.port), offset_us=offset_us,
                            log=host.files(work) / flow.log_name(role), timeout_us=job.timeout_us,
                            local=host.address)
    item.launched_at = time.monotonic()
    item.active = host.start(flow.program_name(role), argv, work)


def _drain(link: Link, ends: tuple[Host, Host], longest_s: float, stop: threading.Event,
           wait_for_retransmissions: bool = True) -> dict[str, Any]:
    """Until the link is empty and no connection between the two ends waits for an
    acknowledgement (the last FIN's ACK delivered, a lost FIN retransmitted); where a host
    cannot tell, until the link was empty and quiet for DRAIN_QUIET_S; at most `longest_s`
    (the link's worst case), longer while a waiting connection's retransmission timer is armed
    (its RTO can exceed the link's worst case), unless `wait_for_retransmissions` is off;
    never longer than drain_bound.DRAIN_LIMIT_S. What ended it, for status.json."""
    started = time.monotonic()
    limit = started + drain_bound.DRAIN_LIMIT_S
    deadline = min(started + longest_s, limit)
    extended = False
    while True:
        try:
            state = link.state()
        except link_session.SessionError as e:   # an emulator that cannot say: the worst case, as before
            if stop.wait(max(0.0, deadline - time.monotonic())):
                raise Interrupted() from None
            return {"ended_by": "longest", "longest_s": round(longest_s, 3), "state_error": str(e)}
        # the hosts' tables while the link is empty, and once the worst case is up: a packet
        # that entered late (an ACK after a lost one) must not hide a FIN still waiting. One
        # clock reading for the whole turn, so the read and the extension agree.
        now = time.monotonic()
        waiting = _waiting(ends) if state.pending == 0 or now >= deadline else None
        if state.pending == 0 and waiting is not None and waiting.connections == 0:
            return _drain_record("settled", longest_s, started, extended)
        if state.pending == 0 and waiting is None and state.quiet_us() >= DRAIN_QUIET_S * 1e6:
            return _drain_record("quiet", longest_s, started, extended)
        due = waiting.retransmission_due_s if waiting is not None else None
        if wait_for_retransmissions and now >= deadline and due is not None and deadline < limit:
            # still waiting after the worst case: a segment was lost; its retransmission, then
            # the link's worst case for it and its acknowledgement
            deadline, extended = min(limit, now + due + longest_s), True
        if now >= deadline:
            return _drain_record("longest", longest_s, started, extended) | {
                "pending": state.pending, "unsettled_connections": None if waiting is None else waiting.connections,
                "unsettled": None if waiting is None else list(waiting.unsettled)}
        if stop.wait(POLL_S):
            raise Interrupted()


def _drain_record(ended_by: str, longest_s: float, started: float, extended: bool) -> dict[str, Any]:
    record = {"ended_by": ended_by, "longest_s": round(longest_s, 3)}
    if extended:
        record["waited_for_retransmission_s"] = round(time.monotonic() - started, 3)
    return record


def _waiting(ends: tuple[Host, Host]) -> tcp_table.Waiting | None:
    """Connections between the fixed and the mobile host that wait for an acknowledgement at
    either end, and when they retransmit; None when one of them cannot tell."""
    fixed, mobile = ends
    try:
        found = [tcp_table.waiting(host.read_proc(tcp_table.TABLES), host.address, peer.address)
                 for host, peer in ((fixed, mobile), (mobile, fixed))]
    except Exception:     # noqa: BLE001 — a host that cannot be asked: the drain waits for quiet
        return None
    dues = [w.retransmission_due_s for w in found if w.retransmission_due_s is not None]
    unsettled = tuple(f"{role}: {u}" for role, w in zip(("fixed", "mobile"), found) for u in w.unsettled)
    return tcp_table.Waiting(sum(w.connections for w in found), max(dues) if dues else None, unsettled)


def _wait(running: list[RunningFlow], link: Link, job: Job, t0: float, stop: threading.Event,
          outcome: Outcome, work: Path) -> bool:
    """Until every flow ended, the timeout, or a link program died (then returns False)."""
    deadline = t0 + job.timeout_us / 1e6
    while True:
        if stop.is_set():
            raise Interrupted()
        dead = link.dead_programs()
        if dead:
            for name, (code, stderr) in dead.items():
                outcome.fail(f"{link_session.describe_death(name, code, stderr)} during the replication; "
                             f"its stderr: {_tail(stderr)}")
            return False
        now = time.monotonic()
        for item in running:
            if item.launch_at is not None and now >= item.launch_at:
                _launch(item, work, t0, job)
            _advance(item, job.cell, now)
        if all(item.finished() for item in running):
            return True
        if now >= deadline:
            late = [item.flow.name for item in running if not item.finished()]
            outcome.fail(f"flows {', '.join(late)} still running after the timeout of "
                         f"{job.timeout_us / 1e6:g} s", status="timeout")
            return True
        due = [item.launch_at - now for item in running if item.launch_at is not None]
        time.sleep(max(0.0, min([POLL_S, *due])))


def _advance(item: RunningFlow, cell: ResolvedCell, now: float) -> None:
    if item.ended_at is None and item.active is not None and item.active.proc.poll() is not None:
        item.ended_at = now
    if item.ended_at is None or item.passive is None or item.passive_stopped:
        return
    failed = item.active is not None and item.active.proc.returncode != 0
    # A receiver still waiting after the sender failed, or a UDP receiver after the last
    # datagram could have arrived, is ended (SIGTERM: it prints its summary).
    # (drain_bound.py: the queues ahead of it at the link's rate, the delay, every ARQ retry)
    if failed or now - item.ended_at >= drain_bound.receiver_wait_s(cell.link, item.flow.direction,
                                                                     cell.routers):
        if _signal(item.passive, signal.SIGTERM):
            item.stopped.add(item.flow.ROLES[1])
        item.passive_stopped = True


def _stop_programs(running: list[RunningFlow]) -> None:
    programs = []
    for item in running:
        for role, program, _ in item.programs():
            if program is not None:
                programs.append(program)
                if _signal(program, signal.SIGTERM):
                    item.stopped.add(role)
    deadline = time.monotonic() + STOP_GRACE_S
    for program in programs:
        try:
            program.proc.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            program.proc.kill()
            program.proc.wait()


def _stop_samplers(samplers: dict[str, Program]) -> None:
    for program in samplers.values():
        _signal(program, signal.SIGTERM)
    for program in samplers.values():
        try:
            program.proc.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            program.proc.kill()
            program.proc.wait()


def _signal(program: Program, sig: int) -> bool:
    """Sends `sig` to a running program; False when it had ended already."""
    if program.proc.poll() is None:
        try:
            program.proc.send_signal(sig)
            return True
        except ProcessLookupError:
            pass
    return False


# --- results --------------------------------------------------------------------------------

def _check_link(link: Link | None, outcome: Outcome, details: dict[str, Any]) -> None:
    result = getattr(link, "result", None)
    if result is None:
        return
    details["link_exit_codes"] = result.exit_codes
    stderr = result.stderr.get("emulator", "")
    if outcome.status == "ok" and not result.stop_acknowledged:
        if result.stopped_by is not None:
            outcome.fail(f"the emulator was stopped by {result.stopped_by}, not by squall, before the end of "
                         f"the replication; its stderr: {_tail(stderr)}")
        else:
            outcome.fail(f"the emulator did not acknowledge STOP, so emulator.log may lack its trailer; "
                         f"its stderr: {_tail(stderr)}")
    # Someone holding the run token tried to interfere: the run was protected, but not trusted.
    for intrusion in link_session.intrusions(stderr):
        outcome.fail(intrusion)


def _collect(running: list[RunningFlow], work: Path, outcome: Outcome, details: dict[str, Any]) -> dict[str, Any]:
    """workloads.json (every flow's programs, exit codes, summaries and CPU waits) and the
    flows' verdicts; returns what it wrote."""
    workloads: dict[str, Any] = {}
    verdicts: dict[str, Any] = {}
    for item in running:
        flow = item.flow
        entry: dict[str, Any] = {"kind": flow.kind, "direction": flow.direction, "workload": flow.workload_label,
                                 "start_us": flow.start_us, "tos": flow.tos, "port": item.port}
        verdict = verdicts[flow.name] = {}
        for role, program, host in item.programs():
            if program is None:
                continue
            code = program.proc.poll()
            summary = flow.summary(program.stdout())
            stopped = role in item.stopped
            problem = flow.problem(role, code, summary, stopped=stopped, stderr=_tail(program.stderr()))
            entry[role] = {"host": host.role, "argv": program.argv, "exit_code": code, "summary": summary,
                           "stopped_by_squall": stopped, "stdout": program.stdout_path.name,
                           "stderr": program.stderr_path.name}
            if role == flow.ROLES[0] and item.launched_at is not None and item.ended_at is not None:
                entry[role]["run_time_us"] = int((item.ended_at - item.launched_at) * 1e6)
            entry[role]["cpu_wait_us"] = _cpu_wait_since_start(program, item if role == flow.ROLES[0] else None)
            if role == flow.ROLES[0] and item.cpu_wait_before_us is not None:
                entry[role]["cpu_wait_before_start_us"] = item.cpu_wait_before_us
            verdict[role] = {"exit_code": code, "ok": problem is None}
            if problem is not None and outcome.status == "ok":   # the first cause is the reason
                outcome.fail(f"flow {flow.name}: the {role} ({Path(program.argv[0]).name}) {problem}")
        workloads[flow.name] = entry
    write_json_atomic(work / WORKLOADS_FILE, workloads)
    details["flows"] = verdicts
    return workloads


def _cpu_wait_since_start(program: Program, item: RunningFlow | None) -> int | None:
    """The program's CPU wait; for a program started before t = 0 (PRESTARTS), only since it was
    told to start: its start-up is not the flow's."""
    total = program.cpu_wait_us()
    before = item.cpu_wait_before_us if item is not None else None
    return total if total is None or before is None else total - before


def _tail(text: str) -> str:
    """The end of a program's stderr on one line (status.json reasons are one sentence each)."""
    text = " | ".join(line.strip() for line in text.strip().splitlines() if line.strip())
    if not text:
        return "(empty)"
    return text if len(text) <= STDERR_TAIL else "..." + text[-STDERR_TAIL:]
