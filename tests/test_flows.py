"""The [flows] and [tcp] sections: what a scenario's flows become, and every mistake named by its key."""
from __future__ import annotations

from pathlib import Path

import pytest

from testbed.scenario import loader as scenario
from testbed.errors import ConfigError
from testbed.scenario.flows import BulkFlow, CommandFlow, HttpFlow, Readiness, UdpFlow, parse_flows_section
from testbed.scenario.tcp_section import parse_tcp_section

W = "x.toml: flows"


def parse(table: dict) -> tuple:
    return parse_flows_section(table, W)


def test_the_example_of_the_docs() -> None:
    web, bulk1, voice = parse({
        "web": {"kind": "http", "workload": "s+2s", "http": "1.0", "start": "0s", "dscp": 0},
        "bulk1": {"kind": "bulk", "count": 90, "length": "2096B", "start": "5s"},
        "voice": {"kind": "udp", "size": "132B", "rate": "32kbit", "duration": "60s", "dscp": 46},
    })
    assert isinstance(web, HttpFlow) and web.page.sizes == (6288, 2096, 2096)
    assert (web.http, web.parallel, web.start_us, web.tos, web.direction) == ("1.0", 4, 0, 0, "down")
    assert isinstance(bulk1, BulkFlow) and (bulk1.transfer.count, bulk1.transfer.length) == (90, 2096)
    assert bulk1.start_us == 5_000_000
    assert isinstance(voice, UdpFlow) and (voice.stream.size, voice.stream.rate_bps) == (132, 32_000)
    assert (voice.duration_us, voice.count, voice.tos, voice.dscp) == (60_000_000, None, 46 << 2, 46)


def test_defaults_and_alternatives() -> None:
    web, bulk, cbr, up = parse({
        "web": {"kind": "http", "objects": [6288, "2096B"], "http": "1.1", "persistent": 2, "pipeline": True},
        "bulk": {"kind": "bulk"},
        "cbr": {"kind": "udp", "workload": "cbr-32k", "count": 10, "tos": 0xb8},
        "up": {"kind": "bulk", "workload": "bulk-100", "direction": "up", "dscp": "AF11"},
    })
    assert web.page.sizes == (6288, 2096) and (web.persistent, web.pipeline, web.request_size) == (2, True, 350)
    assert (bulk.transfer.count, bulk.transfer.length, bulk.nodelay) == (90, 2096, False)
    assert (cbr.stream.size, cbr.stream.rate_bps, cbr.count, cbr.tos) == (132, 32_000, 10, 0xb8)
    assert (up.direction, up.transfer.count, up.tos) == ("up", 100, 10 << 2)
    assert [f.name for f in (web, bulk, cbr, up)] == ["web", "bulk", "cbr", "up"]   # file order


