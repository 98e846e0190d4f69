"""What a replication starts for each kind of flow, in both directions, without root: on which
host each program runs, its exact command line, what listens before t = 0, which files are
brought into the results, and workloads.json. A fake testbed records everything; its programs
end at once with an ok summary; its link and captures leave an empty log and empty captures,
so the replication's checks of its instruments find nothing missing."""
from __future__ import annotations

import json
import shutil
import struct
import subprocess
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Iterator, Sequence

import pytest

from analysis.read.emulog import COLUMNS
from testbed.errors import ConfigError
from testbed.link.control import LinkState
from testbed.link.simple import error_free
from testbed.processes import Ending, Program
from testbed.run import replication
from testbed.run.runner import plain
from testbed.run.status import main_metrics
from testbed.scenario.cell import ResolvedCell
from testbed.scenario.flows import parse_flows_section

TIMEOUT_US = 40_000_000
FLOWS = {
    "web": {"kind": "http", "workload": "s+2s", "start": "2s"},
    "page": {"kind": "http", "objects": [6288, "2096B"], "http": "1.1", "persistent": 2, "pipeline": True,
             "request_size": "400B", "direction": "up", "dscp": "AF11"},
    "bulk1": {"kind": "bulk", "count": 10, "length": "2096B", "start": "100ms", "nodelay": True},
    "bulk2": {"kind": "bulk", "workload": "bulk-100", "direction": "up", "tos": 4},
    "voice": {"kind": "udp", "size": "132B", "rate": "64kbit", "duration": "500ms", "dscp": "EF"},
    "cbr": {"kind": "udp", "workload": "cbr-32k", "count": 7, "direction": "up"},
}


@dataclass
class FakeProc:
    returncode: int = 0

    def poll(self) -> int:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        return self.returncode

    def send_signal(self, sig: int) -> None:
        pass

    def kill(self) -> None:
        pass


@dataclass
class FakeHost:
    role: str
    address: str
    log: list[tuple[Any, ...]] = field(default_factory=list)
    codes: dict[str, int] = field(default_factory=dict)       # program name -> its exit code (default 0)
    started_at: dict[str, float] = field(default_factory=dict)   # program name -> monotonic start time

    def run(self, argv: Sequence[str], *, check: bool = True,
            timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
        if argv[0] == "ss":
            self.log.append(("run", *argv))
        listening = "LISTEN 0 5 *:7001 *:*\n" if argv[0] == "ss" else ""     # a command's server is ready
        return subprocess.CompletedProcess(list(argv), 0, listening, "")

    def program(self, name: str) -> str:
        return f"/{self.role}/bin/{name}"

    def files(self, work: Path) -> Path:
        return work / self.role

    def start(self, name: str, argv: Sequence[str], workdir: Path) -> Program:
        out, err = workdir / f"{name}.stdout", workdir / f"{name}.stderr"
        out.write_text(f"listening on {self.address}\n" + json.dumps({"ok": True, "program": name}) + "\n")
        err.write_text("")
        if name in self.codes:
            err.write_text(f"{name} went wrong\n")
        self.log.append(("start", name))
        self.started_at[name] = time.monotonic()
        return Program(name, list(argv), FakeProc(self.codes.get(name, 0)), out, err)   # type: ignore[arg-type]

    @contextmanager
    def capture(self, dev: str, path: Path, bpf_filter: str = "") -> Iterator[Any]:
        """An empty capture at `path`; its tcpdump's figures beside it in the results
        (files(work) is work/<role>), ended by squall; when it was asked to stop is unknown,
        as for an SSH capture."""
        capture = SimpleNamespace(ending=None, stop_requested_us=None)
        yield capture
        path.write_bytes(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 256, 1))
        (path.parent.parent / f"{path.name}.stderr").write_text(
            "0 packets captured\n0 packets received by filter\n0 packets dropped by kernel\n")
        capture.ending = Ending(requested=True, code=0)

    @contextmanager
    def http_server(self, port: int, run_dir: Path, pages: Sequence[Sequence[int]]) -> Iterator[None]:
        self.log.append(("http_server", port, str(run_dir), [list(p) for p in pages]))
        yield

    def read_proc(self, paths: Sequence[str]) -> str:
        """Socket tables without a connection; no counters (recorded as unreadable)."""
        return "  sl  local_address rem_address   st tx_queue rx_queue\n" if any("tcp" in p for p in paths) else ""

    def fetch(self, path: Path, local: Path) -> None:
        self.log.append(("fetch", str(path), local.name))
        shutil.copyfile(path, local)          # FileNotFoundError for what no program wrote


