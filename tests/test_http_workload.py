"""squall-http against nginx (testbed/lanes/http_server.py) over a shaped veth pair, checked on
the mobile host's capture: exact object and request sizes, one connection per object and
at most N open (HTTP/1.0), pipelining on a persistent connection (HTTP/1.1), and the
client's --delayed-acks."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from scapy.layers.inet import IP, TCP

from conftest import require_programs, workload_lane
from support_tcp import pure_acks
from testbed import netns
from testbed.lanes.capture import read_packets
from testbed.lanes.http_server import ACCESS_LOG_COLUMNS, HttpServer, HttpServerConfig, HttpServerError
from testbed.paths import bin_dir
from testbed.processes import ProgramGroup
from testbed.scenario.workloads import load
from support_testnet import payload_capture, veth_net

pytestmark = pytest.mark.netns
LANE = workload_lane(3)
HTTP_PORT = 8080
S8M = load("s+8m").sizes


@dataclass
class Stream:
    """One direction of one TCP connection, reassembled from the capture."""
    data: bytes
    times: list[tuple[int, float]]  # (end offset of a segment, capture time), first transmission

    def time_at(self, offset: int) -> float:
        """When the byte just before `offset` was first seen."""
        return min(t for end, t in self.times if end >= offset)


def stream(packets: list[IP], src: str, client_port: int) -> Stream:
    """The bytes `src` sent on the connection of the client's port `client_port`."""
    segs = [p for p in packets if p.src == src and client_port in (p[TCP].sport, p[TCP].dport)]
    isn = next(p[TCP].seq for p in segs if p[TCP].flags.S)
    chunks: dict[int, bytes] = {}
    times: list[tuple[int, float]] = []
    for p in segs:
        payload = bytes(p[TCP].payload)
        if payload:
            off = p[TCP].seq - isn - 1
            if off not in chunks:
                times.append((off + len(payload), float(p.time)))
            chunks[off] = payload
    data = b""
    for off in sorted(chunks):
        data = data[:off] + chunks[off] + data[off + len(chunks[off]):]
    return Stream(data, times)


def split_responses(data: bytes) -> list[tuple[bytes, bytes]]:
    """(header, body) of consecutive responses, by Content-Length."""
    out = []
    while data:
        head, _, rest = data.partition(b"\r\n\r\n")
        length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:"))
        out.append((head, rest[:length]))
        data = rest[length:]
    return out


def client_ports(packets: list[IP], client: str) -> list[int]:
    return [p[TCP].sport for p in packets if p.src == client and p[TCP].flags.S and not p[TCP].flags.A]


def run_page(tmp_path: Path, client_args: list[str], rate: str = "1mbit",
             keepalive_requests: int = 1000) -> tuple[dict, list[IP], Path, object]:
    require_programs("squall-http")
    http = str(bin_dir() / "squall-http")
    with veth_net(LANE, rate=rate) as net:
        cfg = HttpServerConfig(net.fixed_ns, net.fixed_addr, HTTP_PORT, tmp_path / "server", [S8M],
                               keepalive_requests=keepalive_requests)
        with HttpServer(cfg) as server, ProgramGroup(tmp_path / "progs") as group, \
                payload_capture(net.mobile_ns, "eth0", tmp_path / "mobile.pcap", f"tcp port {HTTP_PORT}"):
            group.start("client", net.mobile_ns, [http, "--connect", f"{net.fixed_addr}:{HTTP_PORT}",
                                                  "--log", str(tmp_path / "client.log"), *client_args])
            code = group.wait_exit("client", 60)
            assert code == 0, group.stderr()["client"]
            summary = json.loads(group.programs["client"].stdout().splitlines()[-1])
        assert netns.pids(net.fixed_ns) == []  # nginx stopped with the block
    return summary, read_packets(tmp_path / "mobile.pcap"), server.docroot, net


