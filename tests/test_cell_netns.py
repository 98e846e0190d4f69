"""A cell of two mobile hosts in one lane (docs/cell.md, docs/testbed.md "A cell of several
mobile hosts"): host 2 gets its own namespace, carrier, TUN and mobile NPA; both hosts' bulk
downloads go through the lane's one emulator, each over its own link state, and its log names
the host of every packet."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import require_programs
from testbed import netns
from testbed.lanes import cell_hosts
from testbed.link.session import LinkSession
from testbed.link.simple import error_free
from analysis.read.emulog import read_emulator_log

pytestmark = pytest.mark.netns

SIZE = 200_000
PORT = 5001
SERVER = f"""
import socket, socketserver
class Bulk(socketserver.BaseRequestHandler):
    def handle(self):
        self.request.sendall(bytes({SIZE}))
socketserver.ThreadingTCPServer.allow_reuse_address = True
socketserver.ThreadingTCPServer(("{{host}}", {PORT}), Bulk).serve_forever()
"""
CLIENT = f"""
import socket, sys
s = socket.create_connection(("{{host}}", {PORT}), timeout=30)
n = 0
while chunk := s.recv(65536):
    n += len(chunk)
print(n)
"""


def test_two_hosts_each_complete_a_download_through_one_emulator(lane, tmp_path: Path) -> None:
    require_programs("squall-emulator", "squall-npa")
    (second,) = cell_hosts.add(lane, 2)
    assert (second.ns, second.address) == (f"{lane.ns.mobile}2", lane.mobile_host.rsplit(".", 1)[0] + ".3")
    server = netns.popen_in(lane.ns.fixed, [sys.executable, "-c", SERVER.format(host=lane.fixed_host)])
    try:
        with LinkSession(lane, error_free(2_000_000, 10_000, 1500), tmp_path / "link", cell=[second]) as session:
            clients = [netns.popen_in(ns, [sys.executable, "-c", CLIENT.format(host=lane.fixed_host)],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                       for ns in (lane.ns.mobile, second.ns)]
            done = [client.communicate(timeout=60) for client in clients]
            assert set(session.ready_lines) == {"npa-router", "npa-mobile", "npa-mobile2"}
    finally:
        server.kill()
        server.wait()
    for (out, err), client in zip(done, clients):
        assert client.returncode == 0, err
        assert int(out) == SIZE
    result = session.result
    assert result is not None and result.stop_acknowledged
    log = read_emulator_log(result.log_path)
    assert log.host_column and log.config["cell.hosts"] == "2"
    assert log.config["cell.addresses"] == f"{lane.mobile_host}, {second.address}"
    delivered = {1: 0, 2: 0}
    for e in log.events:
        if e.event == "out" and e.dir == "down":
            assert e.dst == (lane.mobile_host if e.host == 1 else second.address)
            delivered[e.host] += e.payload_len or 0
    # every byte of each download crossed the link to its own host (retransmissions aside)
    assert delivered[1] >= SIZE and delivered[2] >= SIZE
    peers = [e.note for e in log.events if e.event == "peer"]
    assert any(note.startswith("mobile2 up ") for note in peers)
    assert any(note.startswith("mobile up ") for note in peers)