@dataclass
class FakeLink:
    workdir: Path

    def bring_up(self) -> None:
        pass

    def start(self) -> int:
        return 1_000_000

    def state(self) -> LinkState:
        """An empty link, quiet for a second: the drain ends at once."""
        return LinkState(pending=0, last_us=0, now_us=1_000_000)

    def close(self) -> None:
        """An emulator log of no packets."""
        (self.workdir / "emulator.log").write_text(
            "# squall-emulator event log\n# format 1\n# started yes\n# start_realtime_us 1000000\n"
            f"# columns {' '.join(COLUMNS)}\n# end time_us 0 reason stop\n")

    def dead_programs(self) -> dict[str, tuple[int, str]]:
        return {}


@dataclass
class FakeTestbed:
    fixed: FakeHost = field(default_factory=lambda: FakeHost("fixed", "198.18.0.1"))
    emu: FakeHost = field(default_factory=lambda: FakeHost("emu", ""))
    mobile: FakeHost = field(default_factory=lambda: FakeHost("mobile", "198.18.0.2"))
    label: str = "fake"

    @property
    def capture_points(self) -> dict[str, tuple[FakeHost, str]]:
        return {"fixed": (self.fixed, "eth0"), "mobile": (self.mobile, "wl0")}

    def link(self, link: Any, workdir: Path, *args: Any, **kw: Any) -> FakeLink:
        return FakeLink(workdir)

    def apply_tcp(self, profile: Any) -> dict:
        return {"profile": profile.name, "hosts": {}}

    def describe(self) -> dict:
        return {"backend": "fake"}


def run_fake(tmp_path: Path, table: dict[str, Any] = FLOWS, testbed: FakeTestbed | None = None
             ) -> tuple[FakeTestbed, dict[str, Any], replication.Status]:
    flows = parse_flows_section(table, "x.toml: flows")
    cell = ResolvedCell("c", {}, error_free(None, 10_000, 576), flows=flows)
    testbed, work = testbed or FakeTestbed(), tmp_path / "work"
    for role in ("fixed", "mobile"):
        (work / role).mkdir(parents=True)
    status = replication.run(testbed, replication.Job(cell, 1, 5, TIMEOUT_US), work,  # type: ignore[arg-type]
                             threading.Event())
    return testbed, json.loads((work / "workloads.json").read_text()), status


def offset(argv: list[str], start_us: int) -> list[str]:
    """argv with its --start-offset value, which counts down from the flow's start, checked
    and replaced by OFFSET."""
    i = argv.index("--start-offset") + 1
    us = int(argv[i].removesuffix("us"))
    assert start_us - 1_000_000 < us <= start_us and argv[i] == f"{us}us"
    return argv[:i] + ["OFFSET"] + argv[i + 1:]