def access_log(path: Path) -> list[dict[str, str]]:
    """nginx's access log, a line as {column: field} (the columns of ACCESS_LOG_COLUMNS)."""
    lines = [line.split("\t") for line in path.read_text().splitlines()]
    assert all(len(fields) == len(ACCESS_LOG_COLUMNS) for fields in lines), lines
    return [dict(zip(ACCESS_LOG_COLUMNS, fields)) for fields in lines]


def check_objects(summary: dict, docroot: Path, responses: dict[str, bytes]) -> None:
    """Every object arrived complete: the bytes on the wire are the server's file."""
    assert summary["ok"] is True
    for obj in summary["objects"]:
        assert obj["bytes"] == obj["size"]
        assert responses[obj["url"]] == (docroot / obj["url"].lstrip("/")).read_bytes()
        assert len(responses[obj["url"]]) == obj["size"]


def test_http10_one_connection_per_object_at_most_n_open(tmp_path: Path) -> None:
    summary, packets, docroot, net = run_page(tmp_path, ["--workload", "s+8m", "--http", "1.0", "--parallel", "4"])
    ports = client_ports(packets, net.mobile_addr)
    assert len(ports) == len(S8M) == 9
    responses: dict[str, bytes] = {}
    intervals = []
    for port in ports:
        req = stream(packets, net.mobile_addr, port).data
        assert len(req) == 350 and req.endswith(b"\r\n\r\n")  # exactly one request of exactly 350 B
        url = req.split(b" ")[1].decode()
        assert req.startswith(f"GET {url} HTTP/1.0\r\n".encode())
        [(head, body)] = split_responses(stream(packets, net.fixed_addr, port).data)
        assert head.startswith(b"HTTP/1.1 200")
        responses[url] = body
        # open at the client from its SYN to its FIN (sent when it closes the socket)
        mine = [p for p in packets if p.src == net.mobile_addr and p[TCP].sport == port]
        fin = next(p for p in mine if p[TCP].flags.F)
        intervals.append((float(mine[0].time), float(fin.time)))
    check_objects(summary, docroot, responses)
    # Open connections over time (client SYN to client FIN): never more than 4, and 4 are reached.
    events = sorted([(a, 1) for a, _ in intervals] + [(b, -1) for _, b in intervals], key=lambda e: (e[0], e[1]))
    open_now, peak = 0, 0
    for _, delta in events:
        open_now += delta
        peak = max(peak, open_now)
    assert peak == 4
    # In-line objects are requested only after the main object has arrived.
    main_port = ports[0]
    main_end = max(float(p.time) for p in packets if p[TCP].sport == HTTP_PORT and p[TCP].dport == main_port
                   and len(p[TCP].payload))
    assert all(start > main_end for start, _ in intervals[1:])
    assert summary["response_time_us"] == summary["page_end_us"] - summary["page_start_us"] > 0
    log = access_log(tmp_path / "server" / "access.log")
    assert sorted(int(e["body_bytes_sent"]) for e in log) == sorted(S8M)
    assert {int(e["request_length"]) for e in log} == {350}


def test_http11_pipelining_on_one_persistent_connection(tmp_path: Path) -> None:
    summary, packets, docroot, net = run_page(tmp_path, ["--workload", "s+8m", "--http", "1.1", "--persistent", "1",
                                                         "--pipeline", "--tos", "0x28"])
    [port] = client_ports(packets, net.mobile_addr)
    assert {p.tos for p in packets if p.src == net.mobile_addr} == {0x28}
    up = stream(packets, net.mobile_addr, port)
    down = stream(packets, net.fixed_addr, port)
    requests = [up.data[i:i + 350] for i in range(0, len(up.data), 350)]
    assert len(up.data) == 350 * 9 and all(r.endswith(b"\r\n\r\n") and b" HTTP/1.1\r\n" in r for r in requests)
    assert [b"Connection: close" in r for r in requests] == [False] * 8 + [True]
    responses = split_responses(down.data)
    urls = [r.split(b" ")[1].decode() for r in requests]
    check_objects(summary, docroot, {u: body for u, (_, body) in zip(urls, responses)})
    # Pipelining: several in-line requests were on the wire before the first in-line response completed.
    main_len = len(responses[0][0]) + 4 + len(responses[0][1])
    first_inline_end = main_len + len(responses[1][0]) + 4 + len(responses[1][1])
    assert up.time_at(350 * 4) < down.time_at(first_inline_end)
    assert all(o["conn"] == 0 for o in summary["objects"])


