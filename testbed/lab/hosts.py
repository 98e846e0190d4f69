"""The three lab hosts of a testbed file, reached over SSH: the `Testbed` and `Link`
protocols of testbed/link/testbed.py and the `Host` of testbed/hosts.py (docs/lab-hosts.md).

    with SshTestbed.open(testbed_file.load(path)) as testbed:   # masters, checks, clocks
        replication.run(testbed, job, work, stop)
        testbed.reset()                                          # between replications
    # closed: programs killed, sysctls/routes restored, TUNs gone, remote run dir removed

Every command runs through one OpenSSH master connection per host (testbed/lab/ssh.py);
programs' stdout/stderr stream back into the results as they are written, so readiness
lines and summaries are read as on namespaces. Files a host writes (captures, generator
logs, the emulator log, nginx's logs) go to `<work_dir>/squall-<run id>/<cell>/<rep>/` on
that host and are fetched into the replication directory.
"""
from __future__ import annotations

import secrets
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Sequence

from testbed.link import control as emulator_control
from testbed.link import session as link_session
from testbed import tcp_apply
from testbed.addresses import Interface, LaneAddresses, Namespaces
from testbed.lanes.http_server import HttpServerConfig
from testbed.scenario.link_section import LinkConfig
from testbed.processes import Program, ProgramGroup
from testbed.router.directions import Routers
from testbed.router.plan import RouterConfig
from testbed.router.session import RouterRun
from testbed.lab.ssh import SshClient, SshError
from testbed.lab.services import SshCapture, SshHttpServer
from testbed.lab.testbed_file import LabHost, LabTestbed
from testbed.tcp_apply import HostTcp
from testbed.tcp_profile import TcpProfile

GENERATORS = ("squall-http", "squall-bulk", "squall-udp")
ENDPOINT_PROGRAMS = (*GENERATORS, "squall-tcp-sampler")     # the sampler runs beside each capture
PROGRAMS = {"fixed": ENDPOINT_PROGRAMS, "emu": ("squall-emulator", "squall-npa", "squall-control"),
            "mobile": ("squall-npa", *ENDPOINT_PROGRAMS)}
TOOLS = {"fixed": ("ip", "sysctl", "tcpdump", "tar", "kill", "cat", "ss"),
         "emu": ("ip", "sysctl", "tar", "kill", "cat", "chrt", "mktemp"),
         "mobile": ("ip", "sysctl", "tcpdump", "tar", "kill", "cat", "ss", "chrt", "mktemp")}
# The session's private directory on emu and mobile (mktemp -d: mode 0700). In /tmp, not
# in the work_dir: the control socket's path must fit a Unix socket's 107 bytes.
PRIVATE_ROOT = "/tmp"


# A file only its owner can read; a run's leftover private directories ($1 is their prefix).
_WRITE_PRIVATE = 'umask 077 && cat > "$1"'
_REMOVE_PRIVATE = 'rm -rf -- "$1"*'


def private_prefix(run_id: str) -> str:
    """What every private directory of the run starts with (a leftover is found by it)."""
    return f"{PRIVATE_ROOT}/{run_id}-p."

# Constant scripts, run as `sh -c SCRIPT sh WORD...`: what they check is in the words.
# _CHECK's words are KIND:VALUE; it prints one line per problem.
_CHECK = """for word; do
  v=${word#*:}
  case $word in
    program:*) [ -x "$v" ] || echo "program $v is missing or not executable" ;;
    tool:*) command -v "$v" >/dev/null 2>&1 || echo "tool $v is not on PATH" ;;
    device:*) ! ip link show dev "$v" >/dev/null 2>&1 ||
        echo "device $v exists already (another run, or a leftover: remove it)" ;;
    env:*) env --default-signal=INT true 2>/dev/null ||
        echo "env lacks --default-signal (GNU coreutils 8.31 or later is needed)" ;;
    work_dir:*) mkdir -p -- "$v" || echo "cannot create the work directory $v" ;;
  esac
done"""
# The first lines of the kernel's and the tools' versions; $1 is nginx.
_HOST_INFO = ("uname -srvm; (tcpdump --version 2>&1 || echo absent) | head -n 1; "
              "(ip -V 2>&1 || echo absent) | head -n 1; (\"$1\" -v 2>&1 || echo absent) | head -n 1")


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

    @property
    def label(self) -> str:
        return f"the {self.role} host ({self.lab.ssh.label()})"

    def run(self, argv: Sequence[str], *, check: bool = True, timeout: float = 30.0,
            input: str | None = None) -> subprocess.CompletedProcess[str]:
        return self.client.run(argv, check=check, timeout=timeout, input=input)

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

    def write_file(self, path: Path, data: bytes) -> None:
        self.client.write_bytes(path, data)

    def fetch(self, path: Path, local: Path) -> None:
        self.client.fetch(path, local)

    def read_proc(self, paths: Sequence[str]) -> str:
        # a missing file (/proc/net/snmp6 where IPv6 is off): cat goes on to the next
        return self.run(["cat", *paths], check=False, timeout=15.0).stdout


# --- the link --------------------------------------------------------------------------

