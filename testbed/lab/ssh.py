"""The OpenSSH client as squall uses it: one shared master connection per host.

    with SshClient(SshTarget("root@lab-emu")) as emu:     # opens the master (ControlMaster)
        emu.run(["ip", "link"])                           # CompletedProcess, like netns.run
        proc = emu.popen(["tcpdump", ...], stdout_path, stderr_path, pid_file)
        proc.send_signal(signal.SIGINT)                   # `kill -INT <remote pid>` over SSH
        emu.fetch(remote_path, local_path)                # `ssh cat`, the file as it is
    # leaving: every process started with popen() still running is killed, master closed

Every command goes through the master connection (`-o ControlPath`), so a command costs a
round trip, not a key exchange. BatchMode: a missing key is an error, never a prompt.

A command is always an argv list. sshd hands the remote user's shell one command line, and
`SshClient.command` is the one place that line is made: every word shell-quoted, so a word
reaches the remote program as it is, whatever it contains (`$(...)`, `;`, spaces, quotes).
Scripts that need a shell are constant text run as `sh -c SCRIPT sh ARG...`, their data in
the positional parameters, never pasted into the script.
"""
from __future__ import annotations

import os
import selectors
import shlex
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

CONNECT_TIMEOUT_S = 10
MASTER_PERSIST_S = 600          # the master outlives a crashed runner by at most this long
SIGNALLED, MAX_SIGNAL = 128, 64  # a shell's exit status 128 + n: killed by signal n
# $SQUALL_SSH_TRACE=FILE: every command with its host and duration appended to FILE.
TRACE = os.environ.get("SQUALL_SSH_TRACE")


class SshError(RuntimeError):
    """A command over SSH failed; the message names the host, the command and its stderr."""


@dataclass(frozen=True)
class SshTarget:
    destination: str                       # user@host or an ssh_config alias
    port: int | None = None
    identity: str | None = None            # private key file
    options: tuple[str, ...] = ()          # extra `-o Key=Value` settings

    def label(self) -> str:
        return self.destination if self.port is None else f"{self.destination}:{self.port}"


def quote(argv: Sequence[str]) -> str:
    """argv as one shell command line: every word quoted (sshd hands the line to the user's shell)."""
    return shlex.join(str(a) for a in argv)


# Constant scripts for `sh -c SCRIPT sh ARG...`: their data are the positional parameters.
_WRITE_FILE = 'mkdir -p -- "$1" && cat > "$2" && mv -f -- "$2" "$3"'
_UNPACK_TREE = 'mkdir -p -- "$1" && tar -C "$1" -xf -'
# `env --default-signal` undoes the SIGINT/SIGQUIT ignoring of background jobs.
_START = 'pid_file=$1; shift; env --default-signal=INT,QUIT "$@" & echo $! > "$pid_file"; wait $!'


