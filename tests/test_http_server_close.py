"""squall-http against a scripted server on the loopback that ends a persistent connection after
two responses without saying so (no `Connection: close`), as nginx does after its idle
keepalive_timeout: with a FIN, or with a reset. The objects left unanswered are requested again
on a new connection (RFC 2616 8.1.4), each is served once, and the page completes."""
from __future__ import annotations

import json
import re
import socket
import struct
import subprocess
import time

import pytest

from conftest import require_programs
from support_loopback_server import LoopbackServer
from testbed.paths import bin_dir
from testbed.scenario.workloads import load

S8M = load("s+8m").sizes
PER_CONNECTION = 2
URL = re.compile(rb"^GET (/obj/\d+-(\d+)) HTTP/1\.1\r\n")


class ClosingServer(LoopbackServer):
    """Answers PER_CONNECTION requests on each connection, waits 50 ms (the client has written
    what it writes after them), then closes: a FIN after which it reads and discards (nginx's
    lingering close), or a reset."""

    def __init__(self, reset: bool) -> None:
        self.reset = reset
        self.served: list[str] = []
        super().__init__()

    def serve(self, conn: socket.socket) -> None:
        with conn:
            pending, answered = b"", 0
            while answered < PER_CONNECTION:
                while b"\r\n\r\n" not in pending:
                    data = conn.recv(65536)
                    if not data:
                        return
                    pending += data
                request, pending = pending.split(b"\r\n\r\n", 1)
                url, size = URL.match(request).groups()
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % int(size) + b"x" * int(size))
                self.served.append(url.decode())
                answered += 1
                if b"Connection: close" in request:
                    return
            time.sleep(0.05)
            if self.reset:
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                return
            conn.shutdown(socket.SHUT_WR)
            conn.settimeout(2)
            try:
                while conn.recv(65536):
                    pass
            except OSError:
                pass


@pytest.mark.parametrize("pipeline", [True, False], ids=["pipelined", "one-at-a-time"])
@pytest.mark.parametrize("reset", [False, True], ids=["fin", "reset"])
def test_a_silent_close_of_a_persistent_connection_is_retried(pipeline: bool, reset: bool) -> None:
    require_programs("squall-http")
    server = ClosingServer(reset)
    try:
        r = subprocess.run([str(bin_dir() / "squall-http"), "--connect", f"127.0.0.1:{server.port}",
                            "--workload", "s+8m", "--http", "1.1", "--timeout", "20s",
                            *(["--pipeline"] if pipeline else [])],
                           capture_output=True, text=True, timeout=60)
    finally:
        server.close()
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout.splitlines()[-1])
    assert summary["ok"] is True
    assert sorted(server.served) == sorted(o["url"] for o in summary["objects"])   # each served once
    assert all(o["complete"] and o["bytes"] == o["size"] for o in summary["objects"])
    assert [c["retry_of"] for c in summary["connections"]] == [-1, 0, 1, 2, 3]   # 2 answered on each
    # one request written after the second response on every closed connection, all the
    # unanswered ones when pipelined
    assert summary["retried_requests"] == (7 + 5 + 3 + 1 if pipeline else 4)
