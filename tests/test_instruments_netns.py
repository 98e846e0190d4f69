"""A replication checks its own instruments, on a real lane (`squall run`): a tcpdump or an nginx
killed mid-way makes it `failed`, named; kernel-counters.json holds every host's counters and
the kernel's count of TCP opens matches the flows' connections; a replication beyond its
timing tolerance is `degraded`, kept by --resume and redone by --resume --redo-degraded.

Lane $SQUALL_TEST_LANE_BASE + 1 (default 21); `nstat` against the counters' parser on the
lane $SQUALL_TEST_LANE_BASE (conftest's `lane`)."""
from __future__ import annotations

import io
import json
import os
import shutil
import signal
import threading
import time
from pathlib import Path
from typing import Callable

import pytest

from analysis.read.pcap import read_packets
from analysis.results.directory import KERNEL_COUNTERS_FILE as FILE
from analysis.results.stored import stored
from conftest import lane_base, require_programs
from support_run import LENIENT_CPU_WAIT, run_squall, three_flow_scenario
from test_runner import PROGRAMS, assert_nothing_left, net_namespace, only_run_dir, processes, status
from testbed.addresses import LaneAddresses, namespaces
from testbed.lanes.hosts import NamespaceHost
from testbed.run.kernel_counters import read_counters
from testbed.run.status import status_command

pytestmark = pytest.mark.netns
LANE = lane_base() + 1


def kill_in_replication(results: Path, rep: str, ns_role: str, marker: str, sig: int,
                        stop: threading.Event, ready_file: str = "voice.sender.stdout") -> None:
    """Sends sig to the program of the lane's `ns_role` namespace whose command line holds
    `<rep>.partial/<marker>`, once the replication's `ready_file` exists."""
    while not stop.is_set():
        dirs = list(results.iterdir()) if results.exists() else []
        partial = dirs[0] / "cells" / "default" / f"{rep}.partial" if dirs else None
        if partial is not None and (partial / ready_file).exists():
            time.sleep(0.5)
            inode = os.stat(f"/run/netns/{getattr(namespaces(LANE), ns_role)}").st_ino
            for pid, cmd in processes():
                if net_namespace(pid) == inode and f"{partial}/{marker}" in cmd:
                    os.kill(pid, sig)
                    return
        time.sleep(0.05)


def one_flow(tmp_path: Path, name: str, tolerance: str, bandwidth: str, flow: str) -> Path:
    """A scenario of one flow (its TOML table) over a 10 ms link of that bandwidth."""
    path = tmp_path / f"{name}.toml"
    path.write_text(f'name = "{name}"\nseed = 3\ntimeout = "30s"\ntiming_tolerance = "{tolerance}"\n'
                    f'cpu_wait_tolerance = {LENIENT_CPU_WAIT}\n'      # the CPU wait is not the subject
                    f'[link]\nbandwidth = "{bandwidth}"\ndelay = "10ms"\nmtu = "576B"\n' + flow)
    return path


def run_with_killers(scenario: Path, results: Path, *killers: Callable[[threading.Event], None]) -> int:
    stop = threading.Event()
    threads = [threading.Thread(target=k, args=(stop,)) for k in killers]
    for t in threads:
        t.start()
    try:
        code, _, _ = run_squall(scenario, results, LANE)
    finally:
        stop.set()
        for t in threads:
            t.join()
    return code


def test_a_killed_tcpdump_fails_its_replication_naming_the_capture(tmp_path: Path) -> None:
    require_programs(*PROGRAMS)
    scenario = tmp_path / "captures.toml"
    scenario.write_text(three_flow_scenario("captures", 7, udp="3s"))
    results = tmp_path / "results"
    code = run_with_killers(
        scenario, results,
        lambda stop: kill_in_replication(results, "rep-01", "fixed", "fixed.pcap", signal.SIGKILL, stop),
        # SIGTERM: tcpdump ends as cleanly as on SIGINT; still not squall's request
        lambda stop: kill_in_replication(results, "rep-02", "mobile", "mobile.pcap", signal.SIGTERM, stop))
    assert code == 1
    cells = only_run_dir(results) / "cells" / "default"
    first = status(cells / "rep-01")
    assert first["status"] == "failed"
    assert first["reason"].startswith("the capture at the fixed host (fixed.pcap) tcpdump ended before squall "
                                      "stopped it (killed by SIGKILL); tcpdump printed no statistics"), first["reason"]
    fixed = first["details"]["captures"]["fixed"]
    assert fixed["ending"] == {"requested": False, "code": -9, "forced": False}
    # the voice stream went on for seconds after the kill: the log saw more leave the fixed host
    assert fixed["sent"]["captured"] < fixed["sent"]["log_in"]
    assert f"holds {fixed['sent']['captured']} packets the fixed host sent, but the emulator log saw " \
           f"{fixed['sent']['log_in']} enter the link from it" in first["reason"]
    assert first["details"]["captures"]["mobile"]["ending"] == {"requested": True, "code": 0, "forced": False}

    second = status(cells / "rep-02")
    assert second["status"] == "failed"
    assert second["reason"].startswith("the capture at the mobile host (mobile.pcap) tcpdump ended before squall "
                                       "stopped it (exit code 0)"), second["reason"]
    mobile = second["details"]["captures"]["mobile"]
    assert mobile["tcpdump"]["captured"] == mobile["frames_in_file"]      # it said what it wrote ...
    assert mobile["received"]["captured"] < mobile["received"]["log_out"]  # ... but stopped early
    assert "packets the mobile host received, but the emulator log sent" in second["reason"]
    assert_nothing_left(range(LANE, LANE + 1), str(tmp_path))


