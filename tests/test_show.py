"""`squall show`: every cell readable, values with their units, no Python reprs; `--json` is
expanded.json's form (no root needed)."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from testbed.cli import main
from testbed.run.runner import expanded
from testbed.scenario import loader
from testbed.units import format_rate_bps, format_time_us

REPO = Path(__file__).resolve().parent.parent

EVERYTHING = """
name = "everything"
seed = 1
timeout = "90s"
timing_tolerance = "1500us"

[link]
bandwidth = [["0s", "64kbit"], ["10s", "0bit"], ["12s", "1.5Mbit"]]
delay = "300ms"
mtu = "576B"
error = { good = 0.01, bad = 0.5 }
arq = { retransmissions = 2, delay = "700ms" }
channel = { good = "exponential(6s, min=1s, max=9s)", bad = "uniform(1.5s, 3s)" }
[link.up]
bandwidth = "32kbit"
in_order = false

[router]
engine = "emulator"
rate = "64kbit"
default = "BE"
filters = [{ class = "EF", dscp = "EF" }, { class = "EF", protocol = "udp", dport = 6003 }]
[router.classes]
EF = { rate = "32kbit", priority = 0, queue = { discipline = "pfifo", limit = 10 } }
BE = { rate = "32kbit", priority = 1, queue = { discipline = "red", limit = "11000B", min = "2000B", max = "6000B", avpkt = "500B", ecn = true } }
[router.up]
queue = { discipline = "pfifo", limit = 5 }

[tcp]
profile = "iw4"

[flows.web]
kind = "http"
workload = "s+2s"
http = "1.1"
persistent = 2
pipeline = true
[flows.bulk]
kind = "bulk"
count = 10
length = "2096B"
start = "1.5s"
direction = "up"
[flows.voice]
kind = "udp"
size = "132B"
rate = "16kbit"
duration = "5s"
dscp = "EF"
[flows.get]
kind = "command"
serve = ["20kB"]
client = ["curl", "-o", "/dev/null", "-w", "%{{http_code}} x", "{url}"]
"""


def show(path: Path, capsys: pytest.CaptureFixture[str], *options: str) -> str:
    assert main(["show", str(path), *options]) == 0
    return capsys.readouterr().out


def test_every_section_is_readable_with_units(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.toml"
    path.write_text(textwrap.dedent(EVERYTHING))
    out = show(path, capsys)
    for repr_sign in ("{'", "[{", "': ", "None", "True", "False", "Distribution(", "RateStep("):
        assert repr_sign not in out, repr_sign
    expected = [
        "scenario everything: 1 cells x 1 replications, seed 1, timeout 90 s, timing tolerance 1.5 ms, CPU wait tolerance 1 %",
        "[default]",
        "    down: schedule 64 kbit/s from 0 s, 0 bit/s from 10 s, 1.5 Mbit/s from 12 s, delay 300 ms, MTU 576 B, "
        "send buffer 9600 B, receive buffer 9600 B, frame error probability 0.01 good, 0.5 bad, "
        "ARQ 2 retransmissions 700 ms apart",
        "    up: 32 kbit/s, delay 300 ms, MTU 576 B, send buffer 9600 B, receive buffer 9600 B, frame error probability "
        "0.01 good, 0.5 bad, ARQ 2 retransmissions 700 ms apart, delivered out of order",
        "    channel: starts good; good exponential, mean 6 s, truncated to 1 s .. 9 s, bad uniform 1.5 s to 3 s",
        "  router: engine emulator, 64 kbit/s, DiffServ",
        "    class EF: rate 32 kbit/s, ceil 64 kbit/s, priority 0, quantum 1500 B, tail drop (pfifo) at 10 packets",
        "    filter: DSCP 46 -> class EF",
        "    filter: udp, destination port 6003 -> class EF",
        "  router.up (uplink): engine emulator, 32 kbit/s, one class, no DiffServ",
        "    class all: rate 32 kbit/s, ceil 32 kbit/s, priority 0, quantum 1500 B, tail drop (pfifo) at 5 packets",
        "    initial congestion window 4 segments, metrics cache flushed before each replication",
        "    web: http, page s+2s (6288 B + 2096 B + 2096 B), HTTP/1.1, 2 persistent connections, pipelined, requests "
        "350 B; client at the mobile host, server at the fixed host (down); start 0 s; DSCP 0",
        "    bulk: bulk, 10 x 2096 B (20960 B); sender at the mobile host, receiver at the fixed host (up); start 1.5 s; "
        "DSCP 0",
        "    voice: udp, 132 B datagrams at 16 kbit/s of payload, for 5 s; sender at the fixed host, receiver at the "
        "mobile host (down); start 0 s; DSCP 46",
        '    get: command, client `curl -o /dev/null -w "%{{http_code}} x" {url}`, nginx serving 20000 B; client at '
        "the mobile host, server at the fixed host (down); start 0 s; DSCP 0",
    ]
    lines = out.splitlines()
    for line in expected:
        assert line in lines, line
    assert any(line.startswith("    class BE: rate 32 kbit/s") and "RED limit 11000 B, min 2000 B, max 6000 B" in line
               and line.endswith("ECN marking, the default class") for line in lines)
    assert any(line.startswith("  tcp iw4") for line in lines)
    assert any(line.startswith("    sysctls: tcp_congestion_control = ") for line in lines)


def test_json_is_expanded_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.toml"
    path.write_text(textwrap.dedent(EVERYTHING))
    assert json.loads(show(path, capsys, "--json")) == json.loads(json.dumps(expanded(loader.load(path))["cells"]))


@pytest.mark.parametrize("name", ["demo", "iip-mixture", "examples/iperf3", "examples/latency-under-load",
                                  "examples/flent-ping"])
def test_the_shipped_scenarios_show_without_reprs(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    out = show(REPO / "scenarios" / f"{name}.toml", capsys)
    assert "{'" not in out and "[{" not in out and "None" not in out


def test_units_formatting() -> None:
    assert [format_time_us(us) for us in (0, 120, 1500, 300_000, 2_500_000, 3_600_000_000)] == [
        "0 s", "120 us", "1.5 ms", "300 ms", "2.5 s", "3600 s"]
    assert [format_rate_bps(b) for b in (None, 500, 64_000, 1_500_000, 10**9)] == [
        "unlimited", "500 bit/s", "64 kbit/s", "1.5 Mbit/s", "1 Gbit/s"]


def test_show_prints_when_a_replication_has_ended_at_the_latest(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """The timeout, the drain (capped at DRAIN_LIMIT_S whatever the link) and the stopping."""
    path = tmp_path / "s.toml"
    path.write_text('seed = 1\ntimeout = "5s"\n[link]\nbandwidth = "64kbit"\ndelay = "30s"\nmtu = "576B"\n'
                    '[flows.voice]\nkind = "udp"\nsize = "132B"\nrate = "16kbit"\nduration = "1s"\n')
    lines = show(path, capsys).splitlines()
    assert ("  ends: at the latest 51 s after t = 0: the timeout 5 s, the drain up to 30 s (the link's worst "
            "case 62.6 s, at most 30 s), stopping the programs and captures up to 16 s") in lines


def test_a_description_with_control_characters_is_printed_escaped(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.toml"
    path.write_text('description = "mix\\u001b[2J\\nforged line\\u0007"\n' + textwrap.dedent(EVERYTHING))
    out = show(path, capsys)
    assert "\x1b" not in out and "\x07" not in out and "\nforged line" not in out
    assert "  mix\\x1b[2J\\nforged line\\x07" in out.splitlines()