def test_each_kind_of_flow_in_each_direction(tmp_path: Path) -> None:
    testbed, workloads, status = run_fake(tmp_path)
    assert status.status == "ok", status.reason
    w = tmp_path / "work"
    fixed, mobile = f"{w}/fixed", f"{w}/mobile"
    expected = {
        "web": {"kind": "http", "direction": "down", "workload": "s+2s", "start_us": 2_000_000, "tos": 0,
                "port": 8080, "client": {"host": "mobile", "argv": [
                    "/mobile/bin/squall-http", "--connect", "198.18.0.1:8080", "--workload", "s+2s",
                    "--http", "1.0", "--request-size", "350", "--timeout", "45000000us", "--parallel", "4",
                    "--start-offset", "OFFSET", "--tos", "0", "--log", f"{mobile}/web.client.log"]}},
        "page": {"kind": "http", "direction": "up", "workload": "custom", "start_us": 0, "tos": 40,
                 "port": 8081, "client": {"host": "fixed", "argv": [
                     "/fixed/bin/squall-http", "--connect", "198.18.0.2:8081", "--objects", "6288,2096",
                     "--http", "1.1", "--request-size", "400", "--timeout", "45000000us", "--persistent", "2",
                     "--pipeline", "--start-offset", "OFFSET", "--tos", "40", "--log",
                     f"{fixed}/page.client.log"]}},
        "bulk1": {"kind": "bulk", "direction": "down", "workload": "custom", "start_us": 100_000, "tos": 0,
                  "port": 5003, "sender": {"host": "fixed", "argv": [
                      "/fixed/bin/squall-bulk", "send", "--connect", "198.18.0.2:5003", "--count", "10",
                      "--length", "2096", "--nodelay", "--start-offset", "OFFSET", "--tos", "0", "--log",
                      f"{fixed}/bulk1.sender.log"]},
                  "receiver": {"host": "mobile", "argv": [
                      "/mobile/bin/squall-bulk", "recv", "--listen", "198.18.0.2:5003", "--tos", "0", "--log",
                      f"{mobile}/bulk1.receiver.log"]}},
        "bulk2": {"kind": "bulk", "direction": "up", "workload": "bulk-100", "start_us": 0, "tos": 4,
                  "port": 5004, "sender": {"host": "mobile", "argv": [
                      "/mobile/bin/squall-bulk", "send", "--connect", "198.18.0.1:5004", "--count", "100",
                      "--length", "2096", "--start-offset", "OFFSET", "--tos", "4", "--log",
                      f"{mobile}/bulk2.sender.log"]},
                  "receiver": {"host": "fixed", "argv": [
                      "/fixed/bin/squall-bulk", "recv", "--listen", "198.18.0.1:5004", "--tos", "4", "--log",
                      f"{fixed}/bulk2.receiver.log"]}},
        "voice": {"kind": "udp", "direction": "down", "workload": "custom", "start_us": 0, "tos": 184,
                  "port": 6005, "sender": {"host": "fixed", "argv": [
                      "/fixed/bin/squall-udp", "send", "--connect", "198.18.0.2:6005", "--size", "132",
                      "--rate", "64000bit", "--duration", "500000us", "--start-offset", "OFFSET", "--tos", "184",
                      "--log", f"{fixed}/voice.sender.log"]},
                  "receiver": {"host": "mobile", "argv": [
                      "/mobile/bin/squall-udp", "recv", "--listen", "198.18.0.2:6005", "--tos", "184", "--log",
                      f"{mobile}/voice.receiver.log"]}},
        "cbr": {"kind": "udp", "direction": "up", "workload": "cbr-32k", "start_us": 0, "tos": 0,
                "port": 6006, "sender": {"host": "mobile", "argv": [
                    "/mobile/bin/squall-udp", "send", "--connect", "198.18.0.1:6006", "--size", "132",
                    "--rate", "32000bit", "--count", "7", "--start-offset", "OFFSET", "--tos", "0", "--log",
                    f"{mobile}/cbr.sender.log"]},
                "receiver": {"host": "fixed", "argv": [
                    "/fixed/bin/squall-udp", "recv", "--listen", "198.18.0.1:6006", "--tos", "0", "--log",
                    f"{fixed}/cbr.receiver.log"]}},
    }
    starts = {name: e["start_us"] for name, e in expected.items()}
    for name, entry in workloads.items():
        for role in ("client", "sender", "receiver", "server"):
            if role in entry:
                got = entry[role]
                assert (got["exit_code"], got["summary"]) == (0, {"ok": True, "program": f"{name}.{role}"})
                assert (got.pop("stdout"), got.pop("stderr")) == (f"{name}.{role}.stdout", f"{name}.{role}.stderr")
                assert got.pop("stopped_by_squall") is False          # the fake programs end at once
                run_time = got.pop("run_time_us", None)       # the active program's, launch to exit
                assert got.pop("cpu_wait_us") is None         # fake hosts measure no CPU wait
                assert (run_time is not None and run_time >= 0) == (role in ("client", "sender"))
                del got["exit_code"], got["summary"]
                if role != "receiver":
                    got["argv"] = offset(got["argv"], starts[name])
    assert workloads == expected
    assert status.details["flows"] == {
        "web": {"client": {"exit_code": 0, "ok": True}}, "page": {"client": {"exit_code": 0, "ok": True}},
        **{name: {"sender": {"exit_code": 0, "ok": True}, "receiver": {"exit_code": 0, "ok": True}}
           for name in ("bulk1", "bulk2", "voice", "cbr")}}


