"""A router on the uplink (`[router.up]`, the emulator's `[up.router]` stage) end to end: a bulk
TCP upload from the mobile host through a 5-packet tail drop in front of a 128 kbit/s uplink.

The emulator log's uplink `drop_router` count, the router statistics (router-stats.json, the
log's `# router up` line) and the packets missing between the two hosts' captures (read with
tshark, not with squall's readers) are one number; every packet missing is a data segment the
sender sent again, and the sender's kernel (nstat's TcpRetransSegs) counts as many
retransmissions as its capture shows. Measured: 9 drops and 9 retransmissions of 55 uplink
packets (a run of 4 s). Then a tc router on the downlink beside the uplink's in the emulator,
in one replication: each engine's files. Runs through `squall run`, lane
$SQUALL_TEST_EMU_ROUTER_LANE + 5 (default 105).
"""
from __future__ import annotations

import gzip
import json
import os
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from conftest import require_programs
from support_run import one_replication_head, run_squall

from testbed.addresses import lane_addresses

pytestmark = pytest.mark.netns
LANE = int(os.environ.get("SQUALL_TEST_EMU_ROUTER_LANE", "100")) + 5

# A 5-packet tail drop in front of the uplink, and a bulk upload (and download) of 30 x 2000 B.
UP_ROUTER = '[router.up]\nqueue = { discipline = "pfifo", limit = 5 }\n'
UPLOAD = '[flows.upload]\nkind = "bulk"\ncount = 30\nlength = "2000B"\ndirection = "up"\n'
DOWNLOAD = '[flows.download]\nkind = "bulk"\ncount = 30\nlength = "2000B"\n'
SCENARIO = (one_replication_head("uplink-router", 3, "60s") + 'tcp = "baseline"\n'
            '[link]\nbandwidth = "512kbit"\ndelay = "20ms"\nmtu = "1500B"\n'
            '[link.up]\nbandwidth = "128kbit"\nsend_buffer = "3000B"\n' + UP_ROUTER + UPLOAD)


def uplink_segments(capture: Path, mobile: str) -> list[tuple[int, int, int]]:
    """(IP id, raw TCP sequence number, sequence space: payload length, +1 for a SYN or FIN) of
    each TCP packet the mobile host sent, in capture order (tshark)."""
    out = subprocess.run(["tshark", "-r", str(capture), "-Y", f"ip.src == {mobile} && tcp", "-T", "fields",
                          "-e", "ip.id", "-e", "tcp.seq_raw", "-e", "tcp.len", "-e", "tcp.flags"],
                         capture_output=True, text=True, check=True).stdout
    return [(int(i, 16), int(s), int(n) + bool(int(f, 16) & 0x3))
            for i, s, n, f in (line.split("\t") for line in out.splitlines())]


def log_trailer(rep: Path) -> dict[str, str]:
    """`counters DIR` and `router DIR CLASS` -> the trailer line (read as text, not with squall's reader)."""
    lines = gzip.open(rep / "emulator.log.gz", "rt").read().splitlines()
    return {" ".join(line.split(" ")[1:4 if line.startswith("# router ") else 3]): line
            for line in lines if line.startswith(("# counters ", "# router "))}


def counter(line: str, name: str) -> int:
    words = line.split()
    return int(words[words.index(name) + 1])


