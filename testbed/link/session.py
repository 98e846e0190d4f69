"""One emulated link on a lane: the emulator and the two NPAs, from start to stop.

    with LinkSession(addr, link, workdir) as session:
        ...                         # traffic; t = 0 is session.start_realtime_us
    session.result                  # log path, exit codes, stderr of the three programs

Entering writes the emulator configuration, starts `squall-emulator` in the emu
namespace, the router NPA (emu namespace) and the mobile NPA (mobile namespace), waits
for their `ready` lines (bring_up()) and sends START (start()); a runner that needs
time between the two calls them itself instead of entering. Leaving sends STOP (the
emulator then writes its log trailer) and ends every program, SIGTERM first, SIGKILL
after a grace period, also when entering failed half-way.

Where the programs run is a `LinkPlaces`: by default the lane's namespaces
(`NamespacePlaces`); testbed/lab/hosts.py gives lab hosts reached over SSH.

The run token never appears on a command line or in a file others can read: the programs
read it from a 0600 file in the session's private (0700) directory, removed as soon as they
are up; the same directory holds the emulator's control socket (START/STOP), removed with it
when the session closes. emulator.conf says `token = <redacted>`.
"""
from __future__ import annotations

import os
import re
import secrets
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, Sequence

from testbed.errors import ConfigError
from testbed.scenario import emulator_config
from testbed.addresses import LaneAddresses
from testbed.cell_addresses import CellHost
from testbed.link.control import Control, ControlError, LinkState, SocketControl
from testbed.scenario.link_section import LinkConfig
from testbed.processes import Program, ProgramGroup, ReadyTimeout, wait_for
from testbed.paths import program_path
from testbed.router.engines import in_emulator
from testbed.router.directions import Routers
from testbed.router.plan import RouterConfig

EMULATOR, ROUTER_NPA, MOBILE_NPA = "emulator", "npa-router", "npa-mobile"
TOKEN_FILE, CONTROL_SOCKET = "token", "control.sock"
READY_TIMEOUT_S = 10.0
# The emulator and the NPAs are the clock of every experiment: on a machine shared with
# builds they run under SCHED_FIFO so that a busy CPU delays them by µs, not by a time
# slice. $SQUALL_REALTIME_PRIORITY=0 runs them as ordinary processes. The NPAs run one
# priority above the emulator: what the hosts see is the end-to-end time, in which an NPA
# waiting behind an emulator's poll before a delivery or its standby thread costs more than
# an emulator preempted for an NPA's short relay (emulator/README.md, "The NPAs above the
# emulator").
PRIORITY_VARIABLE, NPA_PRIORITY_VARIABLE = "SQUALL_REALTIME_PRIORITY", "SQUALL_NPA_PRIORITY"
DEFAULT_PRIORITY = 10


def realtime_priority() -> int:
    """The emulator's SCHED_FIFO priority: $SQUALL_REALTIME_PRIORITY, else 10 (0: normal)."""
    return _priority_variable(PRIORITY_VARIABLE, DEFAULT_PRIORITY)


def npa_priority_for(emulator_priority: int) -> int:
    """The NPAs' SCHED_FIFO priority: one above the emulator's, at most 99 (normal when it is
    normal); $SQUALL_NPA_PRIORITY sets it (for comparisons: 9 is how the NPAs ran before)."""
    if NPA_PRIORITY_VARIABLE in os.environ and emulator_priority > 0:
        return _priority_variable(NPA_PRIORITY_VARIABLE, emulator_priority)
    return min(99, emulator_priority + 1) if emulator_priority > 0 else 0


def top_link_priority() -> int:
    """The highest SCHED_FIFO priority among the link's programs of a session built with the
    defaults (LinkSession.top_priority): cyclictest there shows what the machine's timers allow
    them (a lower one would count their own preemptions)."""
    emulator = realtime_priority()
    return max(emulator, npa_priority_for(emulator))


def _priority_variable(name: str, default: int) -> int:
    """$name as a priority; a ConfigError naming the variable when it is none."""
    text = os.environ.get(name)
    if text is None:
        return default
    value = int(text) if text.strip().isdigit() else -1
    if not 0 <= value <= 99:
        raise ConfigError(f"${name}", f"{text!r} is not a priority; expected 0 (normal scheduling) "
                          "or 1..99 (SCHED_FIFO)")
    return value