def test_what_listens_before_t0_and_which_files_are_fetched(tmp_path: Path) -> None:
    testbed, _, _ = run_fake(tmp_path)
    w = tmp_path / "work"
    # The TCP sampler beside each capture; web servers and receivers start before t = 0, in file
    # order; then the clients and senders.
    assert testbed.fixed.log[:7] == [
        ("start", "fixed.tcp-sampler"),
        ("http_server", 8080, f"{w}/fixed/web.server", [[6288, 2096, 2096]]),
        ("start", "bulk2.receiver"), ("start", "cbr.receiver"),
        ("start", "page.client"), ("start", "bulk1.sender"), ("start", "voice.sender")]
    assert testbed.mobile.log[:7] == [
        ("start", "mobile.tcp-sampler"),
        ("http_server", 8081, f"{w}/mobile/page.server", [[6288, 2096]]),
        ("start", "bulk1.receiver"), ("start", "voice.receiver"),
        ("start", "web.client"), ("start", "bulk2.sender"), ("start", "cbr.sender")]
    fetched = {host.role: sorted(e[1:] for e in host.log if e[0] == "fetch") for host in (testbed.fixed, testbed.mobile)}
    assert fetched == {
        "fixed": sorted([(f"{w}/fixed/fixed.pcap", "fixed.pcap"),
                         (f"{w}/fixed/fixed.tcpinfo.tsv", "fixed.tcpinfo.tsv"),
                         (f"{w}/fixed/web.server/access.log", "web.access.log"),
                         (f"{w}/fixed/web.server/error.log", "web.error.log"),
                         (f"{w}/fixed/page.client.log", "page.client.log"),
                         (f"{w}/fixed/bulk1.sender.log", "bulk1.sender.log"),
                         (f"{w}/fixed/bulk2.receiver.log", "bulk2.receiver.log"),
                         (f"{w}/fixed/voice.sender.log", "voice.sender.log"),
                         (f"{w}/fixed/cbr.receiver.log", "cbr.receiver.log")]),
        "mobile": sorted([(f"{w}/mobile/mobile.pcap", "mobile.pcap"),
                          (f"{w}/mobile/mobile.tcpinfo.tsv", "mobile.tcpinfo.tsv"),
                          (f"{w}/mobile/page.server/access.log", "page.access.log"),
                          (f"{w}/mobile/page.server/error.log", "page.error.log"),
                          (f"{w}/mobile/web.client.log", "web.client.log"),
                          (f"{w}/mobile/bulk1.receiver.log", "bulk1.receiver.log"),
                          (f"{w}/mobile/bulk2.sender.log", "bulk2.sender.log"),
                          (f"{w}/mobile/voice.receiver.log", "voice.receiver.log"),
                          (f"{w}/mobile/cbr.sender.log", "cbr.sender.log")])}


def test_expanded_json_of_each_kind_of_flow() -> None:
    web, page, bulk1, _, voice, cbr = (plain(f) for f in parse_flows_section(FLOWS, "x.toml: flows"))
    assert json.dumps(web) == json.dumps({
        "name": "web", "start_us": 2000000, "tos": 0, "direction": "down",
        "page": {"label": "s+2s", "sizes": [6288, 2096, 2096]}, "http": "1.0", "parallel": 4, "persistent": 1,
        "pipeline": False, "request_size": 350, "inline_after": "complete", "delayed_acks": False, "kind": "http"})
    assert json.dumps(bulk1) == json.dumps({
        "name": "bulk1", "start_us": 100000, "tos": 0, "direction": "down",
        "transfer": {"label": "custom", "count": 10, "length": 2096}, "nodelay": True, "delayed_acks": False,
        "kind": "bulk"})
    assert json.dumps(voice) == json.dumps({
        "name": "voice", "start_us": 0, "tos": 184, "direction": "down",
        "stream": {"label": "custom", "size": 132, "rate_bps": 64000, "rate_counts": "payload"}, "duration_us": 500000, "count": None,
        "kind": "udp"})
    assert (page["direction"], cbr["count"]) == ("up", 7)


