"""The three hosts of a replication behind one small interface.

testbed/replication.py talks only to a `Testbed` (three `Host`s, the link, the router,
the TCP profile); this module implements it with the network namespaces of one lane
(`ip netns exec`); testbed/ssh_hosts.py implements it with three lab hosts over SSH.
Nothing here leaks lane names into a replication.
"""
from __future__ import annotations

import shutil
import subprocess
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, Sequence

from . import lane as lanes
from . import netns, tcp_profile
from .addresses import LaneAddresses
from .capture import Capture
from .http_server import HttpServer, HttpServerConfig
from .link import LinkConfig
from .link_session import LinkSession, bin_dir
from .processes import Program, ProgramGroup
from .router_config import RouterConfig
from .router_session import RouterRun


class Host(Protocol):
    """One host of the testbed: the fixed host, the emulation host or the mobile host."""
    role: str           # "fixed" | "emu" | "mobile"
    address: str        # the testbed address flows use to reach it ("" for emu)

    def run(self, argv: Sequence[str], *, check: bool = True,
            timeout: float = 30.0) -> subprocess.CompletedProcess[str]: ...

    def program(self, name: str) -> str:
        """The path of squall's C program `name` on this host."""

    def files(self, work: Path) -> Path:
        """Where on this host its programs write the files of the replication whose results
        directory is `work`; fetch() brings them into `work`."""

    def start(self, name: str, argv: Sequence[str], workdir: Path) -> Program:
        """Starts argv in the background; its stdout/stderr go to workdir/<name>.stdout|.stderr
        (in the results)."""

    def capture(self, dev: str, path: Path, bpf_filter: str = "") -> AbstractContextManager[Capture]:
        """tcpdump on dev while the context lasts, written to path."""

    def http_server(self, port: int, run_dir: Path,
                    pages: Sequence[Sequence[int]]) -> AbstractContextManager[HttpServer]: ...

    def read_file(self, path: Path) -> bytes: ...

    def write_file(self, path: Path, data: bytes) -> None: ...

    def fetch(self, path: Path, local: Path) -> None:
        """Copies a file the host wrote into the results (local path)."""


class Link(Protocol):
    """The emulator and the two NPAs of one replication (testbed/link_session.py)."""
    start_realtime_us: int | None

    def bring_up(self) -> None:
        """Programs running and ready, the TUNs up; packets are dropped until start()."""

    def start(self) -> int:
        """START: t = 0; returns its CLOCK_REALTIME µs."""

    def close(self) -> object: ...

    def dead_programs(self) -> dict[str, tuple[int, str]]: ...


class Testbed(Protocol):
    label: str                       # for messages, e.g. "lane 70"
    fixed: Host
    emu: Host
    mobile: Host
    capture_points: dict[str, tuple[Host, str]]   # file stem -> (host, device)

    def link(self, link: LinkConfig, workdir: Path, seed: int, replication: int,
             router: RouterConfig | None = None) -> Link:
        """`router` with engine "emulator" becomes the emulator's router stage."""

    def router(self, config: RouterConfig, rep_dir: Path) -> RouterRun: ...

    def apply_tcp(self, profile: tcp_profile.TcpProfile) -> dict: ...

    def describe(self) -> dict: ...


# --- the namespace implementation ---------------------------------------------------------

@dataclass(frozen=True)
class NamespaceHost:
    role: str
    ns: str
    address: str

    def run(self, argv: Sequence[str], *, check: bool = True,
            timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
        return netns.run_in(self.ns, argv, check=check, timeout=timeout)

    def program(self, name: str) -> str:
        return str(bin_dir() / name)

    def files(self, work: Path) -> Path:
        return Path(work).resolve()     # the namespaces share this machine's file system

    def start(self, name: str, argv: Sequence[str], workdir: Path) -> Program:
        return ProgramGroup(Path(workdir)).start(name, self.ns, argv)

    def capture(self, dev: str, path: Path, bpf_filter: str = "") -> Capture:
        return Capture(self.ns, dev, path, bpf_filter)

    def http_server(self, port: int, run_dir: Path, pages: Sequence[Sequence[int]]) -> HttpServer:
        return HttpServer(HttpServerConfig(self.ns, self.address, port, run_dir, pages))

    def read_file(self, path: Path) -> bytes:
        return Path(path).read_bytes()

    def write_file(self, path: Path, data: bytes) -> None:
        Path(path).write_bytes(data)

    def fetch(self, path: Path, local: Path) -> None:
        if Path(path).resolve() != Path(local).resolve():
            shutil.copyfile(path, local)


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
             router: RouterConfig | None = None) -> LinkSession:
        return LinkSession(self.addr, link, workdir, seed=seed, replication=replication, router=router)

    def router(self, config: RouterConfig, rep_dir: Path) -> RouterRun:
        return RouterRun(self.addr.ns.emu, config, rep_dir, bin_dir=bin_dir(), dev=self.addr.emu_wireless.dev)

    def apply_tcp(self, profile: tcp_profile.TcpProfile) -> dict:
        settings = tcp_profile.apply(profile, [self.addr.ns.fixed, self.addr.ns.mobile])
        # Keyed by role, so tcp.json reads the same on every lane and backend.
        settings["hosts"] = {"fixed": settings["hosts"][self.addr.ns.fixed],
                             "mobile": settings["hosts"][self.addr.ns.mobile]}
        return settings

    def describe(self) -> dict:
        return {"backend": "namespaces", "lane": self.addr.lane,
                "namespaces": list(self.addr.ns.all()), "fixed_host": self.addr.fixed_host,
                "mobile_host": self.addr.mobile_host}
