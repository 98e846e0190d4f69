"""DiffServ on the real path (issue 3): a 32 kbit/s EF UDP stream against two bulk TCP flows
that saturate a 64 kbit/s emulated link, with the tc HTB router on the router-side TUN.

With an EF class the stream keeps >= 95 % of its datagrams; with one shared 20-packet tail-drop
queue the TCP flows keep it full and the stream loses a large part of its datagrams (measured
here: 304 of 304 kept with DiffServ, 210 of 304 without; the test asks for < 80 %).
Runs through `squall run`, lanes $SQUALL_TEST_ROUTER_LANE + 7 (default 67).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import require_programs
from support_run import lenient_text, run_squall

pytestmark = pytest.mark.netns
LANE = int(os.environ.get("SQUALL_TEST_ROUTER_LANE", "60")) + 7

BASE = """
name = "diffserv-{label}"
seed = 4
timeout = "60s"
tcp = "baseline"

[link]
bandwidth = "64kbit"
delay = "50ms"
mtu = "576B"

[flows.bulk1]
kind = "bulk"
count = 40
length = "2096B"

[flows.bulk2]
kind = "bulk"
count = 40
length = "2096B"

[flows.voice]
kind = "udp"
size = "132B"
rate = "32kbit"
duration = "10s"
start = "3s"
dscp = "EF"
"""

DIFFSERV = """
[router]
default = "BE"
[router.classes.EF]
rate = "40kbit"
ceil = "64kbit"
priority = 0
queue = { discipline = "pfifo", limit = 10 }
[router.classes.BE]
rate = "24kbit"
ceil = "64kbit"
priority = 1
queue = { discipline = "pfifo", limit = 20 }
[[router.filters]]
class = "EF"
dscp = "EF"
"""

SHARED_QUEUE = """
[router]
queue = { discipline = "pfifo", limit = 20 }
"""


def voice_summary(tmp_path: Path, label: str, router: str) -> dict:
    path = tmp_path / f"{label}.toml"
    path.write_text(lenient_text(BASE.format(label=label)) + router)     # not about timing
    code, _, err = run_squall(path, tmp_path / "results", LANE)
    assert code == 0, err
    (rep,) = (tmp_path / "results").glob(f"diffserv-{label}-*/cells/default/rep-01")
    workloads = json.loads((rep / "workloads.json").read_text())
    for bulk in ("bulk1", "bulk2"):    # the TCP flows really ran alongside
        assert workloads[bulk]["receiver"]["summary"]["bytes"] == 40 * 2096
    return workloads["voice"]["receiver"]["summary"]


def test_ef_class_protects_the_udp_stream_from_two_tcp_flows(tmp_path: Path) -> None:
    require_programs("squall-emulator", "squall-npa", "squall-bulk", "squall-udp", "squall-queue-monitor")
    protected = voice_summary(tmp_path, "on", DIFFSERV)
    shared = voice_summary(tmp_path, "off", SHARED_QUEUE)
    sent = protected["expected"]
    assert protected["received"] >= 0.95 * sent, protected
    assert shared["received"] < 0.8 * shared["expected"], (protected, shared)