def test_main_metrics_of_each_kind_from_workloads_json() -> None:
    http = {"kind": "http", "client": {"summary": {"ok": True, "response_time_us": 4_500_000}}}
    bulk = {"kind": "bulk", "sender": {"summary": {"bytes": 1000, "connect_start_us": 5, "end_us": 1_000_005}},
            "receiver": {"summary": {"bytes": 1000}}}
    udp = {"kind": "udp", "sender": {"summary": {"sent": 10}},
           "receiver": {"summary": {"throughput_bps": 31000, "loss": 0.5}}}
    assert main_metrics(http) == {"page time": 4.5}
    assert main_metrics(bulk) == {"elapsed": 1.0, "goodput": 8000.0}
    assert main_metrics(udp) == {}      # the analysis' numbers (testbed/run/status.py), not its own
    # What a failed or odd replication leaves: no summary, no end, a zero time, an unknown kind.
    assert main_metrics({"kind": "http", "client": {"summary": None}}) == {}
    assert main_metrics({"kind": "bulk", "sender": {"summary": {"bytes": 1, "connect_start_us": 5}}}) == {}
    assert main_metrics({"kind": "bulk", "sender": {"summary": {"bytes": 1, "connect_start_us": 5,
                                                                "end_us": 5}}}) == {"elapsed": 0.0, "goodput": 0.0}
    assert main_metrics({"kind": "udp"}) == {}
    assert main_metrics({"kind": "video", "client": http["client"]}) == {}
    assert main_metrics({}) == {}


def test_in_line_timing_and_delayed_acks_reach_the_generators() -> None:
    flows = parse_flows_section({
        "web": {"kind": "http", "workload": "s+2s", "inline_after": "first", "delayed_acks": True},
        "part": {"kind": "http", "workload": "s+2s", "http": "1.1", "pipeline": True, "inline_after": "1kB"},
        "bulk": {"kind": "bulk", "count": 3, "delayed_acks": True},
    }, "x.toml: flows")
    web, part, bulk = flows
    program = lambda name: name      # noqa: E731
    web_argv = web.active_argv(program, "a:1", offset_us=0, log=Path("l"), timeout_us=1)
    assert web_argv[web_argv.index("--inline-after") + 1] == "first" and "--delayed-acks" in web_argv
    part_argv = part.active_argv(program, "a:1", offset_us=0, log=Path("l"), timeout_us=1)
    assert part_argv[part_argv.index("--inline-after") + 1] == "1000" and "--delayed-acks" not in part_argv
    assert "--delayed-acks" in bulk.passive_argv(program, "a:1", Path("l"))
    assert "--delayed-acks" not in bulk.active_argv(program, "a:1", offset_us=0, log=Path("l"), timeout_us=1)
    with pytest.raises(ConfigError, match=r"flows.web.inline_after"):
        parse_flows_section({"web": {"kind": "http", "workload": "s+2s", "inline_after": "soon"}}, "x.toml: flows")


COMMANDS = {
    "perf": {"kind": "command", "server": ["iperf3", "-s", "-p", "{port}"], "dscp": "EF",
             "client": ["iperf3", "-c", "{server_address}", "-p", "{port}", "-t", "5", "-S", "{tos}"]},
    "get": {"kind": "command", "serve": ["100kB", 2096], "direction": "up", "start": "300ms",
            "client": ["curl", "-o", "/dev/null", "{url}", "{url1}"]},
    "probe": {"kind": "command", "client": ["/bin/echo", "{server}", "{client_address}", "{{x}}", "{timeout_s}",
                                             "{dscp}"]},
}


