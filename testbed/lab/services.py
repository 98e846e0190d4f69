"""tcpdump and nginx on a lab host over SSH, with the options and files of their namespace
versions (testbed/lanes/capture.py, testbed/lanes/http_server.py)."""
from __future__ import annotations

import signal
import tempfile
import time
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from testbed.lanes.capture import Capture, CaptureError
from testbed.lanes.http_server import HttpServerConfig, HttpServerError, render_config, write_document_tree
from testbed.processes import Ending, stop_process

READY_TIMEOUT_S = 10.0
STOP_GRACE_S = 3.0


class SshCapture(AbstractContextManager):
    """tcpdump on a lab host (Capture's options) while the context lasts; tcpdump's stderr
    goes to <pcap>.stderr in the results, as on namespaces."""

    def __init__(self, host: Any, dev: str, path: Path, bpf_filter: str = ""):
        self.host, self.dev, self.path = host, dev, path
        self.argv = Capture("", dev, path, bpf_filter).argv
        local = host.local_dir(path.parent)
        self.stderr_path = local / f"{path.name}.stderr"
        self.stdout_path = local / f"{path.name}.stdout"
        self.proc: Any = None
        self.ending: Ending | None = None      # as Capture's
        # the emulator's clock is another host's: every logged packet is expected in the file
        self.stop_requested_us: int | None = None

    def __enter__(self) -> "SshCapture":
        pid_file = self.path.parent / ".pids" / f"tcpdump-{self.path.name}.pid"
        self.proc = self.host.client.popen(self.argv, self.stdout_path, self.stderr_path, pid_file)
        deadline = time.monotonic() + READY_TIMEOUT_S
        while "listening on" not in _read(self.stderr_path):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.__exit__()
                raise CaptureError(f"tcpdump on the {self.host.role} host's {self.dev} did not start: "
                                   f"{_read(self.stderr_path).strip() or '(no message)'}")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            self.ending = stop_process(self.proc, signal.SIGINT, 5.0)     # tcpdump flushes and exits
            self.proc = None
            self.stdout_path.unlink(missing_ok=True)


class SshHttpServer(AbstractContextManager):
    """nginx on a lab host: http_server's configuration and document tree, copied there."""

    def __init__(self, host: Any, cfg: HttpServerConfig):
        self.host, self.cfg = host, cfg
        self.proc: Any = None
        self.ending: Ending | None = None      # as HttpServer's
        self._tmp: tempfile.TemporaryDirectory | None = None

    def __enter__(self) -> "SshHttpServer":
        self._refuse_port_in_use()
        run = str(self.cfg.run_dir)
        with tempfile.TemporaryDirectory(prefix="sqhttp-") as tmp:
            local = Path(tmp)
            (local / "tmp").mkdir()
            write_document_tree(local / "docroot", self.cfg.pages)
            # render_config resolves the run directory locally; on the host it is as given.
            conf = render_config(self.cfg).replace(str(Path(run).resolve()), run)
            (local / "nginx.conf").write_text(conf)
            self.host.client.put_tree(local, run)
        self.host.run(["rm", "-f", f"{run}/nginx.pid"])
        self._tmp = tempfile.TemporaryDirectory(prefix="sqnginx-")
        argv = [self.cfg.nginx, "-p", run, "-e", f"{run}/error.log", "-c", f"{run}/nginx.conf"]
        self.proc = self.host.client.popen(argv, Path(self._tmp.name) / "out", Path(self._tmp.name) / "err",
                                           f"{run}/nginx.launch.pid")
        try:
            self._wait_ready(run)
        except BaseException:
            self.__exit__()
            raise
        return self

    def _refuse_port_in_use(self) -> None:
        out = self.host.run(["ss", "-Hltn", f"sport = :{self.cfg.port}"], check=False).stdout
        if out.strip():
            raise HttpServerError(f"cannot serve HTTP on {self.cfg.listen()} on the {self.host.role} host: "
                                  f"port {self.cfg.port} is already in use there")

    def _wait_ready(self, run: str) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while self.host.run(["test", "-e", f"{run}/nginx.pid"], check=False).returncode != 0:
            code = self.proc.poll()
            if code is not None or time.monotonic() > deadline:
                err = _read(Path(self._tmp.name) / "err").strip() if self._tmp else ""
                log = self.host.run(["cat", f"{run}/error.log"], check=False).stdout
                emerg = "; ".join(ln for ln in log.splitlines() if "[emerg]" in ln or "[alert]" in ln)
                raise HttpServerError(f"nginx for {self.cfg.listen()} on the {self.host.role} host "
                                      f"{'exited with code ' + str(code) if code is not None else 'did not start'}: "
                                      f"{emerg or err or '(no error message)'}")
            time.sleep(0.05)

    def __exit__(self, *exc: object) -> None:
        try:
            if self.proc is not None:
                self.ending = stop_process(self.proc, signal.SIGQUIT, STOP_GRACE_S)
                self.proc = None
        finally:
            if self._tmp is not None:
                self._tmp.cleanup()
                self._tmp = None


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except FileNotFoundError:
        return ""
