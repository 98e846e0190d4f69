"""A host of a replication behind one small interface, and what a host hands out.

testbed/run/replication.py talks only to a `Testbed` (testbed/link/testbed.py: three `Host`s,
the link, the router, the TCP profile); testbed/lanes/hosts.py implements these with the
network namespaces of one lane (`ip netns exec`), testbed/lab/hosts.py with three lab hosts
over SSH. Nothing here leaks lane names into a replication, and nothing here names a type
of a part above it (the link's, the router's or the scenario's): a `Host` runs programs.
"""
from __future__ import annotations

import subprocess
from contextlib import AbstractContextManager
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Protocol, Sequence

if TYPE_CHECKING:      # the interface names the data it takes and returns, no implementation
    from testbed.processes import Ending, Program


class Capture(Protocol):
    """tcpdump on one device of a host (testbed/lanes/capture.py, testbed/lab/services.py)."""
    ending: Ending | None              # after the context: how tcpdump ended
    stop_requested_us: int | None      # CLOCK_REALTIME µs when squall asked it to stop

    def __enter__(self) -> Capture: ...

    def __exit__(self, *exc: object) -> None: ...


class HttpServer(Protocol):
    """nginx on a host (testbed/lanes/http_server.py, testbed/lab/services.py)."""
    ending: Ending | None              # after the context: how nginx ended

    def __enter__(self) -> HttpServer: ...

    def __exit__(self, *exc: object) -> None: ...


class Router(Protocol):
    """The router of one replication on the emulation host (testbed/router/session.py):
    applied on entering, torn down on leaving."""

    @property
    def finishes_after_link(self) -> bool:
        """finish() needs the link closed first."""

    def start_monitor(self, t0_realtime_us: int | None = None) -> None: ...

    def finish(self) -> dict:
        """Stops the monitor, stores and returns the final statistics."""

    def __enter__(self) -> Router: ...

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None: ...


class Host(Protocol):
    """One host of the testbed: the fixed host, the emulation host or the mobile host."""
    role: str           # "fixed" | "emu" | "mobile"
    address: str        # the testbed address flows use to reach it ("" for emu)

    @property
    def label(self) -> str:
        """The host in messages: "namespace sq3-emu", "the emu host (root@192.0.2.11)"."""

    def run(self, argv: Sequence[str], *, check: bool = True, timeout: float = 30.0,
            input: str | None = None) -> subprocess.CompletedProcess[str]:
        """argv on the host, every word as it is (no shell between); `input` is its stdin."""

    def program(self, name: str) -> str:
        """The path of squall's C program `name` on this host."""

    def files(self, work: Path) -> Path:
        """Where on this host its programs write the files of the replication whose results
        directory is `work`; fetch() brings them into `work`."""

    def start(self, name: str, argv: Sequence[str], workdir: Path) -> Program:
        """Starts argv in the background; its stdout/stderr go to workdir/<name>.stdout|.stderr
        (in the results)."""

    def capture(self, dev: str, path: Path, bpf_filter: str = "") -> AbstractContextManager[Capture]:
        """tcpdump on dev while the context lasts, written to path; its stderr goes to
        `<path>.stderr` in the results, and after the context `ending` (testbed.processes.Ending)
        says whether it ended by squall's SIGINT. Leaving the context twice is harmless."""

    def http_server(self, port: int, run_dir: Path,
                    pages: Sequence[Sequence[int]]) -> AbstractContextManager[HttpServer]:
        """nginx serving the pages while the context lasts; after it, `ending` says whether
        nginx ended by squall's SIGQUIT."""

    def fetch(self, path: Path, local: Path) -> None:
        """Copies a file the host wrote into the results (local path)."""

    def read_proc(self, paths: Sequence[str]) -> str:
        """The texts of /proc files as this host sees them (/proc/net: its network namespace's),
        one after the other; a missing file is left out."""