def retried_page(tmp_path: Path, client_args: list[str]) -> tuple[dict, list[int], object]:
    """A page against nginx closing each persistent connection after 2 requests (as it does
    after keepalive_timeout idle, which an ARQ outage can make): it completes, every object
    served once, and the requests on the wire are the page's plus those the client says it
    wrote again."""
    summary, packets, docroot, net = run_page(tmp_path, ["--workload", "s+8m", "--http", "1.1", *client_args],
                                              keepalive_requests=2)
    ports = client_ports(packets, net.mobile_addr)
    responses: dict[str, bytes] = {}
    written = 0
    for port in ports:
        up, down = stream(packets, net.mobile_addr, port), stream(packets, net.fixed_addr, port)
        requests = [up.data[i:i + 350] for i in range(0, len(up.data), 350)]
        written += len(requests)
        replies = split_responses(down.data)
        assert len(replies) == min(2, len(requests))
        for request, (_, body) in zip(requests, replies):
            responses[request.split(b" ")[1].decode()] = body
    check_objects(summary, docroot, responses)
    assert written == len(S8M) + summary["retried_requests"]
    log = access_log(tmp_path / "server" / "access.log")
    assert sorted(int(e["body_bytes_sent"]) for e in log) == sorted(S8M)   # each object answered once
    assert {e["connection_requests"] for e in log} == {"1", "2"}
    events = [line.split("\t")[1] for line in (tmp_path / "client.log").read_text().splitlines()
              if not line.startswith("#")]
    assert events.count("retry") == len(ports) - len([c for c in summary["connections"] if c["retry_of"] < 0])
    return summary, ports, net


def test_http11_pipelined_requests_the_server_left_unanswered_go_again_on_a_new_connection(tmp_path: Path) -> None:
    summary, ports, _ = retried_page(tmp_path, ["--pipeline"])
    assert len(ports) == 5     # 9 objects, 2 answered on each connection
    assert [c["retry_of"] for c in summary["connections"]] == [-1, 0, 1, 2, 3]
    assert summary["retried_requests"] == 7 + 5 + 3 + 1      # written before the close was said


def test_http11_without_pipelining_a_closed_connection_is_retried_too(tmp_path: Path) -> None:
    summary, ports, _ = retried_page(tmp_path, ["--persistent", "2"])
    conns = summary["connections"]
    # connection 0 carries objects 0 1 3 5 7, connection 1 2 4 6 8: each closes after two, and
    # its second response says "Connection: close", so the client writes nothing more on it
    assert len(ports) == len(conns) == 5
    assert sorted(c["retry_of"] for c in conns) in ([-1, -1, 0, 1, 2], [-1, -1, 0, 1, 3])
    assert summary["retried_requests"] == 0


def test_http11_without_pipelining_waits_for_each_response(tmp_path: Path) -> None:
    summary, packets, docroot, net = run_page(tmp_path, ["--workload", "s+8m", "--http", "1.1", "--persistent", "2"])
    ports = client_ports(packets, net.mobile_addr)
    assert len(ports) == 2
    responses: dict[str, bytes] = {}
    for port in ports:
        up, down = stream(packets, net.mobile_addr, port), stream(packets, net.fixed_addr, port)
        requests = [up.data[i:i + 350] for i in range(0, len(up.data), 350)]
        assert len(up.data) % 350 == 0
        replies = split_responses(down.data)
        assert len(replies) == len(requests)
        end = 0
        for k, (head, body) in enumerate(replies):
            responses[requests[k].split(b" ")[1].decode()] = body
            end += len(head) + 4 + len(body)
            if k + 1 < len(requests):  # request k+1 leaves only after response k is complete
                assert up.time_at(350 * (k + 2)) >= down.time_at(end)
    check_objects(summary, docroot, responses)
    assert sorted(len(o) for o in responses.values()) == sorted(S8M)


