"""Programs started in namespaces, owned in one place and always stopped.

Each program's stdout and stderr go to files in a work directory (never to pipes
that could fill up and block it); readiness is a line the program prints.
"""
from __future__ import annotations

import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol, Self, Sequence

from testbed import netns

TERM_GRACE_S = 3.0
# How often a program starting up is checked (a file read or a /proc table): its start-up time
# is waited for in every replication, several times over.
START_POLL_S = 0.005


@dataclass(frozen=True)
class NotReady:
    """Why a program never became ready: it exited (`exit_code`), or the time ran out (None)."""
    exit_code: int | None
    timeout_s: float

    def said(self, what: str, exit_context: str = "") -> str:
        """`exited with code N<exit_context>` or `did not <what> within T s`."""
        if self.exit_code is not None:
            return f"exited with code {self.exit_code}{exit_context}"
        return f"did not {what} within {self.timeout_s:g} s"


def wait_for(program: "Program", ready: Callable[[], bool], timeout_s: float,
             poll_s: float = START_POLL_S) -> NotReady | None:
    """Polls `ready` until it holds (None), the program exits or `timeout_s` passes (NotReady):
    the one start-up wait of every program squall starts."""
    deadline = time.monotonic() + timeout_s
    while not ready():
        code = program.proc.poll()
        if code is not None:
            return NotReady(code, timeout_s)
        if time.monotonic() >= deadline:
            return NotReady(None, timeout_s)
        time.sleep(poll_s)
    return None


@dataclass(frozen=True)
class Ending:
    """How a program ended: squall asked it to stop (`requested`, the program was still
    running then), or it had ended before; `forced`: it ignored the request and was killed."""
    requested: bool
    code: int                   # exit code; negative: killed by that signal (Popen's way)
    forced: bool = False

    @property
    def clean(self) -> bool:
        """Ended by squall's request, by itself, with exit code 0."""
        return self.requested and not self.forced and self.code == 0

    def describe(self) -> str:
        """What went wrong, as the end of a sentence ("... ended before squall stopped it
        (killed by SIGKILL)"); "" for a clean ending."""
        if self.clean:
            return ""
        if not self.requested:
            return f"ended before squall stopped it ({describe_code(self.code)})"
        if self.forced:
            return "did not end when squall asked it to and was killed"
        return f"did not end cleanly when squall stopped it ({describe_code(self.code)})"


def describe_code(code: int | None) -> str:
    """`exit code 3`, `killed by SIGKILL` (a negative code), `still running` (None)."""
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


class Stoppable(Protocol):
    """A running program: a Popen, or a lab host's RemoteProcess."""
    def poll(self) -> int | None: ...
    def send_signal(self, sig: int) -> None: ...
    def wait(self, timeout: float | None = None) -> int: ...
    def kill(self) -> None: ...


def stop_process(proc: Stoppable, sig: int, grace_s: float) -> Ending:
    """Sends sig to a running program and waits grace_s for it, then SIGKILL; says whether it
    had ended before it was asked."""
    code = proc.poll()
    if code is not None:
        return Ending(requested=False, code=code)
    proc.send_signal(sig)
    try:
        return Ending(requested=True, code=proc.wait(grace_s))
    except subprocess.TimeoutExpired:
        proc.kill()
        return Ending(requested=True, code=proc.wait(), forced=True)


class StartedInContext:
    """A program that runs while its context lasts: start() on entering, stop() on leaving
    (whatever ended the context); the class says what start and stop do."""

    def start(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class ReadyTimeout(RuntimeError):
    """A program did not print its readiness line in time (message has its stderr)."""


@dataclass
class Program:
    name: str
    argv: list[str]
    proc: subprocess.Popen
    stdout_path: Path
    stderr_path: Path
    # its time waiting for a CPU so far (µs), from its host (cpu_wait.py); None: not measured
    cpu_wait: Callable[[], int | None] | None = None

    def cpu_wait_us(self) -> int | None:
        return None if self.cpu_wait is None else self.cpu_wait()

    def stdout(self) -> str:
        return _read(self.stdout_path)

    def stderr(self) -> str:
        return _read(self.stderr_path)

    def describe(self) -> str:
        return f"{self.name} (`{' '.join(self.argv)}`)"


@dataclass
class ProgramGroup:
    """Starts programs; stop_all() ends them (SIGTERM, SIGKILL after a grace period)."""
    workdir: Path
    programs: dict[str, Program] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)

    def __enter__(self) -> "ProgramGroup":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop_all()

    def start(self, name: str, ns: str | None, argv: Sequence[str]) -> Program:
        """Starts argv in namespace ns (None: this process's namespace)."""
        if name in self.programs:
            raise ValueError(f"a program named {name} was already started in this group")
        out, err = self.workdir / f"{name}.stdout", self.workdir / f"{name}.stderr"
        with open(out, "wb") as o, open(err, "wb") as e:
            proc = netns.popen_in(ns, argv, stdin=subprocess.DEVNULL, stdout=o, stderr=e)
        program = Program(name, list(argv), proc, out, err)
        self.programs[name] = program
        return program

    def wait_ready(self, name: str, prefix: str, timeout_s: float) -> str:
        """Waits for a stdout line starting with prefix; returns it."""
        program = self.programs[name]
        failed = wait_for(program, lambda: ready_line(program, prefix) is not None, timeout_s)
        if failed is not None:
            said = failed.said(f"print '{prefix} ...'", f" before printing '{prefix} ...'")
            raise ReadyTimeout(f"{program.describe()} {said}; its stderr: {program.stderr().strip() or '(empty)'}")
        return ready_line(program, prefix) or ""

    def wait_exit(self, name: str, timeout_s: float) -> int | None:
        try:
            return self.programs[name].proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            return None

    def stop(self, name: str, grace_s: float = TERM_GRACE_S) -> int:
        """SIGTERM, then SIGKILL after grace_s; returns the exit code (negative: signal)."""
        proc = self.programs[name].proc
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(grace_s)
            except subprocess.TimeoutExpired:
                proc.kill()
        return proc.wait()

    def stop_all(self, grace_s: float = TERM_GRACE_S) -> dict[str, int]:
        for program in self.programs.values():
            if program.proc.poll() is None:
                program.proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        for program in self.programs.values():
            try:
                program.proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                program.proc.kill()
        return {name: p.proc.wait() for name, p in self.programs.items()}

    def exit_codes(self) -> dict[str, int | None]:
        return {name: p.proc.poll() for name, p in self.programs.items()}

    def stderr(self) -> dict[str, str]:
        return {name: p.stderr() for name, p in self.programs.items()}


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except FileNotFoundError:
        return ""


def ready_line(program: "Program", prefix: str) -> str | None:
    """The first stdout line of the program that starts with `prefix`."""
    return next((line for line in program.stdout().splitlines() if line.startswith(prefix)), None)
