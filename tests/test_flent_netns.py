"""A flent flow (`squall run`, a real lane): Flent's own `ping` test, unchanged, across the
emulated link (1 Mbit/s, 20 ms each way), its data file kept in the replication and its series
checked against the emulator log and the captures.

Flent at the mobile host pings the fixed host for 5 s every 200 ms, with ICMP (ping) and UDP
(irtt, to the irtt server squall runs at the fixed host on port 2112). The expected relations:

- the replication holds `ping-<time>.ping.flent.gz` (the flow's name as Flent's title) with the
  test's name, length and host; 25 measurements per series (5 s / 200 ms);
- Flent's UDP series is irtt's RTT per probe (without its server's turnaround, with the client
  host's stack time): its median within 1 ms of the median RTT squall measures for the same irtt
  client in its capture (summary/round_trips.csv); both at least the link's share (the log's
  `in` -> `out` both ways);
- Flent's ICMP series: its median at least the link's round trip of the echo requests and
  replies in the log (median `in` -> `out` up plus down), and at most 1 ms more;
- the run values `ping.flent.<series>.median` are the medians of the file's measurements, and
  the report has the Flent table.

Lane $SQUALL_TEST_LANE_BASE + 3 (default 23)."""
from __future__ import annotations

import csv
import gzip
import json
import shutil
import statistics
from pathlib import Path

import pytest

from conftest import lane_base, require_programs
from support_run import LENIENT_CPU_WAIT, LENIENT_TIMING, run_scenario_text

pytestmark = pytest.mark.netns
LANE = lane_base() + 3
SCENARIO = f"""
name = "flent-ping"
seed = 34
replications = 1
timing_tolerance = "{LENIENT_TIMING}"
cpu_wait_tolerance = {LENIENT_CPU_WAIT}
timeout = "40s"

[link]
bandwidth = "1Mbit"
delay = "20ms"
mtu = "1500B"
send_buffer = "16000B"
recv_buffer = "64000B"
error = {{ good = 0.0, bad = 0.0 }}
arq = {{ retransmissions = 0, delay = "100ms" }}
channel = "always-good"

[flows.ping]
kind = "flent"
test = "ping"
length = "5s"
step = "200ms"
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    for program in ("flent", "irtt"):
        if shutil.which(program) is None:
            pytest.fail(f"{program} is needed (scripts/install-deps installs it)")
    require_programs("squall-emulator", "squall-npa")
    return run_scenario_text(tmp_path_factory.mktemp("flent"), "flent", SCENARIO, LANE)


def flent_data(root: Path) -> dict:
    (path,) = root.glob("cells/*/rep-01/ping-*.ping.flent.gz")
    with gzip.open(path, "rt") as f:
        return json.load(f)


def measured(data: dict, series: str) -> list[float]:
    return [m["val"] for m in data["raw_values"][series] if m.get("val") is not None]


def icmp_link_rtt_ms(root: Path) -> float:
    """The median link delay (`in` -> `out`) of the log's ICMP packets up plus that down."""
    (log,) = root.glob("cells/*/rep-01/emulator.log.gz")
    ins: dict[str, int] = {}
    delays: dict[str, list[float]] = {"up": [], "down": []}
    with gzip.open(log, "rt") as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if line.startswith("#") or len(fields) < 10 or fields[9] != "icmp":
                continue
            time_us, event, direction, pkt = int(fields[0]), fields[1], fields[2], fields[3]
            if event == "in":
                ins[pkt] = time_us
            elif event == "out" and pkt in ins:
                delays[direction].append((time_us - ins[pkt]) / 1e3)
    assert len(delays["up"]) >= 25 and len(delays["down"]) >= 25, delays
    return statistics.median(delays["up"]) + statistics.median(delays["down"])


def test_flents_data_file_is_kept_with_its_test(run: Path) -> None:
    data = flent_data(run)
    meta = data["metadata"]
    assert (meta["NAME"], meta["TITLE"], meta["LENGTH"]) == ("ping", "ping", 5)
    workloads = json.loads(next(run.glob("cells/*/rep-01/workloads.json")).read_text())
    assert meta["HOST"] == workloads["ping"]["client"]["argv"][3]          # flent ping -H SERVER
    for series in ("Ping (ms) ICMP", "Ping (ms) UDP"):
        assert 24 <= len(measured(data, series)) <= 26, series


def test_flents_udp_rtts_agree_with_the_capture_and_the_log(run: Path) -> None:
    theirs = statistics.median(measured(flent_data(run), "Ping (ms) UDP"))
    with open(run / "summary" / "round_trips.csv", newline="") as f:
        trips = [r for r in csv.DictReader(f) if r["flow"] == "ping" and r["rtt_ms"]]
    by_client: dict[str, list[dict[str, str]]] = {}
    for r in trips:
        by_client.setdefault(r["client"], []).append(r)
    test = max(by_client.values(), key=len)      # the test's irtt; the other: Flent's check before it
    capture = statistics.median(float(r["rtt_ms"]) for r in test)
    link = statistics.median(float(r["link_rtt_ms"]) for r in test)
    # irtt's RTT: the capture's, without its server's turnaround, with the client's stack time
    assert 40 < link <= capture and link <= theirs and abs(theirs - capture) <= 1.0, (link, capture, theirs)


def test_flents_icmp_rtts_agree_with_the_log(run: Path) -> None:
    theirs = statistics.median(measured(flent_data(run), "Ping (ms) ICMP"))
    link = icmp_link_rtt_ms(run)
    assert 40 < link <= theirs <= link + 1.0, (link, theirs)


def test_the_run_values_and_the_report_are_flents_measurements(run: Path) -> None:
    data = flent_data(run)
    with open(run / "summary" / "runs.csv", newline="") as f:
        (row,) = list(csv.DictReader(f))
    for series, slug in (("Ping (ms) ICMP", "ping_ms_icmp"), ("Ping (ms) UDP", "ping_ms_udp")):
        assert float(row[f"ping.flent.{slug}.median"]) == pytest.approx(statistics.median(measured(data, series)))
        assert int(row[f"ping.flent.{slug}.n"]) == len(measured(data, series))
    assert "Flent's data series" in (run / "summary" / "report.md").read_text()
