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
(`NamespacePlaces`); testbed/ssh_hosts.py gives lab hosts reached over SSH.
"""
from __future__ import annotations

import os
import secrets
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, Sequence

from . import emulator_config
from .addresses import LaneAddresses
from .emulator_control import ControlError, EmulatorControl
from .link import LinkConfig
from .processes import Program, ProgramGroup, ReadyTimeout
from .router_config import RouterConfig

REPO_ROOT = Path(__file__).resolve().parents[1]
EMULATOR, ROUTER_NPA, MOBILE_NPA = "emulator", "npa-router", "npa-mobile"
READY_TIMEOUT_S = 10.0
# The emulator and the NPAs are the clock of every experiment: on a machine shared with
# builds they run under SCHED_FIFO so that a busy CPU delays them by µs, not by a time
# slice. $SQUALL_REALTIME_PRIORITY=0 runs them as ordinary processes.
REALTIME_PRIORITY = int(os.environ.get("SQUALL_REALTIME_PRIORITY", "10"))


def scheduled(argv: list[str], priority: int = REALTIME_PRIORITY) -> list[str]:
    """argv under SCHED_FIFO at priority, if > 0 and possible (root, chrt)."""
    if priority <= 0 or os.geteuid() != 0 or shutil.which("chrt") is None:
        return argv
    return ["chrt", "--fifo", str(priority), *argv]


def bin_dir() -> Path:
    """Where the C programs are: $SQUALL_BIN_DIR, else the repository's build/bin."""
    return Path(os.environ.get("SQUALL_BIN_DIR", REPO_ROOT / "build" / "bin"))


def program_path(name: str) -> Path:
    path = bin_dir() / name
    if not os.access(path, os.X_OK):
        raise FileNotFoundError(f"{path} is missing or not executable; build it with `make build`")
    return path


class SessionError(RuntimeError):
    """The link could not be brought up; the message says which program and why."""


class LinkPlaces(Protocol):
    """Where the emulator ("emu") and the mobile NPA ("mobile") run, and how to reach them."""

    def program(self, name: str, where: str) -> str:
        """The path of squall's C program `name` on "emu" or "mobile"."""

    def start(self, programs: ProgramGroup, name: str, where: str, argv: Sequence[str]) -> Program:
        """Starts argv on "emu" or "mobile", registered in `programs` under `name`."""

    def udp_bound(self, program: Program, port: int) -> bool:
        """True once the program's host has a UDP socket bound to port."""

    def control(self, token: str) -> EmulatorControl: ...

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

    def control(self, token: str) -> EmulatorControl:
        return EmulatorControl(self.lane.ns.emu, ("127.0.0.1", self.lane.emulator_port), token)

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