def test_delayed_acks_client_sends_fewer_pure_acks(tmp_path: Path) -> None:
    acks = {}
    for delayed in (False, True):
        run_dir = tmp_path / f"delayed-{delayed}"
        run_dir.mkdir()
        summary, packets, docroot, net = run_page(run_dir, ["--workload", "s+8m"] + ["--delayed-acks"] * delayed)
        assert summary["delayed_acks"] is delayed
        assert f"# delayed_acks\t{'on' if delayed else 'off'}" in (run_dir / "client.log").read_text()
        check_objects(summary, docroot, dict(page_object(packets, net, port)
                                             for port in client_ports(packets, net.mobile_addr)))
        acks[delayed] = pure_acks(packets, net.mobile_addr)
    # 1 Mbit/s: the objects' segments come 12 ms apart, less than the 40 ms delayed-ACK timer
    assert acks[True] < acks[False]


def page_object(packets: list[IP], net: object, port: int) -> tuple[str, bytes]:
    """(url, body) of the one object on the HTTP/1.0 connection of client port `port`."""
    url = stream(packets, net.mobile_addr, port).data.split(b" ")[1].decode()
    [(_, body)] = split_responses(stream(packets, net.fixed_addr, port).data)
    return url, body


def test_incomplete_page_and_timeout_are_failures(tmp_path: Path) -> None:
    require_programs("squall-http", "squall-bulk")
    http, bulk = str(bin_dir() / "squall-http"), str(bin_dir() / "squall-bulk")
    with veth_net(LANE) as net, ProgramGroup(tmp_path / "progs") as group:
        cfg = HttpServerConfig(net.fixed_ns, net.fixed_addr, HTTP_PORT, tmp_path / "server", [S8M])
        with HttpServer(cfg):
            # an object the server does not have
            r = netns.run_in(net.mobile_ns, [http, "--connect", f"{net.fixed_addr}:{HTTP_PORT}",
                                             "--objects", "6288,4321"], check=False)
            assert r.returncode == 1
            assert "/obj/1-4321 on connection 1: expected status 200 and 4321 body bytes, got status 404" in r.stderr
            # a second server on the same port is refused with the reason
            with pytest.raises(HttpServerError, match="port 8080 is already in use"):
                HttpServer(HttpServerConfig(net.fixed_ns, net.fixed_addr, HTTP_PORT, tmp_path / "server2",
                                            [S8M])).start()
            # an address the namespace does not have: nginx's own reason is reported
            with pytest.raises(HttpServerError, match="exited with code 1 at start: .*Cannot assign requested address"):
                HttpServer(HttpServerConfig(net.fixed_ns, f"198.18.{LANE}.99", HTTP_PORT + 1, tmp_path / "server3",
                                            [S8M])).start()
        # a "server" that accepts and never answers: the page times out
        group.start("mute", net.fixed_ns, [bulk, "recv", "--listen", f"{net.fixed_addr}:{HTTP_PORT}"])
        group.wait_ready("mute", "listening", 5)
        r = netns.run_in(net.mobile_ns, [http, "--connect", f"{net.fixed_addr}:{HTTP_PORT}", "--workload", "s+2s",
                                         "--timeout", "1s"], check=False)
        assert r.returncode == 1
        summary = json.loads(r.stdout.splitlines()[-1])
        assert summary["ok"] is False and summary["error"] == "--timeout 1.000s expired with 0 of 3 objects complete"