def scheduled(argv: list[str], priority: int) -> list[str]:
    """argv under SCHED_FIFO at priority, if > 0 and possible (root, chrt)."""
    if priority <= 0 or os.geteuid() != 0 or shutil.which("chrt") is None:
        return argv
    return ["chrt", "--fifo", str(priority), *argv]


class SessionError(RuntimeError):
    """The link could not be brought up; the message says which program and why."""


class PrivateFiles(Protocol):
    """A directory of the session's own (mode 0700) on the emu and the mobile host, for what
    no one else may read: the token file and the control socket."""

    def path(self, where: str, name: str) -> str:
        """The path of `name` in the directory on "emu" or "mobile"."""

    def write(self, where: str, name: str, data: bytes) -> str:
        """Writes the file (mode 0600) on "emu" or "mobile"; returns its path there."""

    def remove(self, where: str, name: str) -> None: ...

    def close(self) -> None:
        """Removes the directories with what is left in them."""


class LocalPrivate:
    """The private directory on this machine: the lane's namespaces share its file system."""

    def __init__(self, prefix: str):
        self.dir = Path(tempfile.mkdtemp(prefix=prefix))      # mode 0700

    def path(self, where: str, name: str) -> str:
        return str(self.dir / name)

    def write(self, where: str, name: str, data: bytes) -> str:
        path = self.dir / name
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        return str(path)

    def remove(self, where: str, name: str) -> None:
        (self.dir / name).unlink(missing_ok=True)

    def close(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


class LinkPlaces(Protocol):
    """Where the emulator ("emu") and the mobile NPA ("mobile") run, and how to reach them."""

    def program(self, name: str, where: str) -> str:
        """The path of squall's C program `name` on "emu" or "mobile"."""

    def start(self, programs: ProgramGroup, name: str, where: str, argv: Sequence[str]) -> Program:
        """Starts argv on "emu" or "mobile", registered in `programs` under `name`."""

    def udp_bound(self, program: Program, port: int) -> bool:
        """True once the program's host has a UDP socket bound to port."""

    def private(self) -> PrivateFiles:
        """A new private directory for one session."""

    def control(self, socket_path: str) -> Control:
        """START/STOP to the emulator whose control socket is at socket_path on "emu"."""

    def emulator_file(self, local: Path) -> Path:
        """Where the emulator reads or writes what ends up at the local path (config, log)."""

    def install(self, local: Path) -> None:
        """Makes the local file available at emulator_file(local)."""

    def collect(self, local: Path) -> None:
        """Brings the emulator's file emulator_file(local) to the local path."""


@dataclass(frozen=True)
class NamespacePlaces:
    """The lane's namespaces: emu and mobile share this machine's file system."""
    lane: LaneAddresses

    def program(self, name: str, where: str) -> str:
        return str(program_path(name))

    def start(self, programs: ProgramGroup, name: str, where: str, argv: Sequence[str]) -> Program:
        return programs.start(name, self.lane.ns.emu if where == "emu" else self.lane.ns.mobile, argv)

    def udp_bound(self, program: Program, port: int) -> bool:
        return _udp_port_bound(program.proc.pid, port)

    def private(self) -> PrivateFiles:
        return LocalPrivate(prefix=self.lane.private_prefix)

    def control(self, socket_path: str) -> Control:
        return SocketControl(socket_path)

    def emulator_file(self, local: Path) -> Path:
        return local.resolve()

    def install(self, local: Path) -> None:
        pass

    def collect(self, local: Path) -> None:
        pass


@dataclass(frozen=True)
class SessionResult:
    log_path: Path
    config_path: Path
    start_realtime_us: int | None     # CLOCK_REALTIME µs of t = 0, None if never started
    exit_codes: dict[str, int]        # per program; negative = killed by that signal
    stderr: dict[str, str]
    stop_acknowledged: bool           # the emulator confirmed STOP: its log is complete
    # Who ended the emulator before squall stopped it (its stderr: a STOP on the control socket
    # or a signal, with pid, command and uid); None when squall did, or it does not say.
    stopped_by: str | None = None


class LinkSession:
    def __init__(self, lane: LaneAddresses, link: LinkConfig, workdir: Path, *,
                 seed: int = 1, replication: int = 0, ready_timeout_s: float = READY_TIMEOUT_S,
                 priority: int | None = None, router: Routers | RouterConfig | None = None,
                 places: LinkPlaces | None = None, release_ahead_us: int = 0,
                 cell: Sequence[CellHost] = ()):
        """`router`: the scenario's routers by direction (a RouterConfig alone: the downlink's), any
        engine; only an engine that runs in the emulator (engines.py) puts a router into the
        emulator's configuration (the router stage of its direction).
        `release_ahead_us`: the emulator's `release_ahead` (emulator/CONFIG.md; 0 = off).
        `places`: where the programs run (default: the lane's namespaces).
        `cell`: a wireless cell's further mobile hosts (testbed/cell_addresses.py, built in the
        lane's namespaces by testbed/lanes/cell_hosts.py): each gets its own mobile NPA, and the
        emulator a cell of 1 + len(cell) hosts."""
        self.lane = lane
        self.places: LinkPlaces = places if places is not None else NamespacePlaces(lane)
        self.link = link
        self.workdir = Path(workdir)
        self.seed = seed
        self.replication = replication
        self.release_ahead_us = release_ahead_us
        self.cell = tuple(cell)
        self.ready_timeout_s = ready_timeout_s
        self.router = in_emulator(router)
        # SCHED_FIFO priority of the emulator; 0 = normal
        self.priority = realtime_priority() if priority is None else priority
        self.npa_priority = npa_priority_for(self.priority)
        self.token = secrets.token_hex(8)
        self.log_path = self.workdir / "emulator.log"
        self.config_path = self.workdir / "emulator.conf"
        self.programs = ProgramGroup(self.workdir)
        self.private: PrivateFiles | None = None
        self.control: Control | None = None
        self.start_realtime_us: int | None = None
        self.ready_lines: dict[str, str] = {}
        self.result: SessionResult | None = None

    # --- context manager ---------------------------------------------------------
    def __enter__(self) -> "LinkSession":
        try:
            self.open()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- bringing the link up ------------------------------------------------------
    def open(self) -> None:
        """bring_up() and start(): the link is running and t = 0 has been set."""
        self.bring_up()
        self.start()

    def bring_up(self) -> None:
        """Writes the configuration, starts the emulator and the NPAs, waits until ready.
        Packets sent now are dropped by the emulator (counted as `prestart`)."""
        self.private = self.places.private()
        self.write_config()
        tokens = {where: self.private.write(where, TOKEN_FILE, f"{self.token}\n".encode())
                  for where in ("emu", "mobile")}
        self._start_emulator(tokens["emu"])
        self._start_npas(tokens)
        for where in tokens:      # read by all three: no copy stays behind
            self.private.remove(where, TOKEN_FILE)
        self.control = self.places.control(self.private.path("emu", CONTROL_SOCKET))

    def start(self) -> int:
        """Sends START; returns CLOCK_REALTIME µs of t = 0 (also in start_realtime_us)."""
        if self.control is None:
            raise SessionError("START before bring_up(): the emulator is not running")
        try:
            self.start_realtime_us = self.control.start()
        except ControlError as e:
            raise SessionError(f"{e}; emulator stderr: {self.programs.programs[EMULATOR].stderr().strip()}")
        return self.start_realtime_us

    def state(self) -> LinkState:
        """What is inside the link now (the emulator's STATE)."""
        if self.control is None:
            raise SessionError("STATE before bring_up(): the emulator is not running")
        try:
            return self.control.state()
        except ControlError as e:
            raise SessionError(str(e)) from None

    def dead_programs(self) -> dict[str, tuple[int, str]]:
        """Programs of the link that have exited: name -> (exit code, stderr)."""
        return {name: (code, self.programs.programs[name].stderr())
                for name, code in self.programs.exit_codes().items() if code is not None}

    def write_config(self) -> None:
        """The emulator's configuration file, with the router stage of an emulator-engine router."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        if self.private is None:
            self.private = self.places.private()
        # Listening only where the NPAs are: the carrier address (the router NPA reaches it
        # inside the emulation host), never 0.0.0.0. The token is not in the file.
        run = emulator_config.EmulatorRun(seed=self.seed, replication=self.replication, token=None,
                                          log_path=self.places.emulator_file(self.log_path),
                                          listen=self.lane.emulator_for_mobile,
                                          control=self.private.path("emu", CONTROL_SOCKET),
                                          release_ahead_us=self.release_ahead_us,
                                          hosts=1 + len(self.cell),
                                          addresses=(self.lane.mobile_host, *(h.address for h in self.cell))
                                          if self.cell else ())
        emulator_config.write(self.config_path, self.link, run, router=self.router)
        self.places.install(self.config_path)

    def _start_emulator(self, token_file: str) -> None:
        config = self.places.emulator_file(self.config_path)
        self.places.start(self.programs, EMULATOR, "emu",
                          scheduled([self.places.program("squall-emulator", "emu"), "--token-file", token_file,
                                     str(config)], self.priority))
        self._wait_bound(EMULATOR, self.lane.emulator_port)

    def _start_npas(self, token_files: dict[str, str]) -> None:
        a = self.lane
        cell_routes = [w for host in self.cell for w in ("--route", f"{host.address}/32")]
        self.places.start(self.programs, ROUTER_NPA, "emu", scheduled([
            self.places.program("squall-npa", "emu"), "--role", "router", "--emulator", a.emulator_for_router,
            "--token-file", token_files["emu"], "--dev", a.emu_wireless.dev, "--address", a.emu_wireless.cidr,
            "--peer", a.mobile_wireless.address, *cell_routes], self.npa_priority))
        self.places.start(self.programs, MOBILE_NPA, "mobile", scheduled([
            self.places.program("squall-npa", "mobile"), "--role", "mobile", "--emulator", a.emulator_for_mobile,
            "--token-file", token_files["mobile"], "--dev", a.mobile_wireless.dev, "--address", a.mobile_wireless.cidr,
            "--peer", a.emu_wireless.address, "--route", a.fixed_net], self.npa_priority))
        for host in self.cell:   # the lane's namespaces only: one file system for the token
            self.programs.start(cell_npa(host), host.ns, scheduled([
                self.places.program("squall-npa", "mobile"), "--role", "mobile", "--host", str(host.index),
                "--emulator", a.emulator_for_mobile, "--token-file", token_files["mobile"],
                "--dev", host.wireless.dev, "--address", host.wireless.cidr, "--peer", a.emu_wireless.address,
                "--route", a.fixed_net], self.npa_priority))
        for name in (ROUTER_NPA, MOBILE_NPA, *map(cell_npa, self.cell)):
            try:
                self.ready_lines[name] = self.programs.wait_ready(name, "ready", self.ready_timeout_s)
            except ReadyTimeout as e:
                raise SessionError(f"the {name} did not come up: {e}") from None

    def _wait_bound(self, name: str, port: int) -> None:
        """Waits until the program has a UDP socket bound to port (seen in its namespace)."""
        program = self.programs.programs[name]
        failed = wait_for(program, lambda: self.places.udp_bound(program, port), self.ready_timeout_s)
        if failed is not None:
            raise SessionError(f"{program.describe()} {failed.said(f'bind UDP port {port}', ' at start-up')}; "
                               f"its stderr: {program.stderr().strip() or '(empty)'}")

    # --- taking it down --------------------------------------------------------------
    def close(self) -> SessionResult:
        if self.result is not None:
            return self.result
        acknowledged = False
        ended_before = EMULATOR in self.programs.programs and self.programs.exit_codes()[EMULATOR] is not None
        try:
            if self.control is not None and self.programs.exit_codes().get(EMULATOR, 0) is None:
                try:
                    self.control.stop()
                    acknowledged = True
                except ControlError:
                    pass   # SIGTERM below still makes it write the trailer
                self.programs.wait_exit(EMULATOR, 2.0)
        finally:
            if self.control is not None:
                self.control.close()
            codes = self.programs.stop_all()
            if self.private is not None:
                self.private.close()
            self._collect_log()
            stderr = self.programs.stderr()
            stopped_by = emulator_stopped_by(stderr.get(EMULATOR, "")) if ended_before else None
            self.result = SessionResult(self.log_path, self.config_path, self.start_realtime_us,
                                        codes, stderr, acknowledged, stopped_by)
        return self.result

    def _collect_log(self) -> None:
        """The emulator's log into the work directory (where the link's programs ran elsewhere)."""
        try:
            self.places.collect(self.log_path)
        except (OSError, RuntimeError):
            pass     # a log the emulator never wrote stays absent; replication reports the trailer

    @property
    def top_priority(self) -> int:
        """The highest SCHED_FIFO priority this session's programs run at (0: all normal)."""
        return max(self.priority, self.npa_priority)

    @property
    def mtu(self) -> dict[str, int]:
        """The TUN MTU each NPA reported in its ready line (`ready <dev> mtu <N>`)."""
        out = {}
        for name, line in self.ready_lines.items():
            words = line.split()
            if "mtu" in words and words.index("mtu") + 1 < len(words):
                out[name] = int(words[words.index("mtu") + 1])
        return out