def test_a_killed_nginx_is_named(tmp_path: Path) -> None:
    require_programs(*PROGRAMS)
    scenario = one_flow(tmp_path, "nginx", "1s", "256kbit",
                        '[flows.web]\nkind = "http"\nobjects = [60000, 20000]\nhttp = "1.0"\n')
    results = tmp_path / "results"
    code = run_with_killers(scenario, results, lambda stop: kill_in_replication(
        results, "rep-01", "fixed", "web.server/nginx.conf", signal.SIGKILL, stop, ready_file="web.client.stdout"))
    assert code == 1
    st = status(only_run_dir(results) / "cells" / "default" / "rep-01")
    assert st["status"] == "failed"
    assert st["reason"].startswith("flow web: the HTTP server (nginx) ended before squall stopped it "
                                   "(killed by SIGKILL)"), st["reason"]
    assert st["details"]["servers"]["web"]["ending"] == {"requested": False, "code": -9, "forced": False}
    assert_nothing_left(range(LANE, LANE + 1), str(tmp_path))


def tcp_opens_in_capture(pcap: Path, host: str) -> int:
    """Connections the host opened, as its capture shows them: distinct SYNs without ACK it sent."""
    return len({(p.sport, p.dst, p.dport) for p in read_packets(pcap)
                if p.proto == 6 and p.src == host and p.syn and not p.has_ack})


def test_kernel_counters_have_their_shape_and_count_the_flows_connections(tmp_path: Path) -> None:
    require_programs(*PROGRAMS)
    scenario = tmp_path / "counters.toml"
    scenario.write_text(three_flow_scenario("counters", 9).replace("replications = 2", "replications = 1"))
    code, _, err = run_squall(scenario, tmp_path / "results", LANE)
    assert code == 0, err
    rep = only_run_dir(tmp_path / "results") / "cells" / "default" / "rep-01"
    st = status(rep)
    assert st["details"]["kernel_counters"] == {"file": FILE, "hosts": ["fixed", "emu", "mobile"]}
    counters = json.loads((rep / FILE).read_text())
    assert set(counters) == {"fixed", "emu", "mobile"}
    for role, entry in counters.items():
        assert set(entry) == {"before", "after", "delta"}, role
        assert set(entry["delta"]) == set(entry["before"]) == set(entry["after"])
        assert all(entry["delta"][k] == entry["after"][k] - entry["before"][k] for k in entry["delta"])
        assert {"TcpActiveOpens", "TcpPassiveOpens", "IpInReceives", "UdpInDatagrams", "TcpExtTCPTimeouts"} \
            <= set(entry["delta"]), role
    delta = {role: counters[role]["delta"] for role in counters}
    # The flows: an HTTP/1.0 page of 3 objects (the mobile client opens 3 connections to the fixed
    # server) and a bulk transfer (the fixed sender opens 1 to the mobile receiver).
    addresses = st["details"]["testbed"]
    assert (delta["mobile"]["TcpActiveOpens"], delta["fixed"]["TcpPassiveOpens"]) == (3, 3)
    assert (delta["fixed"]["TcpActiveOpens"], delta["mobile"]["TcpPassiveOpens"]) == (1, 1)
    assert (delta["emu"]["TcpActiveOpens"], delta["emu"]["TcpPassiveOpens"]) == (0, 0)
    # and the captures agree with the kernel
    assert tcp_opens_in_capture(stored(rep, "mobile.pcap"), addresses["mobile_host"]) == delta["mobile"]["TcpActiveOpens"]
    assert tcp_opens_in_capture(stored(rep, "fixed.pcap"), addresses["fixed_host"]) == delta["fixed"]["TcpActiveOpens"]
    assert delta["emu"]["IpForwDatagrams"] > 0        # the router host forwarded the flows
    # an ok replication shows the evidence of its instruments
    assert st["status"] == "ok", st["reason"]
    for stem in ("fixed", "mobile"):
        capture = st["details"]["captures"][stem]
        assert capture["ending"] == {"requested": True, "code": 0, "forced": False}
        assert capture["tcpdump"]["dropped_by_kernel"] == 0
        assert capture["sent"]["captured"] >= capture["sent"]["log_in"] > 0
        assert capture["received"]["captured"] >= capture["received"]["log_out"] > 0
    # the flows' programs each had their CPU wait measured (the kernel's PSI; the guard that judges
    # it has tests of its own, and this scenario tolerates any wait)
    waits = st["details"]["cpu_wait"]
    assert set(waits) == {"web", "bulk1", "voice"}, waits
    assert all(w["run_time_us"] > 0 and all(isinstance(us, int) and us >= 0 for us in w["cpu_wait_us"].values())
               for w in waits.values()), waits
    assert set(waits["bulk1"]["cpu_wait_us"]) == {"sender", "receiver"}
    timing = st["details"]["timing_error"]
    assert timing["ingress"]["fixed"]["judged"] is False        # the saarto tc router is in between
    for kind in ("ingress", "egress"):
        for side in ("fixed", "mobile"):
            assert timing[kind][side]["n"] > 0 and timing[kind][side]["min_us"] > 0, (kind, side)
    assert_nothing_left(range(LANE, LANE + 1), str(tmp_path))


