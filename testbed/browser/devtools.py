"""A client of Chromium's DevTools protocol over `--remote-debugging-pipe`: the browser reads
commands from its fd 3 and writes replies and events to its fd 4, each a JSON object followed by a
NUL byte. No websocket, nothing beyond the standard library.

`command` sends one command and waits for its reply; events are kept in order in a queue
(`event`), each with the session it came from. A reader thread owns the browser's output."""
from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence


class DevToolsError(RuntimeError):
    """The browser answered a command with an error, ended, or did not answer in time."""


@dataclass(frozen=True)
class Event:
    method: str
    params: dict[str, Any]
    session: str | None


class DevTools:
    """Chromium started with `argv` (which must include --remote-debugging-pipe)."""

    def __init__(self, argv: Sequence[str], stdout: Any = None, stderr: Any = None) -> None:
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # the browser's fd 3 reads our commands, its fd 4 writes to us
        self.proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr,
                                     pass_fds=(3, 4), preexec_fn=_dup_fds(to_browser_r, from_browser_w))
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._next_id = 0
        self._closed = False
        self._replies: dict[int, dict[str, Any]] = {}
        self._replied = threading.Condition()
        self.events: queue.Queue[Event | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def command(self, method: str, params: dict[str, Any] | None = None, session: str | None = None,
                timeout_s: float = 30.0) -> dict[str, Any]:
        with self._replied:
            self._next_id += 1
            ident = self._next_id
        message: dict[str, Any] = {"id": ident, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout_s
        with self._replied:
            while ident not in self._replies:
                left = deadline - time.monotonic()
                if left <= 0 or not self._reader.is_alive():
                    raise DevToolsError(f"{method}: no reply from the browser "
                                        + ("(it ended)" if not self._reader.is_alive() else f"within {timeout_s:g} s"))
                self._replied.wait(min(left, 0.5))
            reply = self._replies.pop(ident)
        if "error" in reply:
            raise DevToolsError(f"{method}: {reply['error'].get('message', reply['error'])}")
        return reply.get("result", {})

    def event(self, timeout_s: float) -> Event | None:
        """The next event, None when none came within timeout_s or the browser ended."""
        try:
            return self.events.get(timeout=timeout_s)
        except queue.Empty:
            return None

    def close(self, grace_s: float = 5.0) -> int:
        """Browser.close, then SIGTERM and SIGKILL if it lingers; the browser's exit code. Closing
        again does nothing (our pipe ends' numbers may belong to other files by then)."""
        if self._closed:
            return self.proc.returncode
        self._closed = True
        if self.proc.poll() is None:
            try:
                self.command("Browser.close", timeout_s=grace_s)
            except (DevToolsError, OSError):
                pass
            try:
                self.proc.wait(grace_s)
            except subprocess.TimeoutExpired:
                self.proc.terminate()
                try:
                    self.proc.wait(grace_s)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        return self.proc.returncode

    def _read(self) -> None:
        buffer = b""
        while True:
            try:
                chunk = os.read(self._from_browser, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                break
            buffer += chunk
            *messages, buffer = buffer.split(b"\0")
            for raw in messages:
                self._dispatch(json.loads(raw))
        self.events.put(None)
        with self._replied:
            self._replied.notify_all()

    def _dispatch(self, message: dict[str, Any]) -> None:
        if "id" in message:
            with self._replied:
                self._replies[message["id"]] = message
                self._replied.notify_all()
        elif "method" in message:
            self.events.put(Event(message["method"], message.get("params", {}), message.get("sessionId")))


def _dup_fds(read_fd: int, write_fd: int) -> Callable[[], None]:
    """In the child: our pipe ends as its fds 3 (commands) and 4 (replies), and no signal blocked
    (the driver blocks the ones it waits for)."""
    def place() -> None:
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        r, w = os.dup(read_fd), os.dup(write_fd)      # above 4, so the dup2s cannot clobber each other
        os.dup2(r, 3)
        os.dup2(w, 4)
        os.close(r)
        os.close(w)
    return place
