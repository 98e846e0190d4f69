"""The three lab hosts of a testbed file, reached over SSH: the `Testbed`, `Host` and
`Link` protocols of testbed/hosts.py (docs/lab-hosts.md).

    with SshTestbed.open(testbed_file.load(path)) as testbed:   # masters, checks, clocks
        replication.run(testbed, job, work, stop)
        testbed.reset()                                          # between replications
    # closed: programs killed, sysctls/routes restored, TUNs gone, remote run dir removed

Every command runs through one OpenSSH master connection per host (testbed/ssh.py);
programs' stdout/stderr stream back into the results as they are written, so readiness
lines and summaries are read as on namespaces. Files a host writes (captures, generator
logs, the emulator log, nginx's logs) go to `<work_dir>/squall-<run id>/<cell>/<rep>/` on
that host and are fetched into the replication directory.
"""
from __future__ import annotations

import secrets
import shlex
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Sequence

from . import emulator_control, link_session, ssh_tcp, tcp_profile, wire
from .addresses import Interface, LaneAddresses, Namespaces
from .http_server import HttpServerConfig
from .link import LinkConfig
from .processes import Program, ProgramGroup
from .router_config import RouterConfig
from .router_session import RouterRun
from .ssh import SshClient, SshError
from .ssh_router import SshRouterRun
from .ssh_services import SshCapture, SshHttpServer
from .testbed_file import LabHost, LabTestbed

GENERATORS = ("squall-http", "squall-bulk", "squall-udp")
PROGRAMS = {"fixed": GENERATORS, "emu": ("squall-emulator", "squall-npa"),
            "mobile": ("squall-npa", *GENERATORS)}
TOOLS = {"fixed": ("ip", "sysctl", "tcpdump", "tar", "kill", "cat", "ss"),
         "emu": ("ip", "sysctl", "tar", "kill", "cat", "chrt"),
         "mobile": ("ip", "sysctl", "tcpdump", "tar", "kill", "cat", "ss", "chrt")}


class LabError(RuntimeError):
    """A lab host is not usable for a run (unreachable, a program or tool missing, ...)."""


# --- one host ----------------------------------------------------------------------------