def cell_npa(host: CellHost) -> str:
    """The program name of a cell host's mobile NPA: npa-mobile2, ..."""
    return f"{MOBILE_NPA}{host.index}"


def _udp_port_bound(pid: int, port: int) -> bool:
    """True if the namespace of pid has a UDP socket bound to port (any address)."""
    for table in ("udp", "udp6"):
        try:
            text = Path(f"/proc/{pid}/net/{table}").read_text()
        except OSError:
            return False
        if udp_table_binds(text, port):
            return True
    return False


def udp_table_binds(text: str, port: int) -> bool:
    """True if a /proc/net/udp(6) table has a socket bound to port (any address)."""
    suffix = f":{port:04X}"
    rows = text.splitlines()[1:]
    return any(len(f) > 1 and f[1].endswith(suffix) for f in (row.split() for row in rows))


# --- what the emulator's stderr says about how the run ended --------------------------------

_STOPPED_BY = re.compile(r"squall-emulator: (?:STOP on the control socket|(sig\w+) received) from "
                         r"(pid \d+ \(.*?, uid \d+\)), ending the run")
_ROLE_TAKEN = re.compile(r"squall-emulator: refused a HELLO for the (\w+) role from (\S+): the \w+ NPA at (\S+) "
                         r"is alive")
_UDP_CONTROL = re.compile(r"squall-emulator: refused a (START|STOP) datagram from (\S+):")