def test_an_upload_through_a_small_uplink_router(tmp_path: Path) -> None:
    require_programs("squall-emulator", "squall-npa", "squall-bulk")
    path = tmp_path / "uplink-router.toml"
    path.write_text(SCENARIO)
    code, _, err = run_squall(path, tmp_path / "results", LANE)
    assert code == 0, err
    (rep,) = (tmp_path / "results").glob("uplink-router-*/cells/default/rep-01")
    assert json.loads((rep / "status.json").read_text())["status"] == "ok"
    workloads = json.loads((rep / "workloads.json").read_text())
    assert workloads["upload"]["receiver"]["summary"]["bytes"] == 30 * 2000

    trailer = log_trailer(rep)
    drops = counter(trailer["counters up"], "drop_router")
    stats = json.loads((rep / "router-stats.json").read_text())
    (up,) = stats["class"]
    assert (up["direction"], up["class"]) == ("up", "all")
    assert drops == up["drops"] == up["tail_drops"] == stats["events"]["up"]["drop_router"] == \
        counter(trailer["router up all"], "drops")
    assert drops > 0 and "down" not in stats["events"] and counter(trailer["counters down"], "drop_router") == 0
    # the uplink is the only place packets were lost: the other counters of its fate are 0
    assert [counter(trailer["counters up"], k) for k in ("drop_sbuf", "drop_err", "drop_mtu")] == [0, 0, 0]
    assert counter(trailer["counters up"], "in") == up["arrivals"]

    mobile = lane_addresses(LANE).mobile_host
    sent = uplink_segments(rep / "mobile.pcap.gz", mobile)
    received = uplink_segments(rep / "fixed.pcap.gz", mobile)
    missing = Counter(sent) - Counter(received)
    assert sum(missing.values()) == drops == len(sent) - len(received)
    assert len(sent) == up["arrivals"]
    # every packet missing took sequence space (data, a SYN or a FIN), and the sender sent its
    # sequence number again later
    for ip_id, seq, length in missing:
        assert length > 0
        first = sent.index((ip_id, seq, length))
        assert any(s == seq and n > 0 for _, s, n in sent[first + 1:]), (ip_id, seq)
    # the sender's retransmissions in its capture (a segment taking sequence space at a sequence
    # number it had sent before) are its kernel's TcpRetransSegs, and at least one per drop
    seen: set[int] = set()
    retransmitted = 0
    for _, seq, length in sent:
        if length > 0:
            retransmitted += seq in seen
            seen.add(seq)
    kernel = json.loads((rep / "kernel-counters.json").read_text())["mobile"]["delta"]
    assert kernel["TcpRetransSegs"] == retransmitted >= drops


# The same uplink router beside a tc router of 5 packets on the downlink (engine "tc", the default).
MIXED = (one_replication_head("mixed-routers", 5, "60s") + 'tcp = "baseline"\n'
         '[link]\nbandwidth = "128kbit"\ndelay = "20ms"\nmtu = "1500B"\nsend_buffer = "3000B"\n'
         '[router]\nqueue = { discipline = "pfifo", limit = 5 }\n' + UP_ROUTER + DOWNLOAD + UPLOAD)


def test_a_tc_router_down_and_the_emulators_up_in_one_replication(tmp_path: Path) -> None:
    """Each engine keeps its files: the tc router's statistics are read while the link runs, the
    uplink stage's from the log once the emulator has stopped; router.tc holds both."""
    require_programs("squall-emulator", "squall-npa", "squall-bulk", "squall-queue-monitor")
    path = tmp_path / "mixed-routers.toml"
    path.write_text(MIXED)
    code, _, err = run_squall(path, tmp_path / "results", LANE)
    assert code == 0, err
    (rep,) = (tmp_path / "results").glob("mixed-routers-*/cells/default/rep-01")
    assert json.loads((rep / "status.json").read_text())["status"] == "ok"
    batch = (rep / "router.tc").read_text()
    assert batch.startswith("qdisc add dev wl0 root handle 1: htb") and "\n[up.router]\n" in batch
    conf = (rep / "emulator.conf").read_text()
    assert "[up.router]" in conf and "[down.router]" not in conf
    tc = json.loads((rep / "tc-stats.json").read_text())
    (leaf,) = [q for q in tc["qdisc"] if q["kind"] == "pfifo"]
    stats = json.loads((rep / "router-stats.json").read_text())
    assert [c["direction"] for c in stats["class"]] == ["up"] and list(stats["events"]) == ["up"]
    trailer = log_trailer(rep)
    assert stats["events"]["up"]["drop_router"] == stats["class"][0]["drops"] == \
        counter(trailer["counters up"], "drop_router") > 0
    # the downlink's router is the kernel's: every packet it passed entered the link, and the
    # emulator's router stage dropped none of them
    assert leaf["packets"] == counter(trailer["counters down"], "in") > 0
    assert counter(trailer["counters down"], "drop_router") == 0
    assert (rep / "router-queue.tsv").exists()