@dataclass
class SshHost:
    role: str
    address: str
    lab: LabHost
    client: SshClient
    run_root: PurePosixPath                      # this run's directory on the host
    _local: dict[PurePosixPath, Path] = field(default_factory=dict)
    _made: set[PurePosixPath] = field(default_factory=set)

    def run(self, argv: Sequence[str], *, check: bool = True,
            timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
        return self.client.run(argv, check=check, timeout=timeout)

    def program(self, name: str) -> str:
        return str(self.lab.bin_dir / name)

    def files(self, work: Path) -> Path:
        work = Path(work)
        remote = self.run_root / work.parent.name / work.name
        self._local[remote] = work
        if remote not in self._made:
            self.client.run(["mkdir", "-p", str(remote / ".pids")])
            self._made.add(remote)
        return Path(str(remote))

    def local_dir(self, remote: Path) -> Path:
        """The results directory whose files this remote directory holds."""
        return self._local[PurePosixPath(str(remote))]

    def start(self, name: str, argv: Sequence[str], workdir: Path) -> Program:
        workdir = Path(workdir)
        workdir.mkdir(parents=True, exist_ok=True)
        out, err = workdir / f"{name}.stdout", workdir / f"{name}.stderr"
        pid_file = self.files(workdir) / ".pids" / f"{name}.pid"
        proc = self.client.popen(argv, out, err, pid_file)
        return Program(name, list(argv), proc, out, err)    # type: ignore[arg-type]  # Popen-like

    def capture(self, dev: str, path: Path, bpf_filter: str = "") -> SshCapture:
        return SshCapture(self, dev, Path(path), bpf_filter)

    def http_server(self, port: int, run_dir: Path, pages: Sequence[Sequence[int]]) -> SshHttpServer:
        return SshHttpServer(self, HttpServerConfig(self.role, self.address, port, Path(run_dir), pages,
                                                    nginx=self.lab.nginx))

    def read_file(self, path: Path) -> bytes:
        return self.client.read_bytes(path)

    def write_file(self, path: Path, data: bytes) -> None:
        self.client.write_bytes(path, data)

    def fetch(self, path: Path, local: Path) -> None:
        self.client.fetch(path, local)


# --- the link --------------------------------------------------------------------------

class DirectControl(emulator_control.EmulatorControl):
    """START/STOP from this process's own network to the emulator host (no namespace)."""

    def __init__(self, target: tuple[str, int], token_hex: str):
        self.target = target
        self.token = wire.parse_token(token_hex)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.seq = 0


@dataclass(frozen=True)
class SshPlaces:
    """link_session.LinkPlaces on the lab's emu and mobile hosts."""
    emu: SshHost
    mobile: SshHost
    control_target: tuple[str, int]

    def program(self, name: str, where: str) -> str:
        return (self.emu if where == "emu" else self.mobile).program(name)

    def start(self, programs: ProgramGroup, name: str, where: str, argv: Sequence[str]) -> Program:
        host = self.emu if where == "emu" else self.mobile
        if name in programs.programs:
            raise ValueError(f"a program named {name} was already started in this group")
        program = host.start(name, argv, programs.workdir)
        programs.programs[name] = program
        return program

    def udp_bound(self, program: Program, port: int) -> bool:
        # Only the emulator is waited for this way; its host's table is enough.
        text = self.emu.run(["cat", "/proc/net/udp", "/proc/net/udp6"], check=False).stdout
        return link_session.udp_table_binds(text, port)

    def control(self, token: str) -> emulator_control.EmulatorControl:
        return DirectControl(self.control_target, token)

    def emulator_file(self, local: Path) -> Path:
        return self.emu.files(Path(local).parent) / Path(local).name

    def install(self, local: Path) -> None:
        self.emu.write_file(self.emulator_file(local), Path(local).read_bytes())

    def collect(self, local: Path) -> None:
        self.emu.fetch(self.emulator_file(local), local)


def lab_addresses(lab: LabTestbed) -> LaneAddresses:
    """The lab's addresses in the shape LinkSession reads (the namespace names are roles)."""
    f, e, m = lab.fixed, lab.emu, lab.mobile
    return LaneAddresses(
        lane=0, ns=Namespaces("fixed", "emu", "mobile"),
        fixed_eth=Interface("fixed", f.capture_dev, f.address, 32),
        emu_fixed=Interface("emu", "", e.control[0], 32),
        emu_carrier=Interface("emu", "", m.emulator[0], 32),
        mobile_carrier=Interface("mobile", "", "", 32),
        emu_wireless=Interface("emu", e.wireless_dev, e.wireless_address, 32),
        mobile_wireless=Interface("mobile", m.wireless_dev, m.address, 32),
        fixed_net=m.fixed_net, wireless_net=f"{m.address}/32", emulator_port=e.emulator_port)


# --- the testbed -------------------------------------------------------------------------

@dataclass
class SshTestbed:
    lab: LabTestbed
    fixed: SshHost
    emu: SshHost
    mobile: SshHost
    run_id: str
    states: dict[str, ssh_tcp.HostState] = field(default_factory=dict)
    clocks: dict[str, dict[str, int]] = field(default_factory=dict)

    @classmethod
    def open(cls, lab: LabTestbed, *, needs_nginx: bool = True, needs_tc: bool = False) -> "SshTestbed":
        """Connects to the three hosts and checks them; LabError names what is missing."""
        run_id = f"squall-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{secrets.token_hex(3)}"
        clients: list[SshClient] = []
        try:
            hosts = {}
            for lab_host, address in ((lab.fixed, lab.fixed.address), (lab.emu, ""), (lab.mobile, lab.mobile.address)):
                client = SshClient(lab_host.ssh)
                clients.append(client)
                try:
                    client.open()
                except (SshError, subprocess.TimeoutExpired) as e:
                    raise LabError(f"{lab.path}: the {lab_host.role} host: {e}") from None
                hosts[lab_host.role] = SshHost(lab_host.role, address, lab_host, client,
                                               lab_host.work_dir / run_id)
            testbed = cls(lab, hosts["fixed"], hosts["emu"], hosts["mobile"], run_id)
            testbed.check(needs_nginx=needs_nginx, needs_tc=needs_tc)
        except BaseException:
            for client in clients:
                client.close()
            raise
        testbed.states = {role: ssh_tcp.HostState(host) for role, host in testbed.roles().items()}
        testbed.clocks = testbed.measure_clocks()
        return testbed

    def roles(self) -> dict[str, SshHost]:
        return {"fixed": self.fixed, "emu": self.emu, "mobile": self.mobile}

    def check(self, *, needs_nginx: bool, needs_tc: bool) -> None:
        """One shell script per host lists what it lacks; all problems in one LabError."""
        problems = []
        for role, host in self.roles().items():
            tools = list(TOOLS[role]) + (["tc"] if needs_tc and role == "emu" else [])
            programs = [host.program(p) for p in PROGRAMS[role]]
            if needs_tc and role == "emu":
                programs.append(host.program("squall-queue-monitor"))
            if needs_nginx and role != "emu":
                programs.append(host.lab.nginx)
            devices = [self.lab.emu.wireless_dev] if role == "emu" else \
                [self.lab.mobile.wireless_dev] if role == "mobile" else []
            script = "; ".join(
                [f"[ -x {shlex.quote(p)} ] || echo 'program {p} is missing or not executable'" for p in programs]
                + [f"command -v {shlex.quote(t)} >/dev/null 2>&1 || echo 'tool {t} is not on PATH'" for t in tools]
                + [f"! ip link show dev {shlex.quote(d)} >/dev/null 2>&1 || echo 'device {d} exists already "
                   "(another run, or a leftover: remove it)'" for d in devices]
                + ["env --default-signal=INT true 2>/dev/null || echo 'env lacks --default-signal "
                   "(GNU coreutils 8.31 or later is needed)'"]
                + [f"mkdir -p {shlex.quote(str(host.run_root))} || echo 'cannot create the work directory "
                   f"{host.run_root}'", "true"])
            out = host.client.run_shell(script, check=False).stdout
            problems += [f"the {role} host ({host.lab.ssh.label()}): {line}" for line in out.splitlines() if line]
        if problems:
            raise LabError(f"{self.lab.path}: the lab hosts cannot run squall: " + "; ".join(problems))

    def measure_clocks(self, rounds: int = 5) -> dict[str, dict[str, int]]:
        """Each host's clock minus this machine's (µs), from the `date` round trip with the
        smallest delay; for information only: the analysis never joins across hosts by time."""
        clocks = {}
        for role, host in self.roles().items():
            measured = host.client.clock_offset(rounds)
            if measured is not None:
                clocks[role] = {"offset_us": measured[0] // 1000, "round_trip_us": measured[1] // 1000}
        return clocks

    def host_info(self) -> dict[str, dict[str, str]]:
        """What each host runs, for meta.json: kernel, tool versions, squall's programs."""
        script = ("uname -srvm; (tcpdump --version 2>&1 || echo absent) | head -n 1; "
                  "(ip -V 2>&1 || echo absent) | head -n 1; ({nginx} -v 2>&1 || echo absent) | head -n 1")
        info = {}
        for role, host in self.roles().items():
            out = host.client.run_shell(script.format(nginx=shlex.quote(host.lab.nginx)), check=False).stdout
            lines = (out.splitlines() + [""] * 4)[:4]
            info[role] = {"ssh": host.lab.ssh.label(), "kernel": lines[0], "tcpdump": lines[1], "iproute2": lines[2],
                          "nginx": lines[3], "bin_dir": str(host.lab.bin_dir)}
        return info

    # --- the Testbed protocol ----------------------------------------------------------
    @property
    def label(self) -> str:
        return f"lab {self.lab.name}"

    @property
    def capture_points(self) -> dict[str, tuple[Any, str]]:
        return {"fixed": (self.fixed, self.lab.fixed.capture_dev),
                "mobile": (self.mobile, self.lab.mobile.wireless_dev)}

    def link(self, link: LinkConfig, workdir: Path, seed: int, replication: int,
             router: RouterConfig | None = None) -> link_session.LinkSession:
        places = SshPlaces(self.emu, self.mobile, self.lab.emu.control)
        return link_session.LinkSession(lab_addresses(self.lab), link, workdir, seed=seed,
                                        replication=replication, router=router, places=places)

    def router(self, config: RouterConfig, rep_dir: Path) -> RouterRun:
        """tc on the emulation host's TUN; engine "emulator": notes and the fetched log's trailer."""
        return SshRouterRun(self.emu, config, rep_dir, dev=self.lab.emu.wireless_dev)

    def apply_tcp(self, profile: tcp_profile.TcpProfile) -> dict:
        return ssh_tcp.apply(profile, [self.states["fixed"], self.states["mobile"]])

    def describe(self) -> dict:
        return {"backend": "ssh", "testbed_file": str(self.lab.path), "name": self.lab.name,
                "run_id": self.run_id, "fixed_host": self.lab.fixed.address, "mobile_host": self.lab.mobile.address,
                "hosts": {role: {"ssh": h.lab.ssh.label(), "work_dir": str(h.run_root)}
                          for role, h in self.roles().items()},
                "clock_offsets": self.measure_clocks(rounds=3)}

    # --- between replications and at the end -------------------------------------------
    def reset(self) -> list[str]:
        """A fresh start for the next replication: programs left over killed, what the TCP
        profile changed put back. Returns what could not be restored."""
        for host in self.roles().values():
            _kill_started(host.client)
        problems = []
        for state in self.states.values():
            problems += state.restore()
        for host in (self.fixed, self.mobile):      # a fresh host's TCP metrics cache is empty
            host.run(["ip", "tcp_metrics", "flush"], check=False)
        return problems

    def close(self) -> list[str]:
        """Restores every host (processes, sysctls, routes, TUNs), removes the run's directory
        on each host and closes the connections. Returns what could not be restored."""
        problems: list[str] = []
        try:
            problems += self.reset()
            for role, dev in (("emu", self.lab.emu.wireless_dev), ("mobile", self.lab.mobile.wireless_dev)):
                host = self.roles()[role]
                # Refused at the start if it existed: a TUN left now is ours (a killed NPA's).
                if host.run(["ip", "link", "show", "dev", dev], check=False).returncode == 0:
                    host.run(["ip", "link", "delete", dev], check=False)
            for host in self.roles().values():
                host.run(["rm", "-rf", "--", str(host.run_root)], check=False)
        except (SshError, subprocess.TimeoutExpired) as e:
            problems.append(f"restoring the lab hosts: {e}")
        finally:
            for host in self.roles().values():
                host.client.close()
        return problems

    def __enter__(self) -> "SshTestbed":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _kill_started(client: SshClient) -> None:
    for proc in client.started:
        if proc.poll() is None:
            proc.kill()
    for proc in client.started:
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.local.kill()
            proc.local.wait()
    client.started.clear()

