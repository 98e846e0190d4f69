"""A browser flow (`squall run`, real lanes): headless Chromium at the mobile host loads a page
replayed at the fixed host, its names looked up over the emulated link (docs/browser.md).

What the browser says is checked against the mobile host's capture, read by tshark:

- page time: the browser's first DNS query (its NetLog) -> its load event (DevTools), both on its
  monotonic clock (`query_to_load_s`: `page_load_s`, navigation start -> load event, less the
  browser's own wait before its first query, 4 ms to 240 ms seen on a busy machine), against the
  capture's first DNS query -> the last byte of the page's responses (the last downlink segment
  with a payload of a response's size, RESPONSE_END_B, on a connection that carried a request by
  the origin servers' access log). The capture's span lies inside the browser's, so the
  browser's is at least the capture's (less NETLOG_LAG_S) and at most PAGE_TOLERANCE_S more (its
  work after the last byte: the load event); the first query in the capture is the browser's on
  the wall clock within CLOCK_SKEW_S;
- DNS: each of the page's host names is queried for an A record exactly once in the capture and
  no other name is, those are the names the browser's NetLog says it looked up (`looked_up`), and
  the capture holds as many queries as its resolver sent (`dns_queries`: A and HTTPS records);
- over a GPRS-like link (40 kbit/s down, 13.4 kbit/s up, 300 ms each way) the same 12 objects
  from 1 and from 2 host names: every replication with 2 names takes longer than every one with 1
  (each name costs a look-up, TCP and TLS handshakes over the link, as the seeds' WWAN study
  describes).

Lanes $SQUALL_TEST_LANE_BASE + 11, + 12 and + 13 (default 31, 32, 33)."""
from __future__ import annotations

import gzip
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import lane_base
from support_run import one_replication_head, run_squall

pytestmark = pytest.mark.netns
PAGE_TOLERANCE_S = 0.1        # Chromium's own work after the last byte (1 to 4 ms measured), on a busy machine
# The page's responses end in segments of at least this many bytes (its objects are 2000 B); what
# the origins send after them is smaller: TLS close_notify alerts (24 B) when the browser closes,
# HTTP/2 control frames. Chromium also opens spare connections and closes them early, so the
# first FIN does not mark the page's end.
RESPONSE_END_B = 100
# The NetLog's times are whole milliseconds, and its record of a query can follow the datagram by a
# few (-6 ms to +7 ms between the two spans seen on a busy machine)
NETLOG_LAG_S = 0.02
# Chromium's navigation start on the wall clock (performance.timeOrigin) is its monotonic clock mapped
# to the wall clock once: 7 to 34 ms off seen on a busy machine
CLOCK_SKEW_S = 0.05

LINK_1M = """
[link]
bandwidth = "1Mbit"
delay = "40ms"
mtu = "1500B"
channel = "always-good"
"""

LINK_GPRS = """
[link]
mtu = "1500B"
delay = "300ms"
send_buffer = "32000B"
recv_buffer = "32000B"
channel = "always-good"
[link.down]
bandwidth = "40kbit"
[link.up]
bandwidth = "13400bit"
"""


def _run(tmp_path: Path, name: str, text: str, lane: int) -> Path:
    (tmp_path / f"{name}.toml").write_text(text)
    code, _, err = run_squall(tmp_path / f"{name}.toml", tmp_path / "results", lane, analyse=True)
    (root,) = (tmp_path / "results").iterdir()
    statuses = {str(p.parent.relative_to(root)): json.loads(p.read_text())
                for p in root.glob("cells/*/rep-*/status.json")}
    assert code == 0, (err, {k: (s["status"], s["reason"]) for k, s in statuses.items()})
    return root


def _tshark(pcap: Path, fields: list[str], display: str) -> list[list[str]]:
    plain = pcap.with_suffix("")                       # mobile.pcap.gz -> mobile.pcap
    if not plain.exists():
        plain.write_bytes(gzip.decompress(pcap.read_bytes()))
    out = subprocess.run(["tshark", "-r", str(plain), "-Y", display, "-T", "fields", "-E", "separator=\t",
                          *(a for f in fields for a in ("-e", f))], capture_output=True, text=True, check=True)
    return [line.split("\t") for line in out.stdout.splitlines() if line]


