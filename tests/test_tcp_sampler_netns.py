"""squall-tcp-sampler against `ss -ti` (iproute2, an independent reader of the same kernel
state): a connection in a namespace of its own moves 200 kB and then idles; the sampler's rows
for both ends equal what `ss -tin` prints for them at the same time (cwnd, ssthresh, smoothed
RTT and variation, RTO, MSS, bytes acknowledged and received). Namespace sq$SQUALL_TEST_LANE_BASE-sampler."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from conftest import lane_base, require_programs
from analysis.read.tcp_samples import INFINITE_SSTHRESH, read_tcp_samples
from testbed.paths import bin_dir

pytestmark = pytest.mark.netns
NS = f"sq{lane_base()}-sampler"

CONNECTION = """
import socket, subprocess, sys, time
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen()
c = socket.create_connection(l.getsockname()); a, _ = l.accept()
c.sendall(b"x" * 200000)
n = 0
while n < 200000:
    n += len(a.recv(65536))
time.sleep(0.5)                      # idle: nothing changes any more
sampler = subprocess.Popen([sys.argv[1], "--output", sys.argv[2], "--interval", "20ms"])
time.sleep(0.3)
print(subprocess.run(["ss", "-tinH"], capture_output=True, text=True, check=True).stdout)
time.sleep(0.1)
sampler.terminate()
sys.exit(sampler.wait())
"""


def _ss_fields(text: str) -> dict[tuple[str, int], dict[str, str]]:
    """(local address, port) -> the `ss -ti` fields of that socket."""
    out: dict[tuple[str, int], dict[str, str]] = {}
    lines = text.strip().splitlines()
    for head, info in zip(lines[::2], lines[1::2]):
        local = head.split()[3]
        address, port = local.rsplit(":", 1)
        fields = dict(re.findall(r"(\w+):(\S+)", info))
        fields["rtt"], fields["rttvar"] = re.search(r"rtt:([\d.]+)/([\d.]+)", info).groups()
        out[(address, int(port))] = fields
    return out


def _sampled(script: str, out: Path) -> str:
    """Runs `script` (argv: the sampler, its output file) in a namespace of its own; its stdout."""
    require_programs("squall-tcp-sampler")
    subprocess.run(["ip", "netns", "del", NS], capture_output=True)
    subprocess.run(["ip", "netns", "add", NS], check=True)
    try:
        subprocess.run(["ip", "-n", NS, "link", "set", "lo", "up"], check=True)
        done = subprocess.run(["ip", "netns", "exec", NS, "python3", "-c", script,
                               str(bin_dir() / "squall-tcp-sampler"), str(out)],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
    finally:
        subprocess.run(["ip", "netns", "del", NS], check=False)
    return done.stdout


def test_the_sampler_reads_what_ss_reads(tmp_path: Path) -> None:
    out = tmp_path / "samples.tsv"
    ss = _ss_fields(_sampled(CONNECTION, out))
    samples = read_tcp_samples(out)
    assert samples.complete and samples.interval_us == 20_000
    last = {(r["src"], r["sport"]): r for r in samples.rows}
    assert set(last) == set(ss) and len(ss) == 2
    for endpoint, s in ss.items():
        row = last[endpoint]
        assert row["cwnd"] == int(s["cwnd"])
        assert (row["ssthresh"] >= INFINITE_SSTHRESH) == ("ssthresh" not in s)
        assert (row["srtt_us"] / 1000, row["rttvar_us"] / 1000) == (float(s["rtt"]), float(s["rttvar"]))
        assert row["rto_us"] == int(float(s["rto"]) * 1000) and row["mss"] == int(s["mss"])
        assert row["bytes_acked"] == int(s.get("bytes_acked", 0))
        assert row["bytes_received"] == int(s.get("bytes_received", 0))
    assert sorted(r["bytes_received"] for r in last.values()) == [0, 200000]



ENDS = """
import socket, subprocess, sys, time
l = socket.socket(socket.AF_INET6); l.bind(("::", 0)); l.listen()      # dual stack, as iperf3's server
port = l.getsockname()[1]
c1 = socket.create_connection(("127.0.0.1", port)); a1, _ = l.accept()
a1.close(); time.sleep(0.05); c1.close()   # closed by the server first: its (IPv6) end waits in TIME_WAIT
c2 = socket.create_connection(("127.0.0.1", port)); a2, _ = l.accept()
c2.sendall(b"x" * 1000); a2.recv(1000)     # open: the server's end is an IPv4-mapped AF_INET6 socket
time.sleep(0.1)
sampler = subprocess.Popen([sys.argv[1], "--output", sys.argv[2], "--interval", "20ms"])
time.sleep(0.1)
sampler.terminate()
sys.exit(sampler.wait())
"""


def test_a_dual_stack_end_reads_as_ipv4_and_time_wait_has_no_values(tmp_path: Path) -> None:
    out = tmp_path / "samples.tsv"
    _sampled(ENDS, out)
    raw = [line.split("\t") for line in out.read_text().splitlines() if line[:1].isdigit()]
    time_wait = [f for f in raw if f[5] == "6"]
    assert time_wait and all(f[6:] == [""] * 14 for f in time_wait), raw
    assert any(f[1] == "::ffff:127.0.0.1" and f[5] == "1" for f in raw), raw
    rows = read_tcp_samples(out).rows
    assert {r["src"] for r in rows} == {"127.0.0.1"}
    assert all(r["cwnd"] is None and r["srtt_us"] is None for r in rows if r["state"] == 6)
    assert all(r["cwnd"] > 0 for r in rows if r["state"] == 1)
