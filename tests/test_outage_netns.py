"""Outages end to end (docs/links.md "Outages"): ACK compression after an outage, as the seeds'
GPRS study observed it ("ACK compression is fairly common ... caused by the link-layer protocol").

A bulk download over 256 kbit/s down, 64 kbit/s up, 50 ms each way, with one outage of both
directions from 3 s to 5 s and a persistent ARQ (30 retransmissions 100 ms apart) that carries the
frames over it. During the outage the uplink's ACKs and the downlink's data wait in ARQ; after it
they come out together. At the fixed host (the sender) the capture shows the gap, then ACKs
arriving at the uplink's pace (6.5 ms for a 52 B ACK at 64 kbit/s), each acknowledging a full
segment that the downlink needs 45 ms for: compressed. Before the outage they came at the data's
pace (one run measured: 1 compressed pair of the 15 before the outage, 15 of the 20 after it).

Lane $SQUALL_TEST_LANE_BASE + 4."""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import lane_base, require_programs
from support_run import one_replication_head, run_squall

pytestmark = pytest.mark.netns
LANE = lane_base() + 4
DOWN_BPS = 256_000
PORT = 5001          # the first bulk flow's receiver (testbed/scenario/flows/bulk.py)

SCENARIO = one_replication_head("outage-ack", 5) + f"""
[link]
mtu = "1500B"
delay = "50ms"
send_buffer = "30000B"
recv_buffer = "30000B"
arq = {{ retransmissions = 30, delay = "100ms" }}
outages = {{ every = "fixed(3s)", length = "fixed(2s)" }}

[link.down]
bandwidth = "256kbit"

[link.up]
bandwidth = "64kbit"

[flows.download]
kind = "bulk"
count = 60
length = "2000B"
"""


def acks_at_sender(pcap: Path) -> list[tuple[float, int]]:
    """(arrival s, ack number) of the receiver's pure ACKs captured at the fixed host."""
    from scapy.layers.inet import TCP
    from testbed.lanes.capture import read_packets

    return [(float(p.time), p[TCP].ack) for p in read_packets(pcap)
            if p.haslayer(TCP) and p[TCP].sport == PORT and len(p[TCP].payload) == 0 and p[TCP].flags & 0x10]


def compressed(acks: list[tuple[float, int]]) -> int:
    """How many consecutive pairs of ACKs arrive less than a third as far apart as the downlink
    needs for the bytes the second one acknowledges beyond the first (at the data's pace the
    two are equal)."""
    count = 0
    for (t0, a0), (t1, a1) in zip(acks, acks[1:]):
        bottleneck_s = ((a1 - a0) % 2**32) * 8 / DOWN_BPS
        count += bottleneck_s > 0 and (t1 - t0) < bottleneck_s / 3
    return count


def test_ack_compression_after_an_outage(tmp_path: Path) -> None:
    require_programs("squall-emulator", "squall-npa", "squall-bulk")
    path = tmp_path / "outage.toml"
    path.write_text(SCENARIO)
    code, out, err = run_squall(path, tmp_path / "results", LANE)
    assert code == 0, err + out
    (rep,) = (tmp_path / "results").glob("*/cells/*/rep-01")
    log = next(rep.glob("emulator.log*"))
    outage_lines = [line for line in _text(log).splitlines() if "\toutage\t" in line]
    assert len(outage_lines) >= 4, "both directions' outage begins and ends are logged"
    acks = acks_at_sender(next(rep.glob("fixed.pcap*")))
    gaps = [(acks[i + 1][0] - acks[i][0], i) for i in range(len(acks) - 1)]
    gap, at = max(gaps)
    assert 1.5 < gap < 2.5, f"the outage shows as the longest pause between ACKs, got {gap:.3f} s"
    before, after = acks[at - 15:at + 1], acks[at + 1:at + 21]
    print(f"pairs of ACKs compressed to less than a third of the data's pace: {compressed(before)} of the "
          f"15 before the outage, {compressed(after)} of the 20 after it")
    assert compressed(before) <= 3
    assert compressed(after) >= 6          # twice the most before it (9-16 seen)

def _text(path: Path) -> str:
    if path.suffix == ".gz":
        import gzip
        return gzip.decompress(path.read_bytes()).decode()
    return path.read_text()