MISTAKES = [
    ({"web": {"kind": "ftp"}}, "flows.web.kind", "'ftp' is not a flow kind"),
    ({"web": {"kind": "http", "workload": "s+2s", "colour": 1}}, "flows.web.colour", "unknown key for a http flow"),
    ({"web": {"kind": "http", "workload": "s+3s"}}, "flows.web.workload", "'s+3s' is not a http workload"),
    ({"web": {"kind": "http", "workload": "bulk-90"}}, "flows.web.workload", "not one for a http flow"),
    ({"web": {"kind": "http"}}, "flows.web.objects", "missing"),
    ({"web": {"kind": "http", "workload": "s+2s", "http": 1.1}}, "flows.web.http", "not an HTTP version"),
    ({"web": {"kind": "http", "workload": "s+2s", "persistent": 2}}, "flows.web.persistent", "http = \"1.1\" only"),
    ({"web": {"kind": "http", "workload": "s+2s", "http": "1.1", "persistent": 3}}, "flows.web.persistent",
     "from 1 to 2"),
    ({"web": {"kind": "http", "workload": "s+2s", "objects": [1]}}, "flows.web.objects", "not both"),
    ({"web": {"kind": "http", "objects": [6288, "2kb"]}}, "flows.web.objects[1]", "unknown unit"),
    ({"b": {"kind": "bulk", "start": "5"}}, "flows.b.start", "expected a number and a unit"),
    ({"b": {"kind": "bulk", "length": "0B"}}, "flows.b.length", "positive"),
    ({"b": {"kind": "bulk", "count": 0}}, "flows.b.count", "from 1"),
    ({"b": {"kind": "bulk", "direction": "sideways"}}, "flows.b.direction", "not a direction"),
    ({"b": {"kind": "bulk", "dscp": "XX"}}, "flows.b.dscp", "unknown DSCP name"),
    ({"b": {"kind": "bulk", "dscp": 46, "tos": 184}}, "flows.b.tos", "not both"),
    ({"b": {"kind": "bulk", "tos": 256}}, "flows.b.tos", "TOS byte"),
    ({"v": {"kind": "udp", "size": "132B", "rate": "32kbit"}}, "flows.v.duration", "needs a duration"),
    ({"v": {"kind": "udp", "size": "132B", "duration": "1s"}}, "flows.v.rate", "needs size and rate"),
    ({"v": {"kind": "udp", "size": "10B", "rate": "32kbit", "duration": "1s"}}, "flows.v.size", "20 to 65507"),
    ({"v": {"kind": "udp", "size": "132B", "rate": "fast", "duration": "1s"}}, "flows.v.rate", "fast"),
    ({"c": {"kind": "command"}}, "flows.c.client", "missing"),
    ({"c": {"kind": "command", "client": "curl {url}"}}, "flows.c.client", "as a list of strings"),
    ({"c": {"kind": "command", "client": []}}, "flows.c.client", "as a list of strings"),
    ({"c": {"kind": "command", "client": ["iperf3", "-t", 5]}}, "flows.c.client[2]", "not a string"),
    ({"c": {"kind": "command", "client": ["iperf3", "-c", "{host}"]}}, "flows.c.client[2]",
     "unknown placeholder {host}"),
    ({"c": {"kind": "command", "client": ["curl", "{url}"]}}, "flows.c.client[1]", "unknown placeholder {url}"),
    ({"c": {"kind": "command", "serve": [10], "client": ["curl", "{url1}"]}}, "flows.c.client[1]",
     "unknown placeholder {url1}"),
    ({"c": {"kind": "command", "client": ["echo", "{"]}}, "flows.c.client[1]", "literal brace"),
    ({"c": {"kind": "command", "client": ["echo", "{Port}"]}}, "flows.c.client[1]", "lower-case"),
    ({"c": {"kind": "command", "client": ["iperf3 -c x"]}}, "flows.c.client[0]", "plain name"),
    ({"c": {"kind": "command", "client": ["./iperf3"]}}, "flows.c.client[0]", "absolute path"),
    ({"c": {"kind": "command", "client": ["/usr/../bin/sh"]}}, "flows.c.client[0]", "absolute path"),
    ({"c": {"kind": "command", "client": ["{port}"]}}, "flows.c.client[0]", "without placeholders"),
    ({"c": {"kind": "command", "client": ["echo", "a\0b"]}}, "flows.c.client[1]", "without NUL"),
    ({"c": {"kind": "command", "client": ["curl"], "server": ["nc", "-l"], "serve": [10]}}, "flows.c.serve",
     "not both"),
    ({"c": {"kind": "command", "client": ["curl"], "serve": []}}, "flows.c.serve", "list of object sizes"),
    ({"c": {"kind": "command", "client": ["curl"], "serve": ["0B"]}}, "flows.c.serve[0]", "positive"),
    ({"c": {"kind": "command", "client": ["curl"], "server": ["nc", "{url}"]}}, "flows.c.server[1]",
     "unknown placeholder {url}"),
    ({"c": {"kind": "command", "client": ["curl"], "ready": "1s"}}, "flows.c.ready", "server command line only"),
    ({"c": {"kind": "command", "client": ["curl"], "server": ["nc"], "ready": "soon"}}, "flows.c.ready", "soon"),
    ({"c": {"kind": "command", "client": ["curl"], "server": ["nc"], "ready": "2min"}}, "flows.c.ready",
     "up to 60s"),
    ({"c": {"kind": "command", "client": ["curl"], "workload": "s+2s"}}, "flows.c.workload",
     "unknown key for a command flow"),
    ({"c": {"kind": "command", "client": ["curl"], "args": []}}, "flows.c.args", "unknown key for a command flow"),
    ({"1web": {"kind": "bulk"}}, "flows.1web", "starts with a letter"),
    ({"web": "s+2s"}, "flows.web", "expected a table"),
]


@pytest.mark.parametrize("table, where, words", MISTAKES, ids=[m[1] + ":" + m[2] for m in MISTAKES])
def test_each_mistake_is_named_by_its_key(table: dict, where: str, words: str) -> None:
    with pytest.raises(ConfigError) as e:
        parse(table)
    assert e.value.where == f"x.toml: {where}", str(e.value)
    assert words in str(e.value)