def _capture_page(rep: Path) -> tuple[float, float, list[list[str]]]:
    """(first DNS query, the last downlink segment of a response) in epoch seconds, and the DNS
    queries (time, name, type), from the mobile host's capture."""
    pcap = rep / "mobile.pcap.gz"
    queries = _tshark(pcap, ["frame.time_epoch", "dns.qry.name", "dns.qry.type"], "dns.flags.response == 0")
    # the connections that carried requests: their client ports in the origin servers' access log
    # (Chromium also opens spare connections, whose TLS handshakes can come after the page)
    used = {int(line.split("\t")[4]) for line in (rep / "web.replay" / "access.log").read_text().splitlines()}
    data = [float(t) for t, src, port in _tshark(pcap, ["frame.time_epoch", "ip.src", "tcp.dstport"],
                                                 f"tcp.len >= {RESPONSE_END_B}")
            if src.startswith("198.18.") and int(port) in used]
    return float(queries[0][0]), max(data), queries


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed (scripts/install-deps)")
def test_page_time_and_dns_lookups_agree_with_the_capture(tmp_path: Path) -> None:
    text = one_replication_head("browser-check", 33, timeout="60s") + LINK_1M + """
[flows.web]
kind = "browser"
har = "origins-4"
http = "2"
"""
    root = _run(tmp_path, "browser-check", text, lane_base() + 11)
    (rep,) = root.glob("cells/default/rep-*")
    summary = json.loads((rep / "web.browser.log").read_text())["summary"]
    assert summary["requests"] == 13 and summary["failed"] == 0 and summary["not_found"] == 0
    assert summary["protocols"] == {"h2": 13} and summary["connections"] == 4

    first_query, last_byte, queries = _capture_page(rep)
    span = last_byte - first_query
    lookup = summary["navigation_start_realtime_us"] / 1e6 + summary["first_query_s"]
    assert abs(first_query - lookup) <= CLOCK_SKEW_S, (first_query, lookup)
    network = summary["query_to_load_s"]
    assert span - NETLOG_LAG_S <= network <= span + PAGE_TOLERANCE_S, (span, network)
    # the network's part is at least the link's: a look-up, TCP, TLS and a request, 80 ms each
    assert span >= 4 * 0.080

    hosts = ["www.origins.example", "o1.origins.example", "o2.origins.example", "o3.origins.example"]
    names = [name for _, name, qtype in queries if qtype == "1"]        # A records
    assert sorted(names) == sorted(hosts)                                 # each once, nothing else
    assert sorted(summary["looked_up"]) == sorted(hosts) and summary["dns_lookups"] == len(hosts)
    assert summary["dns_queries"] == len(queries)       # its resolver's queries (A and HTTPS records)

    runs = (root / "summary" / "runs.csv").read_text()
    assert "web.page_load_s" in runs.splitlines()[0]


def test_page_time_grows_with_the_number_of_origins_over_gprs(tmp_path: Path) -> None:
    # the link is error-free: one replication per cell is the page's time (repeats agreed to 0.3 s)
    text = one_replication_head("browser-origins", 2004, timeout="90s") + LINK_GPRS + """
[flows.web]
kind = "browser"
har = "origins-1"
http = "2"

[matrix]
"flows.web.har" = ["origins-1", "origins-2"]
"""
    root = _run(tmp_path, "browser-origins", text, lane_base() + 12)
    times: dict[str, list[float]] = {}
    for log in root.glob("cells/*/rep-*/web.browser.log"):
        times.setdefault(log.parent.parent.name, []).append(json.loads(log.read_text())["summary"]["page_load_s"])
    one, two = times["har-origins-1"], times["har-origins-2"]
    assert len(one) == len(two) == 1
    assert one[0] + 5 < two[0], times          # the second origin's handshakes over the 13.4 kbit/s uplink


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed (scripts/install-deps)")
def test_a_warm_load_of_the_seeds_page_looks_nothing_up_again(tmp_path: Path) -> None:
    """The seeds' s+2s page (plain HTTP/1.1 from one name) with `cache = "warm"`: loaded once at the
    flow's start, then measured. The measured load asks for its three objects without a look-up
    (the browser's DNS cache is warm): the capture holds the name's one A query, the priming load's."""
    text = one_replication_head("browser-warm", 35, timeout="60s") + LINK_1M + """
[flows.web]
kind = "browser"
har = "s+2s"
http = "1.1"
cache = "warm"
"""
    root = _run(tmp_path, "browser-warm", text, lane_base() + 13)
    (rep,) = root.glob("cells/default/rep-*")
    log = json.loads((rep / "web.browser.log").read_text())
    summary = log["summary"]
    assert log["warm"] and summary["requests"] == 3 and summary["failed"] == 0
    assert summary["protocols"] == {"http/1.1": 3} and summary["dns_lookups"] == 0 and summary["looked_up"] == []
    _, _, queries = _capture_page(rep)
    assert [name for _, name, qtype in queries if qtype == "1"] == ["www.s-2s.example"]