class SshControl:
    """START/STATE/STOP on the emulation host: `squall-control SOCKET start|state|stop` through the SSH
    connection, so neither crosses the management network in clear."""

    def __init__(self, host: SshHost, socket_path: str):
        self.host, self.socket_path = host, socket_path

    def start(self, timeout_s: float = 5.0) -> int:
        return emulator_control.parse_started(self._command("start", timeout_s), self._where())

    def state(self, timeout_s: float = 5.0) -> emulator_control.LinkState:
        return emulator_control.parse_state(self._command("state", timeout_s), self._where())

    def stop(self, timeout_s: float = 5.0) -> None:
        emulator_control.check_stopped(self._command("stop", timeout_s), self._where())

    def close(self) -> None:
        pass

    def _where(self) -> str:
        return f"{self.socket_path} on the emu host ({self.host.lab.ssh.label()})"

    def _command(self, command: str, timeout_s: float) -> str:
        argv = [self.host.program("squall-control"), "--timeout", f"{timeout_s:g}s", self.socket_path, command]
        try:
            proc = self.host.run(argv, check=False, timeout=timeout_s + 20)
        except (SshError, subprocess.TimeoutExpired) as e:
            raise emulator_control.ControlError(f"{command.upper()} to the emulator at {self._where()}: {e}") from None
        if proc.returncode != 0:
            raise emulator_control.ControlError(
                f"{command.upper()} to the emulator at {self._where()} failed (squall-control exit "
                f"{proc.returncode}): {proc.stderr.strip() or '(no message)'}")
        return proc.stdout.strip()


class SshPrivate:
    """link_session.PrivateFiles: a `mktemp -d` directory (0700) named after the run in /tmp
    on emu and on mobile; files written under umask 077 through the SSH connection."""

    def __init__(self, emu: SshHost, mobile: SshHost):
        self.hosts = {"emu": emu, "mobile": mobile}
        self.dirs: dict[str, str] = {}
        for where, host in self.hosts.items():
            template = private_prefix(host.run_root.name) + "XXXXXX"
            self.dirs[where] = host.run(["mktemp", "-d", template]).stdout.strip()

    def path(self, where: str, name: str) -> str:
        return f"{self.dirs[where]}/{name}"

    def write(self, where: str, name: str, data: bytes) -> str:
        path = self.path(where, name)
        self.hosts[where].client.run(["sh", "-c", _WRITE_PRIVATE, "sh", path], input=data)
        return path

    def remove(self, where: str, name: str) -> None:
        self.hosts[where].run(["rm", "-f", "--", self.path(where, name)], check=False)

    def close(self) -> None:
        for where, directory in self.dirs.items():
            try:
                self.hosts[where].run(["rm", "-rf", "--", directory], check=False)
            except (SshError, subprocess.TimeoutExpired):
                pass       # the testbed's close removes the run's leftovers


@dataclass(frozen=True)
class SshPlaces:
    """link_session.LinkPlaces on the lab's emu and mobile hosts."""
    emu: SshHost
    mobile: SshHost

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

    def private(self) -> SshPrivate:
        return SshPrivate(self.emu, self.mobile)

    def control(self, socket_path: str) -> SshControl:
        return SshControl(self.emu, socket_path)

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
        emu_fixed=Interface("emu", "", "", 32),
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
    tcp: dict[str, HostTcp] = field(default_factory=dict)     # fixed, mobile: what the profile changed
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
        testbed.tcp = {role: HostTcp(host, restorable=True) for role, host in
                       (("fixed", testbed.fixed), ("mobile", testbed.mobile))}
        testbed.clocks = testbed.measure_clocks()
        return testbed

    def roles(self) -> dict[str, SshHost]:
        return {"fixed": self.fixed, "emu": self.emu, "mobile": self.mobile}

    def check(self, *, needs_nginx: bool, needs_tc: bool) -> None:
        """One round trip per host lists what it lacks; all problems in one LabError."""
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
            words = ([f"program:{p}" for p in programs] + [f"tool:{t}" for t in tools]
                     + [f"device:{d}" for d in devices] + ["env:", f"work_dir:{host.run_root}"])
            out = host.run(["sh", "-c", _CHECK, "sh", *words], check=False).stdout
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
        info = {}
        for role, host in self.roles().items():
            out = host.run(["sh", "-c", _HOST_INFO, "sh", host.lab.nginx], check=False).stdout
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
             router: Routers | RouterConfig | None = None) -> link_session.LinkSession:
        places = SshPlaces(self.emu, self.mobile)
        return link_session.LinkSession(lab_addresses(self.lab), link, workdir, seed=seed,
                                        replication=replication, router=router, places=places)

    def router(self, config: Routers | RouterConfig, rep_dir: Path) -> RouterRun:
        """tc on the emulation host's TUN; engine "emulator": notes and the fetched log's trailer.
        squall makes no scratch devices on a lab host: a qdisc kind its kernel lacks is
        reported by the failing tc batch line, not probed for beforehand."""
        return RouterRun(self.emu, config, rep_dir, dev=self.lab.emu.wireless_dev, probe_kernel=False)

    def apply_tcp(self, profile: TcpProfile) -> dict:
        settings = tcp_apply.apply(profile, list(self.tcp.values()))
        settings["kernels"] = {role: tcp.kernel() for role, tcp in self.tcp.items()}   # the hosts' own
        return settings

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
            host.client.kill_started()
        problems = []
        for tcp in self.tcp.values():      # sysctls and routes back, the TCP metrics cache flushed
            problems += tcp.restore()
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
                # A session that never closed leaves its private directory (a control socket).
                host.run(["sh", "-c", _REMOVE_PRIVATE, "sh", private_prefix(self.run_id)], check=False)
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