def test_empty_flows_table_is_refused() -> None:
    with pytest.raises(ConfigError, match="expected a table of named flows"):
        parse({})


def test_a_scenario_file_mistake_names_file_cell_and_key(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('seed = 1\nlink = "e0"\n[flows.web]\nkind = "http"\nworkload = "s+2s"\n'
                    '[matrix]\n"flows.web.http" = ["1.0", "2"]\n')
    with pytest.raises(ConfigError) as e:
        scenario.load(path)
    assert str(e.value).startswith(f"{path} (cell http-2): flows.web.http: '2' is not an HTTP version")


def test_tcp_section_profile_and_overrides() -> None:
    iw4 = parse_tcp_section({"profile": "iw4"}, "x.toml: tcp")
    assert (iw4.name, iw4.initcwnd, iw4.flush_metrics) == ("iw4", 4, True)
    custom = parse_tcp_section({"profile": "baseline", "sysctl": {"net.ipv4.tcp_dsack": 1}}, "x.toml: tcp")
    assert custom.sysctls["net.ipv4.tcp_dsack"] == 1 and custom.sysctls["net.ipv4.tcp_sack"] == 1
    assert parse_tcp_section({"profile": "cbi"}, "x.toml: tcp").flush_metrics is False
    with pytest.raises(ConfigError, match="x.toml: tcp.profile: unknown tcp profile 'iw5'"):
        parse_tcp_section({"profile": "iw5"}, "x.toml: tcp")
    with pytest.raises(ConfigError, match="x.toml: tcp.colour: unknown key"):
        parse_tcp_section({"profile": "iw4", "colour": 1}, "x.toml: tcp")


def test_command_flows() -> None:
    perf, get, once = parse({
        "perf": {"kind": "command", "server": ["iperf3", "-s", "-p", "{port}"], "ready": "500ms", "direction": "up",
                 "client": ["/usr/bin/iperf3", "-c", "{server_address}", "-p", "{port}", "-S", "{tos}"], "dscp": "AF11"},
        "get": {"kind": "command", "serve": ["100kB", 2096], "start": "1s",
                "client": ["curl", "-o", "/dev/null", "{url}", "{url0}", "{url1}", "{{literal}}"]},
        "once": {"kind": "command", "client": ["true"]},
    })
    assert isinstance(perf, CommandFlow) and perf.server == ("iperf3", "-s", "-p", "{port}")
    assert (perf.ready_delay_us, perf.hosts(), perf.workload_label, perf.port(0)) == (500_000, ("fixed", "mobile"),
                                                                                      "iperf3", 7001)
    assert perf.readiness() == Readiness(line=None, listen=False, delay_us=500_000)
    assert get.readiness() == Readiness(line=None, listen=True) and get.web_pages() == ((100_000, 2096),)
    assert (get.serve, get.server, get.start_us, get.hosts()) == ((100_000, 2096), None, 1_000_000, ("mobile", "fixed"))
    assert get.active_argv(str, "198.18.0.1:7002", offset_us=0, log=Path("x"), timeout_us=1) == [
        "curl", "-o", "/dev/null", "http://198.18.0.1:7002/obj/0-100000", "http://198.18.0.1:7002/obj/0-100000",
        "http://198.18.0.1:7002/obj/1-2096", "{literal}"]
    assert perf.passive_argv(str, "[fd00::1]:7001", Path("x"), peer="fd00::2") == ["iperf3", "-s", "-p", "7001"]
    assert perf.active_argv(str, "[fd00::1]:7001", offset_us=0, log=Path("x"), timeout_us=1) == [
        "/usr/bin/iperf3", "-c", "fd00::1", "-p", "7001", "-S", str(10 << 2)]
    assert (once.passive_argv(str, "a:1", Path("x")), once.web_pages(), once.log_files()) == (None, (), [])
    # A command is judged by its exit status; a server squall stopped after the flow did its job.
    assert once.problem("client", 0, None, stopped=False, stderr="") is None
    assert once.problem("client", 2, None, stopped=False, stderr="oops") == "exited with code 2: oops"
    assert once.problem("server", -15, None, stopped=True, stderr="") is None
    assert once.problem("server", 1, None, stopped=False, stderr="x") == "exited with code 1: x"
