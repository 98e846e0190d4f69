"""squall-http --inline-after on loopback (no root, no lane): a small server streams the main
object in chunks with pauses and notes when each request arrives, so the client's log and the
server's arrival times show whether in-line requests left while the main object streamed."""
from __future__ import annotations

import json
import queue
import re
import socket
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import require_programs
from support_loopback_server import LoopbackServer
from testbed.paths import bin_dir

MAIN_CHUNKS = [1500, 1500, 1500, 1500]   # the main object, 6000 bytes, one chunk per PAUSE
PAUSE = 0.25
INLINES = [1000] * 6
OBJECTS = ",".join(str(n) for n in [sum(MAIN_CHUNKS), *INLINES])


class PacedServer(LoopbackServer):
    """HTTP on 127.0.0.1: `GET /obj/<i>-<size>` gets exactly size bytes, object 0 in
    MAIN_CHUNKS with PAUSE between them. Closes after an HTTP/1.0 request or one with
    `Connection: close`. Times are time.time() (CLOCK_REALTIME, as the client's log)."""

    def __init__(self) -> None:
        self.arrivals: dict[str, float] = {}         # url -> when its request arrived
        self.main_chunk_sending: list[float] = []    # just before each chunk of object 0
        super().__init__()

    def _read(self, conn: socket.socket, requests: queue.Queue) -> None:
        buf = b""
        while True:
            data = conn.recv(65536)
            if not data:
                requests.put((None, True))
                return
            buf += data
            while b"\r\n\r\n" in buf:
                head, buf = buf.split(b"\r\n\r\n", 1)
                url = head.split(b" ")[1].decode()
                self.arrivals[url] = time.time()
                last = head.split(b"\r\n")[0].endswith(b"1.0") or b"Connection: close" in head
                requests.put((url, last))
                if last:
                    return

    def serve(self, conn: socket.socket) -> None:
        requests: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, args=(conn, requests), daemon=True).start()
        last = False
        while not last:
            url, last = requests.get()
            if url is not None:
                self._respond(conn, url)
        conn.shutdown(socket.SHUT_RDWR)
        conn.close()

    def _respond(self, conn: socket.socket, url: str) -> None:
        index, size = map(int, re.fullmatch(r"/obj/(\d+)-(\d+)", url).groups())
        head = f"HTTP/1.1 200 OK\r\nContent-Length: {size}\r\n\r\n".encode()
        if index != 0:
            conn.sendall(head + b"i" * size)
            return
        for k, chunk in enumerate(MAIN_CHUNKS):
            if k:
                time.sleep(PAUSE)
            self.main_chunk_sending.append(time.time())
            conn.sendall((head if k == 0 else b"") + b"m" * chunk)


@dataclass
class Page:
    summary: dict
    events: list[tuple[int, str, int, int, int]]   # time_us event conn object bytes
    header: dict[str, str]
    server: PacedServer

    def main_last_byte_us(self) -> int:
        return self.summary["objects"][0]["last_byte_us"]

    def inline_requests_us(self) -> list[int]:
        return [o["request_sent_us"] for o in self.summary["objects"][1:]]

    def release(self) -> tuple[int, int]:
        """(time, main body bytes) of the inline_release event."""
        [(t, _, _, _, body)] = [e for e in self.events if e[1] == "inline_release"]
        return t, body

    def server_inline_arrivals(self) -> list[float]:
        return [t for url, t in self.server.arrivals.items() if not url.startswith("/obj/0-")]

    def peak_open_connections(self) -> int:
        open_now = peak = 0
        for _, event, *_ in self.events:
            open_now += {"connect_start": 1, "closed": -1}.get(event, 0)
            peak = max(peak, open_now)
        return peak


def run_page(tmp_path: Path, *args: str) -> Page:
    require_programs("squall-http")
    server = PacedServer()
    log = tmp_path / "client.log"
    try:
        r = subprocess.run([str(bin_dir() / "squall-http"), "--connect", f"127.0.0.1:{server.port}",
                            "--objects", OBJECTS, "--timeout", "20s", "--log", str(log), *args],
                           capture_output=True, text=True, timeout=30)
    finally:
        server.close()
    assert r.returncode == 0, r.stderr
    lines = log.read_text().splitlines()
    header = dict(line[2:].split("\t", 1) for line in lines if line.startswith("# ") and "\t" in line)
    events = [(int(t), e, int(c), int(o), int(b)) for t, e, c, o, b in
              (line.split("\t") for line in lines if not line.startswith("#"))]
    return Page(json.loads(r.stdout.splitlines()[-1]), events, header, server)