def emulator_stopped_by(stderr: str) -> str | None:
    """Who ended the run, from the emulator's stderr: "a STOP on its control socket from pid 4242
    (python3, uid 0)" or "SIGTERM from pid 77 (kill, uid 0)"; None if it does not say."""
    m = _STOPPED_BY.search(stderr)
    if m is None:
        return None
    return f"{m.group(1).upper()} from {m.group(2)}" if m.group(1) else f"a STOP on its control socket from {m.group(2)}"


def describe_death(name: str, code: int | None, stderr: str) -> str:
    """Why a link program ended during a replication, as the start of a sentence."""
    if name == EMULATOR:
        by = emulator_stopped_by(stderr)
        if by is not None:
            return f"the emulator was stopped by {by}, not by squall (exit code {code})"
    return f"the {name} exited with code {code}"


def intrusions(stderr: str) -> list[str]:
    """What the emulator refused from someone holding the run token: a second NPA taking a live
    NPA's role, START/STOP datagrams (emulator/PROTOCOL.md). One sentence per kind."""
    found = []
    taken = _ROLE_TAKEN.findall(stderr)
    for role in dict.fromkeys(r for r, _, _ in taken):
        sources = sorted({src for r, src, _ in taken if r == role})
        holder = next(h for r, _, h in taken if r == role)
        found.append(f"a second NPA tried to take the {role} role (HELLO with the run token from "
                     f"{', '.join(sources)} while the {role} NPA at {holder} was up; refused)")
    control = _UDP_CONTROL.findall(stderr)
    if control:
        kinds = " and ".join(dict.fromkeys(kind for kind, _ in control))
        sources = sorted({src for _, src in control})
        found.append(f"someone sent {kinds} datagrams to the emulator from {', '.join(sources)} (refused: run "
                     "control is on the emulator's control socket only)")
    return found