@dataclass
class SshClient:
    target: SshTarget
    control_dir: Path | None = None         # where the master's socket lives (default: a temp dir)
    started: list["RemoteProcess"] = field(default_factory=list)
    _own_dir: tempfile.TemporaryDirectory | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.control_dir is None:
            # A short path: the socket path must fit in sun_path (108 bytes).
            self._own_dir = tempfile.TemporaryDirectory(prefix="sqssh-")
            self.control_dir = Path(self._own_dir.name)

    @property
    def control_path(self) -> Path:
        assert self.control_dir is not None
        return self.control_dir / "master.sock"

    def base_argv(self, *, stdin: bool = False) -> list[str]:
        """The local ssh invocation up to the remote command (`-n` unless stdin is used)."""
        argv = ["ssh", *([] if stdin else ["-n"]), "-o", "BatchMode=yes", "-o", "ControlMaster=auto",
                "-o", f"ControlPath={self.control_path}", "-o", f"ControlPersist={MASTER_PERSIST_S}",
                "-o", f"ConnectTimeout={CONNECT_TIMEOUT_S}", "-o", "ServerAliveInterval=5",
                "-o", "LogLevel=ERROR"]
        if self.target.port is not None:
            argv += ["-p", str(self.target.port)]
        if self.target.identity:
            argv += ["-i", self.target.identity, "-o", "IdentitiesOnly=yes"]
        for option in self.target.options:
            argv += ["-o", option]
        return argv + [self.target.destination, "--"]

    def command(self, argv: Sequence[str], *, stdin: bool = False) -> list[str]:
        """The local argv that runs argv on the host; the only place a remote command line is
        made (every word quoted)."""
        return self.base_argv(stdin=stdin) + [quote(argv)]

    # --- the connection ------------------------------------------------------------------
    def __enter__(self) -> "SshClient":
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open(self) -> None:
        """Opens the master connection; SshError says why the host cannot be reached."""
        proc = subprocess.run(self.command(["true"]), capture_output=True, text=True,
                              timeout=CONNECT_TIMEOUT_S + 20)
        if proc.returncode != 0:
            raise SshError(f"cannot reach {self.target.label()} over SSH (`ssh {self.target.destination} true` "
                           f"exited {proc.returncode}): {proc.stderr.strip() or '(no message)'}")

    def close(self) -> None:
        """Kills what popen() started and is still running, then closes the master."""
        try:
            self.kill_started()
        finally:
            if self.control_path.exists():
                subprocess.run(["ssh", "-o", f"ControlPath={self.control_path}", "-O", "exit",
                                self.target.destination], capture_output=True, timeout=10)
            if self._own_dir is not None:
                self._own_dir.cleanup()

    def kill_started(self) -> None:
        """Kills what popen() started and is still running (also the local ssh of one that has
        not ended 5 s later), and forgets them: between replications and at close()."""
        for proc in self.started:
            if proc.poll() is None:
                proc.kill()
        for proc in self.started:
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.local.kill()
                proc.local.wait()
        self.started.clear()

    # --- commands ------------------------------------------------------------------------
    def run(self, argv: Sequence[str], *, check: bool = True, timeout: float = 30.0,
            input: bytes | str | None = None) -> subprocess.CompletedProcess[str]:
        """argv on the host (stdout/stderr as text); `input` is its stdin."""
        local = self.command(argv, stdin=input is not None)
        began = time.monotonic()
        proc = subprocess.run(local, input=input.encode() if isinstance(input, str) else input,
                              capture_output=True, timeout=timeout)
        line = local[-1]
        self._trace(line, began)
        result = subprocess.CompletedProcess(local, proc.returncode, proc.stdout.decode(errors="replace"),
                                             proc.stderr.decode(errors="replace"))
        if check and proc.returncode != 0:
            raise SshError(f"`{line}` on {self.target.label()} failed (exit {proc.returncode}): "
                           f"{result.stderr.strip() or '(no message)'}")
        return result

    def _trace(self, command: str, began: float) -> None:
        if TRACE:
            with open(TRACE, "a") as f:
                f.write(f"{time.time():.3f}\t{self.target.label()}\t{(time.monotonic() - began) * 1000:.1f} ms\t"
                        f"{command[:200]}\n")

    def write_bytes(self, path: str | Path, data: bytes) -> None:
        """Writes the file (its directory is created), replacing it whole."""
        self.run(["sh", "-c", _WRITE_FILE, "sh", str(Path(path).parent), f"{path}.sqtmp", str(path)], input=data)

    def fetch(self, path: str | Path, local: Path, timeout: float = 600.0) -> None:
        """Copies a file of the host into a local file, streamed (captures and logs can be
        large); FileNotFoundError when the host has no such file (nothing is written then)."""
        local = Path(local)
        partial = local.with_name(local.name + ".fetching")
        with open(partial, "wb") as out:
            proc = subprocess.run(self.command(["cat", "--", str(path)]), stdout=out,
                                  stderr=subprocess.PIPE, timeout=timeout)
        if proc.returncode != 0:
            partial.unlink(missing_ok=True)
            message = proc.stderr.decode(errors="replace").strip()
            if "No such file" in message:
                raise FileNotFoundError(f"{path} does not exist on {self.target.label()}")
            raise SshError(f"fetching {path} from {self.target.label()} failed (exit {proc.returncode}): {message}")
        partial.replace(local)

    def put_tree(self, local_dir: Path, remote_dir: str | Path) -> None:
        """Copies a local directory's content into remote_dir (tar over the connection)."""
        tar = subprocess.run(["tar", "-C", str(local_dir), "-cf", "-", "."], capture_output=True, check=True)
        self.run(["sh", "-c", _UNPACK_TREE, "sh", str(remote_dir)], input=tar.stdout, timeout=120)

    def clock_offset(self, rounds: int = 5, timeout_s: float = 5.0) -> tuple[int, int] | None:
        """(host clock - this clock, round trip) in ns from `date +%s%N` asked of one remote
        shell, the round with the shortest trip; None if the host gave no time. One shell, so
        no process start-up on either side lies inside the measured trip."""
        proc = subprocess.Popen(self.command(["sh"], stdin=True), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert proc.stdin is not None and proc.stdout is not None
        best: tuple[int, int] | None = None
        try:
            with selectors.DefaultSelector() as sel:
                sel.register(proc.stdout, selectors.EVENT_READ)
                for _ in range(rounds):
                    before = time.time_ns()
                    proc.stdin.write(b"date +%s%N\n")
                    proc.stdin.flush()
                    if not sel.select(timeout_s):
                        break
                    line = proc.stdout.readline().strip()
                    after = time.time_ns()
                    if not line.isdigit():
                        break
                    rtt, offset = after - before, int(line) - (before + after) // 2
                    if best is None or rtt < best[1]:
                        best = (offset, rtt)
        finally:
            proc.stdin.close()
            try:
                proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        return best

    def popen(self, argv: Sequence[str], stdout_path: Path, stderr_path: Path,
              pid_file: str | Path) -> "RemoteProcess":
        """Starts argv on the host; its stdout/stderr stream into the local files.

        A remote `sh` starts the program in the background, writes its pid to pid_file (signals
        go to the program itself) and waits for it, so that a death by signal comes back as the
        shell's 128 + signal (ssh itself would say 255). `env --default-signal` undoes the
        SIGINT/SIGQUIT ignoring of background jobs: tcpdump stops on SIGINT, nginx on SIGQUIT."""
        command = self.command(["sh", "-c", _START, "sh", str(pid_file), *argv])
        with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
            # Its own session: a Ctrl-C at the terminal must not end the ssh client and so
            # orphan the remote program; the runner stops it with send_signal().
            local = subprocess.Popen(command, stdin=subprocess.DEVNULL,
                                     stdout=out, stderr=err, start_new_session=True)
        proc = RemoteProcess(self, list(argv), local, str(pid_file))
        self.started.append(proc)
        return proc


class RemoteProcess:
    """A program running on an SSH host, with the subprocess.Popen methods the testbed uses
    (poll, wait, send_signal, terminate, kill, returncode, pid)."""

    PID_WAIT_S = 5.0

    def __init__(self, client: SshClient, argv: list[str], local: subprocess.Popen, pid_file: str):
        self.client, self.args, self.local, self.pid_file = client, argv, local, pid_file
        self._remote_pid: int | None = None

    @property
    def pid(self) -> int:
        """The program's pid on its host (read from the pid file once)."""
        if self._remote_pid is None:
            deadline = time.monotonic() + self.PID_WAIT_S
            while True:
                out = self.client.run(["cat", self.pid_file], check=False).stdout.strip()
                if out.isdigit():
                    self._remote_pid = int(out)
                    break
                if self.local.poll() is not None or time.monotonic() > deadline:
                    raise SshError(f"no pid of `{quote(self.args)}` on {self.client.target.label()} "
                                   f"in {self.pid_file}")
                time.sleep(0.02)
        return self._remote_pid

    @property
    def returncode(self) -> int | None:
        return self._translate(self.local.returncode)

    def _translate(self, code: int | None) -> int | None:
        # The remote shell reports a death by signal as 128 + signal: say it the way Popen
        # does (negative signal number). 255 is ssh's own failure (connection lost, ...).
        if code is not None and SIGNALLED < code <= SIGNALLED + MAX_SIGNAL:
            return -(code - SIGNALLED)
        return code

    def poll(self) -> int | None:
        return self._translate(self.local.poll())

    def wait(self, timeout: float | None = None) -> int:
        code = self.local.wait(timeout)      # raises subprocess.TimeoutExpired like Popen
        return self._translate(code)         # type: ignore[return-value]

    def send_signal(self, sig: int) -> None:
        if self.local.poll() is not None:
            return
        try:
            pid = self.pid
        except SshError:
            return                           # it never started (its stderr says why)
        self.client.run(["kill", f"-{signal.Signals(sig).name.removeprefix('SIG')}", str(pid)],
                        check=False, timeout=15)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)
