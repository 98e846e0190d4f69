"""Running squall-queue-monitor for a replication, and reading what it wrote.

The runner starts it on the emulation host (a lane's namespace or the lab's host) after
`apply_router` and stops it before `teardown_router`; the analysis reads `router-queue.tsv`
with `read_queue_samples`. Format: router-tc/README.md.
"""
from __future__ import annotations

import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from testbed.hosts import Host
from testbed.processes import Program

MONITOR_PROGRAM = "squall-queue-monitor"
FORMAT_VERSION = "1"


class QueueMonitorError(RuntimeError):
    """The monitor did not start, or did not end cleanly; the message says which and why."""


@dataclass(frozen=True)
class QueueSample:
    time_us: int
    object: str          # "qdisc" or "class"
    handle: str          # tc notation: "1:", "10:", "1:10"
    parent: str          # "root" or a class handle
    kind: str
    backlog_bytes: int
    backlog_pkts: int
    drops: int
    overlimits: int
    requeues: int
    marks: int | None    # None where the kernel reports no marks (every kind but RED)


@dataclass(frozen=True)
class QueueSamples:
    device: str
    interval_us: int
    t0_realtime_us: int
    samples: int | None          # from the trailer; None when the file was cut short
    missed: int | None
    rows: tuple[QueueSample, ...]

    def of(self, obj: str, handle: str) -> list[QueueSample]:
        return [r for r in self.rows if r.object == obj and r.handle == handle]


class QueueMonitor:
    """A running monitor. `start` returns once it has taken its first sample; `stop` brings
    its file to `output`."""

    NAME = "queue-monitor"       # its stdout/stderr: <output's directory>/queue-monitor.stdout|.stderr

    def __init__(self, host: Host, program: Program, remote: Path, output: Path):
        self.host, self._program, self.remote, self.output = host, program, remote, output

    @classmethod
    def start(cls, host: Host, output: Path, *, dev: str = "wl0", interval_us: int = 10_000,
              t0_realtime_us: int | None = None, ready_timeout_s: float = 10.0) -> QueueMonitor:
        """Samples `dev` on the host into the file that becomes `output` (a local path)."""
        output = Path(output)
        remote = host.files(output.parent) / output.name
        argv = [host.program(MONITOR_PROGRAM), "--dev", dev, "--output", str(remote),
                "--interval", f"{interval_us}us"]
        if t0_realtime_us is not None:
            argv += ["--t0-realtime-us", str(t0_realtime_us)]
        monitor = cls(host, host.start(cls.NAME, argv, output.parent), remote, output)
        monitor._await_ready(ready_timeout_s)
        return monitor

    def _await_ready(self, timeout_s: float) -> None:
        program, deadline = self._program, time.monotonic() + timeout_s
        while "ready" not in program.stdout().split():
            if program.proc.poll() is not None or time.monotonic() > deadline:
                err = self._stderr()
                self.kill()
                raise QueueMonitorError(f"{MONITOR_PROGRAM} in {self.host.label} did not become ready within "
                                        f"{timeout_s:g} s (exit {program.proc.returncode}): {err or 'no message'}")
            time.sleep(0.01)

    def stop(self, timeout_s: float = 10.0) -> None:
        """SIGTERM, then wait: the monitor writes its trailer and exits 0; its file is then
        at `output`."""
        proc = self._program.proc
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.kill()
            raise QueueMonitorError(f"{MONITOR_PROGRAM} in {self.host.label} did not exit within {timeout_s:g} s "
                                    "of SIGTERM; killed") from None
        if code != 0:
            err = self._stderr()
            self.kill()
            raise QueueMonitorError(f"{MONITOR_PROGRAM} in {self.host.label} exited {code}: {err or 'no message'}")
        self.host.fetch(self.remote, self.output)
        self._discard_output()

    def kill(self) -> None:
        proc = self._program.proc
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        self._discard_output()

    def _stderr(self) -> str:
        return self._program.stderr().strip()

    def _discard_output(self) -> None:
        """Its stdout ("ready") and stderr are no result of the replication."""
        self._program.stdout_path.unlink(missing_ok=True)
        self._program.stderr_path.unlink(missing_ok=True)


def read_queue_samples(path: Path) -> QueueSamples:
    header: dict[str, str] = {}
    columns: list[str] = []
    trailer: dict[str, int] = {}
    rows: list[QueueSample] = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if line.startswith("# end "):
            words = line.split()[2:]
            trailer = {k: int(v) for k, v in zip(words[::2], words[1::2])}
        elif line.startswith("# columns "):
            columns = line.split()[2:]
        elif line.startswith("# "):
            key, _, value = line[2:].partition(" ")
            header[key] = value
        elif line:
            rows.append(_row(dict(zip(columns, line.split("\t"))), path, number))
    if header.get("format") != FORMAT_VERSION:
        raise ValueError(f"{path}: not a queue monitor file of format {FORMAT_VERSION} "
                         f"(found format {header.get('format')!r})")
    return QueueSamples(header.get("device", ""), int(header["interval_us"]), int(header["t0_realtime_us"]),
                        trailer.get("samples"), trailer.get("missed"), tuple(rows))


def _row(fields: dict[str, str], path: Path, number: int) -> QueueSample:
    try:
        return QueueSample(
            int(fields["time_us"]), fields["object"], fields["handle"], fields["parent"], fields["kind"],
            int(fields["backlog_bytes"]), int(fields["backlog_pkts"]), int(fields["drops"]),
            int(fields["overlimits"]), int(fields["requeues"]),
            None if fields["marks"] == "-" else int(fields["marks"]))
    except (KeyError, ValueError) as e:
        raise ValueError(f"{path}:{number}: malformed queue sample row ({e})") from None