class LinkSession:
    def __init__(self, lane: LaneAddresses, link: LinkConfig, workdir: Path, *,
                 seed: int = 1, replication: int = 0, ready_timeout_s: float = READY_TIMEOUT_S,
                 priority: int = REALTIME_PRIORITY, router: RouterConfig | None = None,
                 places: LinkPlaces | None = None):
        """`router`: the scenario's router, any engine; only `engine = "emulator"` puts it
        into the emulator's configuration (its router stage on the downlink).
        `places`: where the programs run (default: the lane's namespaces)."""
        self.lane = lane
        self.places: LinkPlaces = places if places is not None else NamespacePlaces(lane)
        self.link = link
        self.workdir = Path(workdir)
        self.seed = seed
        self.replication = replication
        self.ready_timeout_s = ready_timeout_s
        self.router = router if router is not None and router.engine == "emulator" else None
        self.priority = priority       # SCHED_FIFO priority of the three programs; 0 = normal
        self.token = secrets.token_hex(8)
        self.log_path = self.workdir / "emulator.log"
        self.config_path = self.workdir / "emulator.conf"
        self.programs = ProgramGroup(self.workdir)
        self.control: EmulatorControl | None = None
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
        self.write_config()
        self._start_emulator()
        self._start_npas()
        self.control = self.places.control(self.token)

    def start(self) -> int:
        """Sends START; returns CLOCK_REALTIME µs of t = 0 (also in start_realtime_us)."""
        if self.control is None:
            raise SessionError("START before bring_up(): the emulator is not running")
        try:
            self.start_realtime_us = self.control.start()
        except ControlError as e:
            raise SessionError(f"{e}; emulator stderr: {self.programs.programs[EMULATOR].stderr().strip()}")
        return self.start_realtime_us

    def dead_programs(self) -> dict[str, tuple[int, str]]:
        """Programs of the link that have exited: name -> (exit code, stderr)."""
        return {name: (code, self.programs.programs[name].stderr())
                for name, code in self.programs.exit_codes().items() if code is not None}

    def write_config(self) -> None:
        """The emulator's configuration file, with the router stage of an emulator-engine router."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        run = emulator_config.EmulatorRun(seed=self.seed, replication=self.replication, token=self.token,
                                          log_path=self.places.emulator_file(self.log_path),
                                          listen=f"0.0.0.0:{self.lane.emulator_port}")
        emulator_config.write(self.config_path, self.link, run, router=self.router)
        self.places.install(self.config_path)

    def _start_emulator(self) -> None:
        config = self.places.emulator_file(self.config_path)
        self.places.start(self.programs, EMULATOR, "emu",
                          scheduled([self.places.program("squall-emulator", "emu"), str(config)], self.priority))
        self._wait_bound(EMULATOR, self.lane.emulator_port)

    def _start_npas(self) -> None:
        a = self.lane
        self.places.start(self.programs, ROUTER_NPA, "emu", scheduled([
            self.places.program("squall-npa", "emu"), "--role", "router", "--emulator", a.emulator_for_router,
            "--token", self.token, "--dev", a.emu_wireless.dev, "--address", a.emu_wireless.cidr,
            "--peer", a.mobile_wireless.address], self.priority))
        self.places.start(self.programs, MOBILE_NPA, "mobile", scheduled([
            self.places.program("squall-npa", "mobile"), "--role", "mobile", "--emulator", a.emulator_for_mobile,
            "--token", self.token, "--dev", a.mobile_wireless.dev, "--address", a.mobile_wireless.cidr,
            "--peer", a.emu_wireless.address, "--route", a.fixed_net], self.priority))
        for name in (ROUTER_NPA, MOBILE_NPA):
            try:
                self.ready_lines[name] = self.programs.wait_ready(name, "ready", self.ready_timeout_s)
            except ReadyTimeout as e:
                raise SessionError(f"the {name} did not come up: {e}") from None

    def _wait_bound(self, name: str, port: int) -> None:
        """Waits until the program has a UDP socket bound to port (seen in its namespace)."""
        program = self.programs.programs[name]
        deadline = time.monotonic() + self.ready_timeout_s
        while not self.places.udp_bound(program, port):
            code = program.proc.poll()
            if code is not None:
                raise SessionError(f"{program.describe()} exited with code {code} at start-up; "
                                   f"its stderr: {program.stderr().strip() or '(empty)'}")
            if time.monotonic() >= deadline:
                raise SessionError(f"{program.describe()} did not bind UDP port {port} within "
                                   f"{self.ready_timeout_s:g} s; its stderr: {program.stderr().strip() or '(empty)'}")
            time.sleep(0.02)

    # --- taking it down --------------------------------------------------------------
    def close(self) -> SessionResult:
        if self.result is not None:
            return self.result
        acknowledged = False
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
            self._collect_log()
            self.result = SessionResult(self.log_path, self.config_path, self.start_realtime_us,
                                        codes, self.programs.stderr(), acknowledged)
        return self.result

    def _collect_log(self) -> None:
        """The emulator's log into the work directory (where the link's programs ran elsewhere)."""
        try:
            self.places.collect(self.log_path)
        except (OSError, RuntimeError):
            pass     # a log the emulator never wrote stays absent; replication reports the trailer

    @property
    def mtu(self) -> dict[str, int]:
        """The TUN MTU each NPA reported in its ready line (`ready <dev> mtu <N>`)."""
        out = {}
        for name, line in self.ready_lines.items():
            words = line.split()
            if "mtu" in words and words.index("mtu") + 1 < len(words):
                out[name] = int(words[words.index("mtu") + 1])
        return out


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
