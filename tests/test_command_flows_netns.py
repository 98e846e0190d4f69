"""Any application as a flow, on a real lane (`squall run`): the shipped examples
scenarios/examples/curl.toml (curl against the per-run nginx) and iperf3.toml (iperf3's server and
client), one replication each. Their exit status and output are recorded, and the analysis's
connection rows, under the flow's name, count what tshark counts in the same capture.

Lane $SQUALL_TEST_LANE_BASE + 2 (default 22)."""
from __future__ import annotations

import csv
import json
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from conftest import lane_base, require_programs
from support_run import lenient_text, run_squall
from testbed.paths import REPO_ROOT

pytestmark = pytest.mark.netns
LANE = lane_base() + 2
EXAMPLES = REPO_ROOT / "scenarios" / "examples"


def one_replication(example: str, directory: Path) -> Path:
    """The example with one replication of its first cell and the lenient tolerances (timing, CPU wait)."""
    text = (EXAMPLES / f"{example}.toml").read_text().split("\n[matrix]")[0]
    assert "\nreplications = 2\n" in text and "\ntimeout = " in text
    text = lenient_text(text.replace("\nreplications = 2\n", "\nreplications = 1\n"))
    path = directory / f"{example}.toml"
    path.write_text(text)
    return path


def run_example(example: str, tmp_path: Path, program: str) -> tuple[Path, dict]:
    if shutil.which(program) is None or shutil.which("tshark") is None:
        pytest.fail(f"{program} and tshark are needed (scripts/install-deps installs them)")
    require_programs("squall-emulator", "squall-npa")
    results = tmp_path / "results"
    code, _, err = run_squall(one_replication(example, tmp_path), results, LANE, analyse=True)
    (run,) = results.iterdir()
    (rep,) = (run / "cells").glob("*/rep-01")
    assert code == 0, err + (rep / "status.json").read_text()
    return rep, json.loads((rep / "workloads.json").read_text())


def tshark_view(capture: Path) -> tuple[dict[tuple[str, str], tuple[int, int, int]], list[str]]:
    """Per TCP sender endpoint and its peer, as tshark reads the capture: (frames, distinct payload
    bytes = the highest relative sequence number of data sent - 1, frames tshark calls a
    retransmission); and tshark's conversation lines (`-z conv,tcp`)."""
    fields = subprocess.run(["tshark", "-r", str(capture), "-Y", "tcp", "-T", "fields", "-e", "ip.src",
                             "-e", "tcp.srcport", "-e", "ip.dst", "-e", "tcp.dstport", "-e", "tcp.seq", "-e", "tcp.len",
                             "-e", "tcp.analysis.retransmission", "-e", "tcp.analysis.fast_retransmission"],
                            capture_output=True, text=True, check=True).stdout
    frames: Counter[tuple[str, str]] = Counter()
    data_end: Counter[tuple[str, str]] = Counter()
    retransmitted: Counter[tuple[str, str]] = Counter()
    for line in fields.splitlines():
        src, sport, dst, dport, seq, length, retx, fast = line.split("\t")
        key = (f"{src}:{sport}", f"{dst}:{dport}")
        frames[key] += 1
        if int(length):
            data_end[key] = max(data_end[key], int(seq) + int(length) - 1)
        retransmitted[key] += bool(retx or fast)
    conv = subprocess.run(["tshark", "-r", str(capture), "-q", "-z", "conv,tcp"], capture_output=True, text=True,
                          check=True).stdout
    return ({k: (frames[k], data_end[k], retransmitted[k]) for k in frames},
            [line for line in conv.splitlines() if "<->" in line])


def connection_rows(rep: Path, flow: str) -> list[dict[str, str]]:
    with open(rep.parent.parent.parent / "summary" / "connections.csv", newline="") as f:
        return [row for row in csv.DictReader(f) if row["flow"] == flow]


def assert_rows_match_tshark(rep: Path, flow: str, connections: int) -> None:
    rows = connection_rows(rep, flow)
    assert len(rows) == connections and {r["flow_kind"] for r in rows} == {"command"}
    for row in rows:
        view, conversations = tshark_view(rep / f"{row['measured_at']}.pcap.gz")   # Wireshark reads it compressed
        peer = row["server"] if row["sender"] == row["client"] else row["client"]
        frames, payload, retransmitted = view[(row["sender"], peer)]
        assert (int(row["packets_sent"]), int(row["bytes"]), int(row["retransmissions"])) == \
            (frames, payload, retransmitted), row
        assert row["complete"] == "True"
        # tshark's conversation of the connection (A <-> B, then frames and bytes B -> A, A -> B, ...)
        (line,) = [c for c in conversations if row["client"] in c and row["server"] in c]
        a, _, b, to_a, _, _, to_b, _, _ = line.split()[:9]
        assert {a, b} == {row["client"], row["server"]}
        assert int(to_b if row["sender"] == a else to_a) == frames


def test_curl_against_the_per_run_nginx(tmp_path: Path) -> None:
    rep, workloads = run_example("curl", tmp_path, "curl")
    get = workloads["get"]
    assert (get["kind"], get["workload"], get["port"], "server" in get) == ("command", "curl", 7001, False)
    client = get["client"]
    assert (client["exit_code"], client["host"], client["stdout"]) == (0, "mobile", "get.client.stdout")
    address = json.loads((rep / "status.json").read_text())["details"]["testbed"]["fixed_host"]
    assert f"http://{address}:7001/obj/0-20000" in client["argv"]
    lines = (rep / "get.client.stdout").read_text().splitlines()
    assert [line.split()[1:4] for line in lines] == [["200", "20000", "B"], ["200", "5000", "B"]]
    assert (rep / "get.client.stderr").read_text() == ""
    assert len((rep / "get.access.log").read_text().splitlines()) == 2       # nginx served both
    # curl reuses its one connection for both objects: 25 000 B of bodies and the headers
    assert_rows_match_tshark(rep, "get", connections=1)
    assert int(connection_rows(rep, "get")[0]["bytes"]) > 25_000


def test_iperf3_server_and_client(tmp_path: Path) -> None:
    rep, workloads = run_example("iperf3", tmp_path, "iperf3")
    perf = workloads["perf"]
    assert (perf["kind"], perf["workload"], perf["port"]) == ("command", "iperf3", 7001)
    assert (perf["server"]["host"], perf["server"]["exit_code"]) == ("fixed", 0)     # --one-off: ended itself
    assert (perf["client"]["host"], perf["client"]["exit_code"]) == ("mobile", 0)
    report = json.loads((rep / "perf.client.stdout").read_text())
    received = report["end"]["sum_received"]["bytes"]
    assert received >= 200 * 1024          # --bytes: at least that much (iperf3 sends whole blocks)
    # the control connection and the data connection, both under the flow's name
    assert_rows_match_tshark(rep, "perf", connections=2)
    # the data connection carried at least what iperf3's receiver counted in its test interval
    assert max(int(r["bytes"]) for r in connection_rows(rep, "perf")) >= received
