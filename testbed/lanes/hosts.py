"""The hosts of a lane: network namespaces of this machine behind testbed.hosts' interface
(and a `Testbed` of testbed/link/testbed.py)."""
from __future__ import annotations

import functools
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from testbed import netns, tcp_apply
from testbed.addresses import LaneAddresses
from testbed.hosts import Host
from testbed import cpu_wait
from testbed.lanes import lane as lanes
from testbed.lanes.capture import Capture
from testbed.lanes.http_server import HttpServer, HttpServerConfig
from testbed.link.session import LinkSession
from testbed.paths import bin_dir
from testbed.processes import Program, ProgramGroup
from testbed.router.directions import Routers
from testbed.router.plan import RouterConfig
from testbed.router.session import RouterRun
from testbed.scenario.link_section import LinkConfig
from testbed.tcp_apply import HostTcp
from testbed.tcp_profile import TcpProfile


@dataclass(frozen=True)
class NamespaceHost:
    role: str
    ns: str
    address: str

    @property
    def label(self) -> str:
        return f"namespace {self.ns}"

    def run(self, argv: Sequence[str], *, check: bool = True, timeout: float = 30.0,
            input: str | None = None) -> subprocess.CompletedProcess[str]:
        return netns.run_in(self.ns, argv, check=check, timeout=timeout, input=input)

    def program(self, name: str) -> str:
        return str(bin_dir() / name)

    def files(self, work: Path) -> Path:
        return Path(work).resolve()     # the namespaces share this machine's file system

    def start(self, name: str, argv: Sequence[str], workdir: Path) -> Program:
        program = ProgramGroup(Path(workdir)).start(name, self.ns, argv)
        group = cpu_wait.place(self.ns, name, program.proc.pid)
        program.cpu_wait = functools.partial(cpu_wait.waited_us, group) if group is not None else None
        return program

    def capture(self, dev: str, path: Path, bpf_filter: str = "") -> Capture:
        return Capture(self.ns, dev, path, bpf_filter)

    def http_server(self, port: int, run_dir: Path, pages: Sequence[Sequence[int]]) -> HttpServer:
        return HttpServer(HttpServerConfig(self.ns, self.address, port, run_dir, pages))

    def fetch(self, path: Path, local: Path) -> None:
        if Path(path).resolve() != Path(local).resolve():
            shutil.copyfile(path, local)

    def read_proc(self, paths: Sequence[str]) -> str:
        return "".join(netns.read_in(self.ns, paths))      # no process started


@dataclass
class NamespaceTestbed:
    """Lane `number`: sqN-fixed, sqN-emu, sqN-mobile (docs/testbed.md)."""
    addr: LaneAddresses

    @classmethod
    def create(cls, number: int) -> "NamespaceTestbed":
        return cls(lanes.create(number))

    @property
    def label(self) -> str:
        return f"lane {self.addr.lane}"

    @property
    def fixed(self) -> NamespaceHost:
        return NamespaceHost("fixed", self.addr.ns.fixed, self.addr.fixed_host)

    @property
    def emu(self) -> NamespaceHost:
        return NamespaceHost("emu", self.addr.ns.emu, "")

    @property
    def mobile(self) -> NamespaceHost:
        return NamespaceHost("mobile", self.addr.ns.mobile, self.addr.mobile_host)

    @property
    def capture_points(self) -> dict[str, tuple[Host, str]]:
        return {"fixed": (self.fixed, self.addr.fixed_eth.dev),
                "mobile": (self.mobile, self.addr.mobile_wireless.dev)}

    def link(self, link: LinkConfig, workdir: Path, seed: int, replication: int,
             router: Routers | RouterConfig | None = None) -> LinkSession:
        return LinkSession(self.addr, link, workdir, seed=seed, replication=replication, router=router)

    def router(self, config: Routers | RouterConfig, rep_dir: Path) -> RouterRun:
        return RouterRun(self.emu, config, rep_dir, dev=self.addr.emu_wireless.dev)

    def apply_tcp(self, profile: TcpProfile) -> dict:
        # The lane is rebuilt for a fresh replication: nothing to record or restore.
        return tcp_apply.apply(profile, [HostTcp(self.fixed, restorable=False),
                                         HostTcp(self.mobile, restorable=False)])

    def describe(self) -> dict:
        return {"backend": "namespaces", "lane": self.addr.lane,
                "namespaces": list(self.addr.ns.all()), "fixed_host": self.addr.fixed_host,
                "mobile_host": self.addr.mobile_host}
