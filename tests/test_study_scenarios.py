"""The shipped scenarios: each loads and expands to its stated number of cells, the studies'
scenarios say what the studies ran, and one cell of each study runs end to end in namespaces
(smoke: one replication, small enough to stay under a minute) and is analysable.

Lanes $SQUALL_STUDY_LANE_BASE (default 120) … +2.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from analysis.aggregate.run_analysis import analyse_run
from conftest import require_programs
from support_run import lenient_copy
from testbed.scenario import loader as scenario_mod

REPO = Path(__file__).resolve().parents[1]
SCENARIOS = REPO / "scenarios"
SQUALL = Path(sys.executable).parent / "squall"
LANE_BASE = int(os.environ.get("SQUALL_STUDY_LANE_BASE", "120"))
PROGRAMS = ("squall-emulator", "squall-npa", "squall-http", "squall-bulk", "squall-udp",
            "squall-queue-monitor")

# Every scenarios/*.toml with its number of cells. A new scenario needs its line here.
EXPECTED_CELLS = {
    "demo.toml": 8,              # 2 links x 2 variants x 2 HTTP versions
    "iip-http.toml": 144,        # 4 links x 6 variants x 3 workloads x 2 HTTP versions
    "iip-mixture.toml": 60,      # 4 links x 5 workloads x 3 variants
    "saarto-http10.toml": 144,   # 4 links x 6 variants x 6 workloads
    "lte-driving.toml": 1,       # a bulk download over a generated mahimahi trace (docs/links.md)
    "gprs-outages.toml": 1,      # a bulk download over GPRS with 5-30 s blackouts (docs/links.md)
    "aqm-comparison.toml": 3,    # bulk download and probes over a deep router buffer: pfifo, codel, fq_codel (docs/aqm.md)
    "aqm-l4s.toml": 4,           # bulk TCP beside an ECT(1) UDP stream: pfifo, pie, pie with ECN, dualpi2
}
EXPECTED_REPLICATIONS = {"iip-http.toml": 30, "iip-mixture.toml": 20, "saarto-http10.toml": 30}
# scenarios/examples/*.toml: small scenarios showing one feature each (docs/runner.md)
EXPECTED_EXAMPLE_CELLS = {"curl.toml": 1, "flent-ping.toml": 1, "iperf3.toml": 2, "latency-under-load.toml": 1,
                          "netem.toml": 2, "ack-path.toml": 2, "browser.toml": 4, "browser-origins.toml": 8}


def load(name: str) -> scenario_mod.Scenario:
    return scenario_mod.load(SCENARIOS / name)


def cell(sc: scenario_mod.Scenario, cell_id: str) -> scenario_mod.ResolvedCell:
    return next(c for c in sc.cells if c.cell_id == cell_id)


def test_every_shipped_scenario_is_listed() -> None:
    assert sorted(p.name for p in SCENARIOS.glob("*.toml")) == sorted(EXPECTED_CELLS)


@pytest.mark.parametrize("name", sorted(EXPECTED_EXAMPLE_CELLS))
def test_every_example_scenario_loads(name: str) -> None:
    assert sorted(p.name for p in (SCENARIOS / "examples").glob("*.toml")) == sorted(EXPECTED_EXAMPLE_CELLS)
    assert len(scenario_mod.load(SCENARIOS / "examples" / name).cells) == EXPECTED_EXAMPLE_CELLS[name]


@pytest.mark.parametrize("name", sorted(EXPECTED_CELLS))
def test_scenario_expands_to_its_cells(name: str) -> None:
    sc = load(name)
    assert len(sc.cells) == EXPECTED_CELLS[name]
    assert len({c.cell_id for c in sc.cells}) == len(sc.cells)
    if name in EXPECTED_REPLICATIONS:
        assert sc.replications == EXPECTED_REPLICATIONS[name]


def test_iip_http_channel_follows_the_workload_and_http_versions_differ() -> None:
    sc = load("iip-http.toml")
    short = cell(sc, "link-r2_tcp-baseline_workload-s+2s_http-1.0")
    long = cell(sc, "link-r2_tcp-baseline_workload-l+8m_http-1.1")
    # IIP table 8: s+2s good 2.8-3.5 s, m+8m and l+8m good 8-12 s; bad 1.4-3 s for all
    assert (short.link.channel.good.a_us, short.link.channel.good.b_us) == (2_800_000, 3_500_000)
    assert (long.link.channel.good.a_us, long.link.channel.good.b_us) == (8_000_000, 12_000_000)
    assert (long.link.channel.bad.a_us, long.link.channel.bad.b_us) == (1_400_000, 3_000_000)
    (web10,), (web11,) = short.flows, long.flows
    assert (web10.http, web10.parallel, web10.page.sizes) == ("1.0", 4, (6288, 2096, 2096))
    assert (web11.http, web11.persistent, web11.pipeline) == ("1.1", 1, True)
    assert long.link.down.arq_retransmissions == 2 and long.link.down.error_bad == 0.83
    # IIP 7.1: 12000 B link buffers; Seawind's router: 20 packets, tun read queue, send buffer
    assert (short.link.down.send_buffer, short.link.down.recv_buffer) == (12000, 12000)
    assert short.router.classes[0].queue.limit == 20
    assert (short.router.engine, short.router.device_queue) == ("emulator", 10)
    # in-line objects from the main object's first byte (1.0); pipelined after it (1.1)
    assert (web10.inline_after, web11.inline_after) == ("first", "complete")
    assert short.tcp.sysctls["net.ipv4.tcp_syn_linear_timeouts"] == 0
    assert not web10.delayed_acks and not web11.delayed_acks
    # table 7's e0 has no frto/dsack: the 12 extra cells of the cross product
    extra = [c for c in sc.cells if c.labels["link"] == "e0" and c.labels["tcp"] in ("frto", "dsack")]
    assert len(extra) == 12


def test_iip_mixture_diffserv_red_and_workloads() -> None:
    sc = load("iip-mixture.toml")
    ds = cell(sc, "link-r4_workload-2tcp+1udp-0s-0s-5s-ds_tcp-frto-cbi-iw4")
    nods = cell(sc, "link-r4_workload-2tcp+1udp-0s-0s-0s-nods_tcp-baseline")
    red = cell(sc, "link-e0_workload-3tcp-0s-0s-5s_tcp-baseline+red")
    assert [f.target for f in ds.router.filters] == ["UDP"]
    assert nods.router.filters == ()
    kinds = {f.name: (f.kind, f.start_us) for f in ds.flows}
    assert kinds == {"tcp1": ("bulk", 0), "tcp2": ("bulk", 0), "udp": ("udp", 5_000_000)}
    udp = next(f for f in ds.flows if f.kind == "udp")
    # the text's stream (validation/PROTOCOL.md): 132 B payloads at 32 kbit/s of payload, 33.0 ms
    assert (udp.stream.size, udp.stream.rate_bps, udp.duration_us) == (132, 32_000, 180_000_000)
    assert 132 * 8 / udp.stream.rate_bps == pytest.approx(0.0330, abs=0.0001)
    assert [f.transfer.count for f in ds.flows if f.kind == "bulk"] == [90, 90]
    assert [(f.transfer.count, f.start_us) for f in red.flows] == [
        (100, 0), (100, 0), (100, 5_000_000)]
    queues = {c.name: c.queue for c in red.router.classes}
    assert {q.discipline for q in queues.values()} == {"red"}
    assert (queues["TCP"].limit, queues["TCP"].min, queues["TCP"].max, queues["TCP"].avpkt,
            queues["TCP"].ecn) == (11000, 2000, 6000, 500, True)
    assert red.tcp.name == "ecn"
    assert {c.queue.limit for c in ds.router.classes} == {22}
    # Seawind's structure in the emulator (RED included), the report's HTB rates
    for c in (ds, nods, red):
        assert (c.router.engine, c.router.device_queue) == ("emulator", 10)
        assert (c.link.down.send_buffer, c.link.down.recv_buffer) == (12000, 12000)
    assert ds.router.rate_bps == 1_000_000
    assert {c.name: (c.rate_bps, c.priority) for c in ds.router.classes} == {
        "UDP": (500_000, 0), "TCP": (500_000, 1)}
    # section 7.3: lossy links' good 10-25 s, bad 1.8-4 s
    assert (nods.link.channel.good.a_us, nods.link.channel.bad.b_us) == (10_000_000, 4_000_000)


def test_saarto_links_and_variants() -> None:
    sc = load("saarto-http10.toml")
    c = cell(sc, "link-arq-medium_tcp-baseline-nots_workload-m+2m")
    assert c.link.down.error_bad == 0.63 and c.link.down.arq_retransmissions == 2
    assert (c.link.down.send_buffer, c.link.down.recv_buffer) == (9600, 9600)
    assert c.link.channel.good.kind == "exponential" and c.link.channel.good.max_us == 9_000_000
    assert c.tcp.sysctls["net.ipv4.tcp_timestamps"] == 0
    (web,) = c.flows
    assert (web.http, web.parallel, web.page.sizes) == ("1.0", 4, (12576, 8384, 8384))
    assert {x.labels["tcp"] for x in sc.cells} == {"baseline", "iw4", "baseline-nots", "iw4-nots", "frto", "dsack"}
    iw4_nots = cell(sc, "link-arq-high_tcp-iw4-nots_workload-s+2s")
    assert iw4_nots.tcp.initcwnd == 4 and iw4_nots.tcp.sysctls["net.ipv4.tcp_timestamps"] == 0
    assert (c.router.engine, c.router.device_queue, c.router.classes[0].queue.limit) == ("emulator", 10, 20)
    assert web.inline_after == "first" and not web.delayed_acks


# --- smoke runs in namespaces ------------------------------------------------------------

def smoke_mixture(tmp: Path) -> Path:
    """iip-mixture.toml with small transfers (6 buffers per TCP flow, 8 s of UDP)."""
    text = (SCENARIOS / "iip-mixture.toml").read_text()
    replacements = [('workload = "bulk-100"', "count = 6", 4),
                    ('"flows.tcp1.workload" = "bulk-90"', '"flows.tcp1.count" = 6', 3),
                    ('"flows.tcp2.workload" = "bulk-90"', '"flows.tcp2.count" = 6', 3),
                    ('duration = "180s"', 'duration = "8s"', 3),
                    ('timeout = "600s"', 'timeout = "90s"', 1)]
    for old, new, n in replacements:
        assert text.count(old) == n, f"iip-mixture.toml changed: {old!r} not found {n} times"
        text = text.replace(old, new)
    path = tmp / "iip-mixture.toml"
    path.write_text(text)
    return path


def run_one(scenario: Path, cell_id: str, lane: int, results: Path) -> Path:
    scenario = lenient_copy(scenario, results)
    proc = subprocess.run([str(SQUALL), "run", str(scenario), "--cells", cell_id,
                           "--replications", "1", "--lane-base", str(lane), "--results",
                           str(results)], capture_output=True, text=True, timeout=240)
    (run_dir,) = [d for d in results.iterdir() if d.is_dir()]
    status = json.loads((run_dir / "cells" / cell_id / "rep-01" / "status.json").read_text())
    assert status["status"] == "ok", (status.get("reason"), proc.stderr[-2000:])
    assert proc.returncode == 0, proc.stderr[-2000:]
    return run_dir


def analysed_values(run_dir: Path, cell_id: str) -> dict[str, float | None]:
    analysis = analyse_run(run_dir, progress=None)
    (c,) = [c for c in analysis.cells if c.cell == cell_id]
    (rep,) = [r for r in c.replications if r.ref.rep == 1]
    assert rep.analysed and rep.counts, rep.error
    return rep.values


@pytest.mark.netns
def test_iip_http_cell_runs_and_is_analysable(tmp_path: Path) -> None:
    require_programs(*PROGRAMS)
    cell_id = "link-r2_tcp-iw4-frto_workload-s+2s_http-1.0"
    values = analysed_values(run_one(SCENARIOS / "iip-http.toml", cell_id, LANE_BASE, tmp_path),
                             cell_id)
    assert values["web.connections"] == 3
    assert values["web.bytes"] >= 6288 + 2 * 2096
    # 10480 B of bodies at 8000 B/s plus handshakes over a 300 ms link: at least 1.9 s
    assert values["web.response_time_s"] > 1.9
    assert values["web.main.throughput_Bps"] is not None


@pytest.mark.netns
def test_saarto_cell_runs_and_is_analysable(tmp_path: Path) -> None:
    require_programs(*PROGRAMS)
    cell_id = "link-arq-high_tcp-baseline-nots_workload-s+2s"
    values = analysed_values(run_one(SCENARIOS / "saarto-http10.toml", cell_id, LANE_BASE + 1,
                                     tmp_path), cell_id)
    assert values["web.connections"] == 3
    assert values["web.response_time_s"] > 1.9
    assert values["web.main.throughput_Bps"] is not None
    assert values["web.bytes"] >= 6288 + 2 * 2096
    # the in-line objects' connections end inside the captures (their FINs acknowledged)
    assert values["web.inline_slowest.throughput_Bps"] is not None


@pytest.mark.netns
def test_iip_mixture_cell_runs_and_is_analysable(tmp_path: Path) -> None:
    require_programs(*PROGRAMS)
    cell_id = "link-r2_workload-2tcp+1udp-0s-0s-5s-ds_tcp-baseline"
    values = analysed_values(run_one(smoke_mixture(tmp_path), cell_id, LANE_BASE + 2,
                                     tmp_path / "results"), cell_id)
    assert values["tcp.transfers"] == 2
    assert values["tcp.fastest.bytes"] == values["tcp.slowest.bytes"] == 6 * 2096
    assert values["tcp.slowest.elapsed_s"] >= values["tcp.fastest.elapsed_s"] > 0
    # 8 s of datagrams every 33.0 ms (32 kbit/s of 132 B payloads) = 243, started 5 s after TCP
    assert 238 <= values["udp.received"] + values["udp.lost"] <= 245
    assert values["udp.throughput_Bps"] is not None
