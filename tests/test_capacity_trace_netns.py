"""End to end over a recorded capacity trace (docs/links.md "Recorded capacity traces"): a bulk
TCP download through the emulator replaying a mahimahi trace reaches the trace's capacity less
the headers.

The trace has one delivery opportunity every 4 ms (250 per 1 s period): 1500 B of IP packet per
opportunity, 3 Mbit/s of IP. A full-size segment carries 1500 - 20 (IP) - 20 (TCP) - 12
(timestamps) = 1448 B of payload, so the expected goodput is 3 Mbit/s x 1448 / 1500 =
2.896 Mbit/s. The measured one is the receiver's bytes between its first and last byte; slow
start and the last round trip cost it a little, the trace's capacity bounds it from above.

Lane $SQUALL_TEST_LANE_BASE + 4."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import lane_base, require_programs
from support_run import one_replication_head, run_squall

pytestmark = pytest.mark.netns
LANE = lane_base() + 4
OPPORTUNITY_MS = 4
EXPECTED_BPS = 1500 * 8 * 1000 / OPPORTUNITY_MS * 1448 / 1500      # 2.896 Mbit/s of TCP payload
BYTES = 250 * 10_000

SCENARIO = one_replication_head("trace-bulk", 7) + f"""
[link]
mtu = "1500B"
delay = "20ms"
send_buffer = "100000B"
recv_buffer = "1000000B"

[link.down]
bandwidth = {{ mahimahi = "steady.trace" }}

[link.up]
bandwidth = "2Mbit"

[flows.download]
kind = "bulk"
count = 250
length = "10000B"
"""


def test_bulk_download_reaches_the_trace_capacity_less_headers(tmp_path: Path) -> None:
    require_programs("squall-emulator", "squall-npa", "squall-bulk")
    (tmp_path / "steady.trace").write_text("".join(f"{ms}\n" for ms in range(OPPORTUNITY_MS, 1001, OPPORTUNITY_MS)))
    path = tmp_path / "trace-bulk.toml"
    path.write_text(SCENARIO)
    code, out, err = run_squall(path, tmp_path / "results", LANE)
    assert code == 0, err + out
    (status_path,) = (tmp_path / "results").glob("*/cells/*/rep-01/status.json")
    workloads = json.loads((status_path.parent / "workloads.json").read_text())
    summary = workloads["download"]["receiver"]["summary"]
    assert summary["bytes"] == BYTES
    measured = summary["bytes"] * 8 / ((summary["last_byte_us"] - summary["first_byte_us"]) / 1e6)
    print(f"expected {EXPECTED_BPS / 1e6:.3f} Mbit/s of TCP payload, measured {measured / 1e6:.3f} Mbit/s")
    assert 0.95 * EXPECTED_BPS <= measured <= 1.01 * EXPECTED_BPS