def test_counters_read_from_proc_are_what_nstat_shows(lane: LaneAddresses) -> None:
    if shutil.which("nstat") is None:
        pytest.skip("nstat (iproute2) is not installed")
    host = NamespaceHost("mobile", lane.ns.mobile, lane.mobile_host)
    ours = read_counters(host)
    # absolute values, zeros too, no history read or written
    nstat = json.loads(host.run(["nstat", "-a", "-s", "-z", "--json"]).stdout)["kernel"]
    assert ours == nstat


def test_a_replication_beyond_its_timing_tolerance_is_degraded_and_redone_on_request(tmp_path: Path) -> None:
    require_programs(*PROGRAMS)
    scenario = one_flow(tmp_path, "strict", "1us", "1Mbit", '[flows.bulk1]\nkind = "bulk"\ncount = 5\n')
    results = tmp_path / "results"
    code, _, err = run_squall(scenario, results, LANE)
    assert code == 1
    assert "--redo-degraded" in err
    root = only_run_dir(results)
    rep = root / "cells" / "default" / "rep-01"
    first = status(rep)
    assert first["status"] == "degraded"
    assert first["reason"].startswith("timing error beyond the tolerance of 1 us: ingress at the fixed host"), \
        first["reason"]
    timing = first["details"]["timing_error"]
    assert timing["tolerance_us"] == 1 and timing["ingress"]["fixed"]["judged"]      # no tc router
    assert timing["egress"]["mobile"]["over_tolerance"] == timing["egress"]["mobile"]["n"] > 0
    out = io.StringIO()
    assert status_command(root, out) == 1
    table = out.getvalue().splitlines()
    assert table[1].split()[:6] == ["cell", "ok", "failed", "timeout", "degraded", "missing"]
    assert table[2].split()[:6] == ["default", "0", "0", "0", "1", "0"]
    assert "default rep-01: degraded: timing error beyond the tolerance" in out.getvalue()

    code, _, err = run_squall(None, results, LANE, resume=root)          # kept
    assert code == 1 and "0 to run" in err
    assert status(rep)["details"]["t0_realtime_us"] == first["details"]["t0_realtime_us"]
    assert not (root / "cells" / "default" / "attempts").exists()

    code, _, err = run_squall(None, results, LANE, resume=root, redo=("degraded",))
    assert "1 to run" in err
    assert status(rep)["details"]["t0_realtime_us"] != first["details"]["t0_realtime_us"]
    kept = status(root / "cells" / "default" / "attempts" / "rep-01-1")
    assert kept["status"] == "degraded" and kept["details"]["t0_realtime_us"] == first["details"]["t0_realtime_us"]
    assert_nothing_left(range(LANE, LANE + 1), str(tmp_path))

