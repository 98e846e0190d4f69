"""Reader speed check: prints packets per second (not asserted: the machine is shared)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from analysis.read.pcap import read_capture
from bench.analysis import PAYLOAD, write_synthetic_pcap

PACKETS = 300_000


def test_reader_speed_and_content(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "synthetic.pcap"
    write_synthetic_pcap(path, PACKETS)
    start = time.perf_counter()
    records = read_capture(path).records
    seconds = time.perf_counter() - start
    assert len(records) == PACKETS
    last = records[-1]
    assert int(last["tcp_seq"]) == (1 + (PACKETS - 1) * PAYLOAD) % 2**32
    assert int(last["ip_id"]) == (PACKETS - 1) % 65536
    assert int(last["payload_len"]) == PAYLOAD
    assert int(last["ts_us"]) - int(records[0]["ts_us"]) == (PACKETS - 1) * 100
    with capsys.disabled():
        print(f"\ncapture reader: {PACKETS / seconds:,.0f} packets/s "
              f"({PACKETS} packets in {seconds:.3f} s)")
