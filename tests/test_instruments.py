"""A replication's own instruments, without root: the timing error's numbers, and the check of
captures and programs against the emulator log on scripted captures and logs
(tests/test_analysis_support.py). The same checks on real lanes: tests/test_instruments_netns.py."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from analysis.read.event_table import NULL
from test_analysis_support import MOBILE, START_REALTIME_US, ScriptedLink, tcp, udp_datagram
from testbed.processes import Ending
from testbed.run import instruments, timing
from testbed.scenario.flows import PacedStream

# --- timing -------------------------------------------------------------------------------------

def test_delay_statistics_are_type_7_percentiles() -> None:
    s = timing.delay_stats(np.array([300, 100, 10_000, 200, 400]), threshold_us=1000)
    # sorted 100 200 300 400 10000: p50 at position 2 = 300; p99 at 3.96 = 400 + 0.96 * 9600
    assert s == {"n": 5, "min_us": 100, "p50_us": 300.0, "p99_us": 9616.0, "max_us": 10_000,
                 "over_tolerance": 1}
    assert timing.delay_stats(np.array([], np.int64), 1000) == {"n": 0}
    # when the worst one was, in the log's time
    at = np.array([1_000_000, 2_000_000, 3_500_000, 4_000_000, 5_000_000])
    assert timing.delay_stats(np.array([300, 100, 10_000, 200, 400]), 1000, at)["max_at_s"] == 3.5
    assert timing.delay_stats(np.array([7]), 5)["p99_us"] == 7.0


def test_ingress_leaves_out_what_never_entered_and_egress_counts_from_the_scheduled_out() -> None:
    t0 = 1_000_000_000
    ts = np.array([t0 + 10, t0 + 20, t0 + 30])
    in_us = np.array([60, NULL, 35])
    assert timing.ingress_delays(t0, ts, in_us).tolist() == [50, 5]
    assert timing.egress_delays(t0, np.array([t0 + 500]), np.array([380])).tolist() == [120]


def test_beyond_tolerance_judges_p99_and_clocks_but_not_unjudged_points() -> None:
    group = {"n": 10, "min_us": 50, "p50_us": 80.0, "p99_us": 900.0, "max_us": 950, "over_tolerance": 0}
    t = {"tolerance_us": 1000,
         "ingress": {"fixed": {**group, "p99_us": 70_000.0, "judged": False},
                     "mobile": {**group, "judged": True}},
         "egress": {"fixed": {**group, "p99_us": 1200.5, "judged": True},
                    "mobile": {**group, "min_us": -1500, "judged": True}}}
    found = timing.beyond_tolerance(t)
    assert len(found) == 2
    assert found[0].startswith("egress at the fixed host (emulator out → fixed capture): p99 1200.5 us")
    assert found[1].startswith("egress at the mobile host") and "min -1500 us" in found[1]


# --- captures against the log -------------------------------------------------------------------

class FakeCapture:
    """What check_captures asks of a capture after it stopped; its tcpdump's stderr is written
    beside the pcap as the real ones write it."""

    def __init__(self, ending: Ending | None = None, stderr: str = "", stop_requested_us: int | None = None):
        self.ending = ending or Ending(requested=True, code=0)
        self.stop_requested_us = stop_requested_us
        self.stderr = "tcpdump: listening on eth0, link-type EN10MB (Ethernet), snapshot length 256 bytes\n" + stderr


class Outcome:
    def __init__(self) -> None:
        self.status, self.reasons = "ok", []

    def fail(self, reason: str, status: str = "failed") -> None:
        if self.status == "ok":
            self.status = status
        self.reasons.append(reason)


INGRESS_US = 150        # the fixed host's capture is this much before the emulator's `in`
EGRESS_US = (40, 90, 3000)   # the mobile capture after the scheduled `out`, per datagram


def scripted(tmp_path: Path, drop_from_mobile: int = 0, cut_fixed_after: int = 11) -> Path:
    """Ten UDP datagrams down and a TCP ACK up, with known capture delays; the fixed capture
    keeps its first `cut_fixed_after` frames (as if it had stopped then)."""
    link = ScriptedLink()
    for i in range(10):
        link.send(i * 10_000, udp_datagram(i, i * 10_000))
    link.send(200_000, tcp(MOBILE, "198.18.60.1", 40001, 8080, 1, 1, "A"))
    link.fixed_frames = [(t - INGRESS_US if i < 10 else t, f) for i, (t, f) in enumerate(link.fixed_frames)]
    mobile = [(t + EGRESS_US[min(i, 2)] if i < 10 else t, f) for i, (t, f) in enumerate(link.mobile_frames)]
    link.mobile_frames = mobile[drop_from_mobile:]
    link.fixed_frames = sorted(link.fixed_frames)[:cut_fixed_after]
    link.write(tmp_path)
    return tmp_path


def check(work: Path, captures: dict[str, Any], tolerance_us: int = 5000,
          router_between: bool = False, paced: dict[str, PacedStream] | None = None,
          late_answer_ports: frozenset[int] = frozenset()) -> tuple[Outcome, dict[str, Any]]:
    for stem, capture in captures.items():
        (work / f"{stem}.pcap.stderr").write_text(capture.stderr)
    outcome, details = Outcome(), {}
    instruments.check_captures(work, captures, outcome, details, tolerance_us=tolerance_us,
                               router_between=router_between, paced=paced, late_answer_ports=late_answer_ports)
    return outcome, details


def statistics(captured: int, received: int, dropped: int) -> str:
    return f"{captured} packets captured\n{received} packets received by filter\n{dropped} packets dropped by kernel\n"


def healthy(frames: int) -> FakeCapture:
    return FakeCapture(stderr=statistics(frames, frames, 0))


def test_complete_captures_pass_and_give_the_timing_error(tmp_path: Path) -> None:
    outcome, details = check(scripted(tmp_path), {"fixed": healthy(11), "mobile": healthy(11)})
    assert (outcome.status, outcome.reasons) == ("ok", [])
    fixed = details["captures"]["fixed"]
    assert fixed["sent"] == {"captured": 10, "log_in": 10} and fixed["received"] == {"captured": 1, "log_out": 1}
    assert details["captures"]["mobile"]["received"] == {"captured": 10, "log_out": 10}
    t = details["timing_error"]
    assert t["ingress"]["fixed"] == {"n": 10, "min_us": INGRESS_US, "p50_us": 150.0, "p99_us": 150.0,
                                     "max_us": INGRESS_US, "max_at_s": 0.0, "over_tolerance": 0, "judged": True}
    # egress at the mobile host: 40, 90, then 3000 eight times
    assert t["egress"]["mobile"]["p50_us"] == 3000.0 and t["egress"]["mobile"]["min_us"] == 40
    assert (t["ingress"]["mobile"]["n"], t["egress"]["fixed"]["p99_us"]) == (1, 0.0)
    assert t["beyond_tolerance"] == [] and t["emulator_lateness_us"]["n"] == 1


def test_a_timing_error_beyond_the_tolerance_degrades_an_ok_replication(tmp_path: Path) -> None:
    outcome, details = check(scripted(tmp_path), {"fixed": healthy(11), "mobile": healthy(11)},
                             tolerance_us=1000)
    assert outcome.status == "degraded"
    (reason,) = outcome.reasons
    assert reason.startswith("timing error beyond the tolerance of 1000 us: egress at the mobile host")
    assert "8 of 10 packets beyond 1000 us" in reason
    assert reason.endswith("`squall calibrate`, or, where this is acceptable, raise the scenario's "
                           "timing_tolerance; `squall run --resume RUN --redo-degraded` runs them again")
    # the cause apart, for the end of the run and the report
    assert details["degraded"]["tolerance_key"] == "timing_tolerance"
    assert reason.startswith(details["degraded"]["cause"] + ": the machine was too busy for it; ")
    # a tc router between the fixed capture and the emulator: that ingress is not judged
    outcome, details = check(tmp_path, {"fixed": healthy(11), "mobile": healthy(11)}, tolerance_us=100,
                             router_between=True)
    assert not details["timing_error"]["ingress"]["fixed"]["judged"]
    assert not any("ingress at the fixed host" in r for r in outcome.reasons)
    assert any("egress at the mobile host" in r for r in outcome.reasons)


def test_a_paced_sender_is_judged_by_its_schedule_in_its_own_capture(tmp_path: Path) -> None:
    """The scripted stream leaves every 10 ms: on schedule. A sender that stalls for 50 ms
    after datagram 4 and then sends what it owes in a burst is late by up to 50 ms."""
    paced = {"udp": PacedStream("fixed", 6001, 10_000)}
    (tmp_path / "kept").mkdir()
    outcome, details = check(scripted(tmp_path / "kept"), {"fixed": healthy(11), "mobile": healthy(11)},
                             paced=paced)
    assert outcome.status == "ok"
    assert details["timing_error"]["schedules"]["udp"] == {"n": 10, "min_us": 0, "p50_us": 0.0, "p99_us": 0.0,
                                                          "max_us": 0, "over_tolerance": 0}
    link = ScriptedLink()
    for i in range(10):
        link.send(i * 10_000 if i < 5 else 90_000 + i * 100, udp_datagram(i, 0))
    work = tmp_path / "stalled"
    work.mkdir()
    link.write(work)
    outcome, details = check(work, {"fixed": healthy(10), "mobile": healthy(10)}, tolerance_us=5000, paced=paced)
    assert details["timing_error"]["schedules"]["udp"]["max_us"] == 90_000 + 500 - 50_000
    assert outcome.status == "degraded"
    assert "the udp stream's sender behind its schedule (its capture): p99" in outcome.reasons[0]
    assert "4 of 10 datagrams beyond 5000 us" in outcome.reasons[0]


def test_a_capture_lacking_what_the_log_delivered_fails_with_the_numbers(tmp_path: Path) -> None:
    outcome, details = check(scripted(tmp_path, drop_from_mobile=4), {"fixed": healthy(11), "mobile": healthy(7)})
    assert outcome.status == "failed"
    assert outcome.reasons == ["the capture at the mobile host (mobile.pcap) holds 6 packets the mobile host "
                               "received, but the emulator log sent 10 towards it (`out` down)"]
    assert details["captures"]["mobile"]["received"] == {"captured": 6, "log_out": 10}


def test_a_capture_lacking_logged_packets_fails_even_when_others_make_up_the_count(tmp_path: Path) -> None:
    """The mobile capture lost the first datagram the link delivered but holds a second copy
    of the last one: as many packets as the log sent towards it, one of them not the logged."""
    link = ScriptedLink()
    for i in range(10):
        link.send(i * 10_000, udp_datagram(i, i * 10_000))
    link.mobile_frames = link.mobile_frames[1:] + [(link.mobile_frames[-1][0] + 5, link.mobile_frames[-1][1])]
    link.write(tmp_path)
    outcome, details = check(tmp_path, {"fixed": healthy(10), "mobile": healthy(10)})
    assert details["captures"]["mobile"]["received"] == {"captured": 10, "log_out": 10}
    assert details["captures"]["mobile"]["unmatched"] == {"sent": 0, "received": 1}
    assert outcome.reasons == ["the capture at the mobile host (mobile.pcap) lacks 1 of the packets the "
                               "emulator log saw leave the link towards the mobile host (the capture holds "
                               "others instead)"]
    assert details["captures"]["fixed"]["unmatched"] == {"sent": 0, "received": 0}


def test_a_capture_that_ended_early_dropped_or_lost_frames_fails(tmp_path: Path) -> None:
    work = scripted(tmp_path)
    killed = FakeCapture(Ending(requested=False, code=-9))
    outcome, details = check(work, {"fixed": killed, "mobile": healthy(11)})
    assert outcome.reasons == ["the capture at the fixed host (fixed.pcap) tcpdump ended before squall stopped "
                               "it (killed by SIGKILL); tcpdump printed no statistics at its end"]
    assert details["captures"]["fixed"]["ending"] == {"requested": False, "code": -9, "forced": False}
    lossy = FakeCapture(stderr=statistics(11, 13, 2))
    outcome, _ = check(work, {"fixed": healthy(11), "mobile": lossy})
    assert outcome.reasons == ["the capture at the mobile host (mobile.pcap) tcpdump lost packets: "
                               "2 dropped by kernel"]
    short = healthy(12)        # tcpdump says 12, the file holds 11
    outcome, _ = check(work, {"fixed": short, "mobile": healthy(11)})
    assert outcome.reasons == ["the capture at the fixed host (fixed.pcap) holds 11 packets, but tcpdump "
                               "captured 12"]
    gone = FakeCapture(Ending(requested=False, code=1), "tcpdump: pcap_loop: The interface disappeared\n"
                       + statistics(11, 11, 0))
    outcome, details = check(work, {"fixed": healthy(11), "mobile": gone})
    assert outcome.reasons == ["the capture at the mobile host (mobile.pcap) tcpdump ended before squall stopped "
                               "it (exit code 1): pcap_loop: The interface disappeared"]
    assert details["captures"]["mobile"]["tcpdump_messages"] == ["pcap_loop: The interface disappeared"]


def test_an_unreadable_capture_or_log_fails(tmp_path: Path) -> None:
    work = scripted(tmp_path)
    data = (work / "mobile.pcap").read_bytes()
    (work / "mobile.pcap").write_bytes(data[:-7])          # cut inside the last frame
    outcome, _ = check(work, {"fixed": healthy(11), "mobile": healthy(11)})
    assert outcome.status == "failed" and "(mobile.pcap) cannot be read:" in outcome.reasons[0]
    (work / "mobile.pcap").write_bytes(data)
    (work / "emulator.log").unlink()
    outcome, details = check(work, {"fixed": healthy(11), "mobile": healthy(11)})
    assert outcome.status == "failed" and outcome.reasons[0].startswith("emulator.log cannot be read")
    assert "timing_error" not in details


def test_programs_that_did_not_end_by_squalls_request_are_named() -> None:
    outcome, details = Outcome(), {}
    web = FakeCapture(Ending(requested=False, code=-9))
    instruments.check_programs({"web": web}, {"emulator": 0, "npa-mobile": 1, "npa-router": 0}, outcome, details)
    assert outcome.reasons == ["flow web: the HTTP server (nginx) ended before squall stopped it (killed by SIGKILL)"]
    assert details["servers"]["web"] == {"program": "nginx", "ending": {"requested": False, "code": -9,
                                                                         "forced": False}}
    outcome = Outcome()
    instruments.check_programs({}, {"emulator": 0, "npa-mobile": -9, "npa-router": 0}, outcome, {})
    assert outcome.reasons == ["the npa-mobile ended (killed by SIGKILL), not by squall's stop"]


def test_packets_logged_after_a_capture_was_asked_to_stop_are_not_expected_in_it(tmp_path: Path) -> None:
    # the fixed capture ends before the last datagram (logged `in` at 90 ms) and the ACK
    scripted(tmp_path, cut_fixed_after=9)
    outcome, details = check(tmp_path, {"fixed": healthy(9), "mobile": healthy(11)})
    assert outcome.status == "failed" and "holds 9 packets the fixed host sent, but the emulator log saw 10" \
        in outcome.reasons[0]
    # asked to stop 50 ms (STOP_MARGIN_US) after 89.9 ms: the datagram at 90 ms is not counted
    stop = START_REALTIME_US + 89_900 + instruments.STOP_MARGIN_US
    fixed = FakeCapture(stderr=statistics(9, 9, 0), stop_requested_us=stop)
    outcome, details = check(tmp_path, {"fixed": fixed, "mobile": healthy(11)})
    assert (outcome.status, outcome.reasons) == ("ok", [])
    assert details["captures"]["fixed"]["sent"] == {"captured": 9, "log_in": 9}
    assert details["captures"]["fixed"]["log_counted_until_us"] == 89_900


# --- CPU wait -----------------------------------------------------------------------------------

class _Outcome:
    def __init__(self, status: str = "ok") -> None:
        self.status, self.reasons = status, []

    def fail(self, reason: str, status: str = "failed") -> None:
        if self.status == "ok":
            self.status = status
        self.reasons.append(reason)


def _workloads(client_wait_us: int | None, server_wait_us: int | None = 0) -> dict[str, Any]:
    return {"web": {"kind": "http", "client": {"cpu_wait_us": client_wait_us, "run_time_us": 10_000_000},
                    "server": {"cpu_wait_us": server_wait_us}},
            "cmd": {"kind": "command", "client": {"exit_code": 0}}}      # measured nowhere: left out


def test_a_flow_whose_programs_waited_for_a_cpu_degrades_an_ok_replication() -> None:
    outcome, details = _Outcome(), {}
    instruments.check_cpu_wait(_workloads(60_000, 50_000), outcome, details)     # 110 ms of 10 s
    assert outcome.status == "degraded"
    assert outcome.reasons == ["flow web: its programs waited 110 ms for a CPU (client 60 ms, server 50 ms), "
                               "1.1 % of its 10.0 s (the limit is 1 %, the scenario's cpu_wait_tolerance, and at "
                               "least 10 ms): the machine was too busy for it; run fewer lanes at once (a smaller "
                               "`squall run --parallel N`) or beside less other work, see how many lanes this "
                               "machine keeps within its tolerances with `squall calibrate`, or, where this is "
                               "acceptable, raise the scenario's cpu_wait_tolerance; `squall run --resume RUN "
                               "--redo-degraded` runs them again"]
    assert details["degraded"] == {"cause": outcome.reasons[0].split(": the machine")[0],
                                   "tolerance_key": "cpu_wait_tolerance"}
    assert details["cpu_wait"] == {"web": {"cpu_wait_us": {"client": 60_000, "server": 50_000},
                                           "run_time_us": 10_000_000, "share": 0.011}}


def test_the_cpu_wait_reason_names_the_program_that_waited_most_first() -> None:
    outcome = _Outcome()
    workloads = {"perf": {"kind": "command",
                          "client": {"cpu_wait_us": 5_000, "run_time_us": 4_000_000, "argv": ["/usr/bin/iperf3", "-c"]},
                          "server": {"cpu_wait_us": 80_000, "argv": ["/usr/bin/iperf3", "-s"]}}}
    instruments.check_cpu_wait(workloads, outcome, {})
    assert "waited 85 ms for a CPU (server iperf3 80 ms, client iperf3 5 ms)" in outcome.reasons[0]


def test_the_scenarios_cpu_wait_tolerance_sets_the_limit() -> None:
    relaxed, strict = _Outcome(), _Outcome()
    instruments.check_cpu_wait(_workloads(60_000, 50_000), relaxed, {}, share=0.05)   # 1.1 % of 5 %
    instruments.check_cpu_wait(_workloads(30_000), strict, {}, share=0.002)           # 0.3 % of 0.2 %
    assert (relaxed.status, strict.status) == ("ok", "degraded")
    assert "the limit is 0.2 %" in strict.reasons[0]


def test_a_short_cpu_wait_or_none_measured_changes_nothing() -> None:
    outcome, details = _Outcome(), {}
    instruments.check_cpu_wait(_workloads(90_000), outcome, details)
    assert (outcome.status, details["cpu_wait"]["web"]["share"]) == ("ok", 0.009)
    instruments.check_cpu_wait(_workloads(None, None), outcome, details)
    assert outcome.status == "ok" and details["cpu_wait"] == {}
    short = {"web": {"client": {"cpu_wait_us": 9_000, "run_time_us": 250_000}}}    # 3.6 %, but under 10 ms
    instruments.check_cpu_wait(short, outcome, details)
    assert outcome.status == "ok" and details["cpu_wait"]["web"]["share"] == 0.036
    failed = _Outcome("failed")           # a failed replication stays failed
    instruments.check_cpu_wait(_workloads(5_000_000), failed, {})
    assert failed.status == "failed" and failed.reasons == []


def test_a_receiver_that_ended_early_fails_its_replication_whatever_its_exit_status(tmp_path: Path) -> None:
    """The receiver ended (exit 0) after datagram 6: the mobile host's kernel answers the last
    three with ICMP port unreachable. Every capture is complete and on time, yet what the
    receiver counted is not what was sent: the replication fails, naming the host and port."""
    from scapy.all import ICMP, IP  # type: ignore[attr-defined]

    from test_analysis_support import FIXED

    link = ScriptedLink()
    for i in range(10):
        sent = link.send(i * 10_000, udp_datagram(i, i * 10_000))
        if i >= 7:       # the datagram as the mobile host got it, quoted in its ICMP error
            quoted = bytes(sent[IP])[:28]
            link.send(i * 10_000 + 100_001, IP(src=MOBILE, dst=FIXED) / ICMP(type=3, code=3) / quoted)
    link.write(tmp_path)
    outcome, details = check(tmp_path, {"fixed": healthy(13), "mobile": healthy(13)})
    assert outcome.status == "failed"
    (reason,) = outcome.reasons
    assert reason.startswith("the mobile host answered 3 datagrams to port 6001 with ICMP port unreachable "
                             "(the first 0.17 s after t = 0): their receiver was not listening")
    assert details["captures"]["mobile"]["unreachable"] == {"port_unreachable": 3, "ports": [6001],
                                                            "first_s": 0.17}
    assert details["captures"]["fixed"]["unreachable"] == {"port_unreachable": 0}


def test_a_late_dns_answer_to_a_resolver_that_asked_again_is_counted_not_a_failure(tmp_path: Path) -> None:
    """A browser flow's resolver gives up on a query and asks again from a new socket; the first
    answer, from port 53, finds its socket closed. The flow declares port 53 (late_answer_ports):
    that unreachable is counted; one for a datagram from another port still fails the replication."""
    from scapy.all import ICMP, IP  # type: ignore[attr-defined]

    from test_analysis_support import FIXED

    def replay(sports: list[int]) -> tuple[Outcome, dict[str, Any]]:
        link = ScriptedLink()
        for i, sport in enumerate(sports):
            sent = link.send(i * 10_000, udp_datagram(i, i * 10_000, sport=sport, dport=40000 + i))
            link.send(i * 10_000 + 100_001, IP(src=MOBILE, dst=FIXED) / ICMP(type=3, code=3) / bytes(sent[IP])[:28])
        work = tmp_path / "-".join(map(str, sports))
        work.mkdir()
        link.write(work)
        return check(work, {"fixed": healthy(2 * len(sports)), "mobile": healthy(2 * len(sports))},
                     late_answer_ports=frozenset({53}))

    outcome, details = replay([53, 53])
    assert outcome.status == "ok"
    assert details["captures"]["mobile"]["unreachable"] == {"port_unreachable": 0, "late_answers": 2}
    outcome, details = replay([53, 6001])
    assert outcome.status == "failed" and "answered 1 datagrams to port 40001" in outcome.reasons[0]