def test_command_flows_run_any_program_with_the_runs_addresses_and_ports(tmp_path: Path) -> None:
    testbed, workloads, status = run_fake(tmp_path, COMMANDS)
    assert status.status == "ok", status.reason
    perf, get, probe = workloads["perf"], workloads["get"], workloads["probe"]
    # Ports 7001 + i; direction down: the server at the fixed host, the client at the mobile host.
    assert (perf["kind"], perf["workload"], perf["port"], perf["tos"]) == ("command", "iperf3", 7001, 46 << 2)
    assert perf["server"]["argv"] == ["iperf3", "-s", "-p", "7001"] and perf["server"]["host"] == "fixed"
    assert perf["client"]["argv"] == ["iperf3", "-c", "198.18.0.1", "-p", "7001", "-t", "5", "-S", "184"]
    assert perf["client"]["host"] == "mobile"
    # serve: the per-run nginx at the server host (up: the mobile host) serves the objects on the port.
    assert ("http_server", 7002, str(tmp_path / "work" / "mobile" / "get.server"), [[100_000, 2096]]) in testbed.mobile.log
    assert get["client"]["argv"] == ["curl", "-o", "/dev/null", "http://198.18.0.2:7002/obj/0-100000",
                                     "http://198.18.0.2:7002/obj/1-2096"]
    assert (get["client"]["host"], "server" in get) == ("fixed", False)
    assert probe["client"]["argv"] == ["/bin/echo", "198.18.0.1:7003", "198.18.0.2", "{x}", "40", "0"]
    # Each program's exit status and output files are recorded; a command prints no summary.
    for name, role in (("perf", "client"), ("perf", "server"), ("get", "client"), ("probe", "client")):
        entry = workloads[name][role]
        assert (entry["exit_code"], entry["summary"], entry["stopped_by_squall"]) == (0, None, False)
        assert (entry["stdout"], entry["stderr"]) == (f"{name}.{role}.stdout", f"{name}.{role}.stderr")
        assert (tmp_path / "work" / entry["stdout"]).exists()
    # The server listened (a socket on its port) before the clients; each client started at its flow's start.
    assert testbed.fixed.log[:3] == [("start", "fixed.tcp-sampler"), ("start", "perf.server"),
                                     ("run", "ss", "-H", "-l", "-n", "-t", "-u", "sport = :7001")]
    assert testbed.fixed.started_at["get.client"] - testbed.mobile.started_at["perf.client"] >= 0.3
    assert status.details["flows"]["perf"] == {"client": {"exit_code": 0, "ok": True},
                                               "server": {"exit_code": 0, "ok": True}}
    assert main_metrics(get).keys() == {"run time"}


def test_a_failing_command_fails_the_replication_with_its_exit_status_and_stderr(tmp_path: Path) -> None:
    testbed = FakeTestbed()
    testbed.mobile.codes["perf.client"] = 3
    _, workloads, status = run_fake(tmp_path, {"perf": COMMANDS["perf"]}, testbed)
    assert status.status == "failed"
    assert status.reason.startswith("flow perf: the client (iperf3) exited with code 3: perf.client went wrong")
    assert workloads["perf"]["client"]["exit_code"] == 3
    assert status.details["flows"]["perf"]["client"] == {"exit_code": 3, "ok": False}
    # A server that ends by itself with an error (not stopped by squall) is named too.
    testbed = FakeTestbed()
    testbed.fixed.codes["perf.server"] = 1
    _, _, status = run_fake(tmp_path / "2", {"perf": COMMANDS["perf"]}, testbed)
    assert "flow perf: the server (iperf3) exited with code 1" in status.reason


def test_command_flows_in_expanded_json() -> None:
    (perf,) = parse_flows_section({"perf": COMMANDS["perf"]}, "x.toml: flows")
    assert plain(perf) == {"name": "perf", "start_us": 0, "tos": 184, "direction": "down",
                           "client": list(COMMANDS["perf"]["client"]), "server": ["iperf3", "-s", "-p", "{port}"],
                           "serve": [], "ready_delay_us": None, "kind": "command"}