def assert_released_while_main_streams(page: Page, spelling: str) -> None:
    assert page.summary["inline_after"] == page.header["inline_after"] == spelling
    assert page.summary["inline_release_us"] == page.release()[0]
    last_chunk = page.server.main_chunk_sending[-1]
    # well before the last chunk of the main object left the server (PAUSE is 250 ms)
    assert all(t < last_chunk - PAUSE / 2 for t in page.server_inline_arrivals())
    assert all(page.release()[0] <= t < page.main_last_byte_us() - 100_000 for t in page.inline_requests_us())


def test_http10_first_requests_inline_objects_on_further_connections_as_the_main_streams(tmp_path: Path) -> None:
    page = run_page(tmp_path, "--http", "1.0", "--parallel", "4", "--inline-after", "first")
    assert_released_while_main_streams(page, "first")
    t, body = page.release()
    assert t == page.summary["objects"][0]["first_byte_us"] and 0 < body < sum(MAIN_CHUNKS)
    # at most --parallel open (the main object's connection included), and that many reached;
    # every in-line object had its own connection and was complete before the main object
    assert page.peak_open_connections() == 4
    assert len(page.summary["connections"]) == 1 + len(INLINES)
    assert all(o["last_byte_us"] < page.main_last_byte_us() for o in page.summary["objects"][1:])


def test_http10_bytes_requests_inline_objects_once_that_much_of_the_main_body_is_in(tmp_path: Path) -> None:
    page = run_page(tmp_path, "--inline-after", "3000")
    assert_released_while_main_streams(page, "3000")
    assert page.release()[1] == 3000
    sent = page.server.main_chunk_sending   # 1500 bytes each: 3000 are out with the second chunk
    assert all(sent[1] < t < sent[2] for t in page.server_inline_arrivals())


def test_http10_complete_is_the_default_and_waits_for_the_whole_main_object(tmp_path: Path) -> None:
    for args in ((), ("--inline-after", "complete")):
        page = run_page(tmp_path, *args)
        assert page.summary["inline_after"] == page.header["inline_after"] == "complete"
        assert page.release() == (page.main_last_byte_us(), sum(MAIN_CHUNKS))
        assert all(t >= page.main_last_byte_us() for t in page.inline_requests_us())
        assert all(t > page.server.main_chunk_sending[-1] for t in page.server_inline_arrivals())


@pytest.mark.parametrize("after", ["first", "complete"])
def test_http11_pipelined_inline_requests_follow_the_same_choice(tmp_path: Path, after: str) -> None:
    page = run_page(tmp_path, "--http", "1.1", "--persistent", "1", "--pipeline", "--inline-after", after)
    assert all(o["conn"] == 0 for o in page.summary["objects"])
    if after == "first":
        assert_released_while_main_streams(page, "first")
    else:
        assert all(t >= page.main_last_byte_us() for t in page.inline_requests_us())
        assert all(t > page.server.main_chunk_sending[-1] for t in page.server_inline_arrivals())


def test_http11_second_connection_opens_as_the_main_streams(tmp_path: Path) -> None:
    page = run_page(tmp_path, "--http", "1.1", "--persistent", "2", "--inline-after", "first")
    second = page.summary["connections"][1]
    assert page.release()[0] <= second["connect_start_us"] < page.main_last_byte_us() - 100_000
    # without --pipeline connection 0 still waits for the main object before its next request
    on_first = [o for o in page.summary["objects"][1:] if o["conn"] == 0]
    on_second = [o for o in page.summary["objects"][1:] if o["conn"] == 1]
    assert on_first and on_second
    assert all(o["request_sent_us"] >= page.main_last_byte_us() for o in on_first)
    assert min(o["request_sent_us"] for o in on_second) < page.main_last_byte_us()


def test_bad_values_are_usage_errors() -> None:
    require_programs("squall-http")
    for value in ("0", "last", "-5"):
        r = subprocess.run([str(bin_dir() / "squall-http"), "--connect", "127.0.0.1:9", "--objects", "100",
                            "--inline-after", value], capture_output=True, text=True, timeout=10)
        assert r.returncode == 2
        assert f"--inline-after: expected first, complete or a number of bytes of the main object (1 or more), " \
               f"got '{value}'" in r.stderr
