"""The `browser` flow kind without root (docs/browser.md): its keys and mistakes, its command lines,
the HAR reader, the bodies it generates with the recorded sizes, the origin servers' nginx
configuration (nginx's own `-t` check), the shipped pages, the browser's events folded into its
request log, and the analysis' run values."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from analysis.join.flows import FlowSpec, match_flow, parse_workloads
from analysis.metrics.browser import browser_values
from testbed.addresses import origin_addresses
from testbed.browser import bodies, ca, dns, har, netlog, origins, pages
from testbed.browser.requests_log import PageLoad
from testbed.errors import ConfigError
from testbed.paths import PAGES_DIR
from testbed.scenario.flows import parse_flows_section
from testbed.scenario.flows.browser import BrowserFlow


def parse(base_dir: Path | None = None, **keys: object) -> BrowserFlow:
    (flow,) = parse_flows_section({"web": {"kind": "browser", **keys}}, "x.toml: flows", base_dir=base_dir)
    assert isinstance(flow, BrowserFlow)
    return flow


def har_text(entries: list[dict], pages_: list[dict] | None = None) -> str:
    return json.dumps({"log": {"version": "1.2", "pages": pages_ or [], "entries": entries}})


def entry(url: str, size: int, mime: str = "image/jpeg", status: int = 200, **extra: object) -> dict:
    return {"request": {"method": "GET", "url": url},
            "response": {"status": status, "headers": [{"name": "Cache-Control", "value": "max-age=60"},
                                                       {"name": "Content-Length", "value": str(size)}],
                         "content": {"size": size, "mimeType": mime}, "bodySize": size, **extra}}


def test_a_shipped_page_by_name_with_its_origins_and_bytes() -> None:
    flow = parse(har="origins-4", http="1.1")
    assert flow.page.url == "https://www.origins.example/" and flow.page.objects == 13
    assert flow.page.names == ("www.origins.example", "o1.origins.example", "o2.origins.example",
                               "o3.origins.example")
    assert flow.page.bytes == 4000 + 12 * 2000 and flow.port(0) == 443 and flow.http == "1.1"
    assert flow.hosts() == ("mobile", "fixed") and flow.PRESTARTS and not flow.STARTS_ITSELF
    assert flow.cache == "cold" and parse(har="s+2s").port(0) == 80
    # browsers speak HTTP/2 over TLS only: the seeds' plain-HTTP pages are HTTP/1.1 whatever `http` says
    assert parse(har="s+2s").inapplicable_keys() == ("http",) and flow.inapplicable_keys() == ()
    assert flow.describe().startswith("web: browser, page origins-4 (https://www.origins.example/: 13 objects, "
                                      "28000 B from 4 host names), Chromium, HTTP/1.1, cold cache; browser at the "
                                      "mobile host, replay at the fixed host")


def test_a_har_file_relative_to_the_scenario(tmp_path: Path) -> None:
    (tmp_path / "p.har").write_text(har_text([entry("https://a.example/", 100, "text/html")]))
    flow = parse(tmp_path, har="p.har")
    assert flow.page.har == str(tmp_path / "p.har") and flow.page.label == "p"


def test_the_command_lines_the_replication_starts(tmp_path: Path) -> None:
    flow = parse(har="origins-2", http="2", cache="warm")
    replay = flow.passive_argv(str, "198.18.3.1:443", tmp_path / "web.replay.log")
    assert replay[1:3] == ["-m", "testbed.browser.replay"]
    assert replay[3:] == ["--har", str(PAGES_DIR / "origins-2.har"), "--dir", str(tmp_path / "web.replay"),
                          "--listen", "198.18.3.1", "--http", "2"]
    browser = flow.active_argv(str, "198.18.3.1:443", offset_us=0, log=tmp_path / "web.browser.log",
                               timeout_us=60_000_000)
    assert browser[:4] == ["unshare", "--mount", "--propagation", "private"]     # its own /etc/resolv.conf
    assert browser[5:7] == ["-m", "testbed.browser.driver"]
    assert browser[7:] == ["--url", "https://www.origins.example/", "--names",
                           "www.origins.example,o1.origins.example", "--resolver", "198.18.3.1", "--timeout", "65",
                           "--log", str(tmp_path / "web.browser.log"),
                           "--spki-file", str(tmp_path / "web.replay" / "ca" / "spki"),
                           "--profile", str(tmp_path / "web.profile"), "--warm"]
    assert flow.log_files() == [("mobile", "web.browser.log")]


@pytest.mark.parametrize("keys, key, words", [
    ({}, "har", "missing: a HAR file"),
    ({"har": "nope"}, "har", "'nope' is not a shipped page (l+8m, m+8m, median-mobile-2024, origins-1"),
    ({"har": "/nonexistent/p.har"}, "har", "cannot read a HAR file"),
    ({"har": "s+2s", "http": "1.0"}, "http", "expected \"1.1\" or \"2\""),
    ({"har": "s+2s", "http": 2}, "http", "(a string)"),
    ({"har": "s+2s", "cache": "hot"}, "cache", "expected \"cold\""),
    ({"har": "s+2s", "direction": "up"}, "direction", "direction = \"down\" only"),
    ({"har": "s+2s", "workload": "s+2s"}, "workload", "unknown key for a browser flow"),
    ({"har": "s+2s", "parallel": 6}, "parallel", "unknown key for a browser flow"),
])
def test_mistakes_name_the_key(keys: dict, key: str, words: str) -> None:
    with pytest.raises(ConfigError) as e:
        parse(**keys)
    assert f"flows.web.{key}" in str(e.value) and words in str(e.value)


@pytest.mark.parametrize("text, words", [
    ("{", "cannot read a HAR file (JSON)"),
    ('{"log": {}}', "log: missing 'entries'"),
    (har_text([]), "log.entries: no entry"),
    (har_text([{"request": {"url": "ftp://a/"}, "response": {"status": 200}}]),
     "log.entries[0].request.url: 'ftp://a/' is not an http:// or https:// URL"),
    (har_text([{"request": {"url": "https://a/"}, "response": {"status": 999}}]),
     "log.entries[0].response.status: 999 is not an HTTP status"),
    (har_text([{"request": {"url": "https://a/"}, "response": {"status": 200, "content": {"text": "!",
                                                                                        "encoding": "base64"}}}]),
     "log.entries[0].response.content.text: not valid base64"),
])
def test_har_mistakes_name_the_field(tmp_path: Path, text: str, words: str) -> None:
    (tmp_path / "p.har").write_text(text)
    with pytest.raises(har.HarError) as e:
        har.read(tmp_path / "p.har")
    assert str(tmp_path / "p.har") in str(e.value) and words in str(e.value)


def test_the_page_is_the_first_pages_entries_with_what_a_replay_needs(tmp_path: Path) -> None:
    entries = [dict(entry("https://WWW.a.example/", 5000, "text/html"), pageref="p1"),
               dict(entry("http://cdn.b.example:8080/x.js?v=2", 700, "application/javascript"), pageref="p1"),
               dict(entry("https://a.example/other", 10), pageref="p2"),
               dict(entry("https://a.example/r", 0, status=302, redirectURL="https://a.example/"), pageref="p1")]
    entries[1]["response"]["content"]["text"] = "var x;"
    (tmp_path / "p.har").write_text(har_text(entries, [{"id": "p1", "title": "one"}, {"id": "p2"}]))
    page = har.read(tmp_path / "p.har")
    assert [e.url for e in page.entries] == ["https://WWW.a.example/", "http://cdn.b.example:8080/x.js?v=2",
                                             "https://a.example/r"]
    first, script, redirect = page.entries
    assert page.hosts == ("www.a.example", "cdn.b.example", "a.example") and page.title == "one"
    assert first.headers == (("cache-control", "max-age=60"),)          # Content-Length is nginx's
    assert script.target == "/x.js?v=2" and script.origin.text == "http://cdn.b.example:8080"
    assert script.body == b"var x;" and script.size == 6                  # recorded text: served as is
    assert redirect.redirect == "https://a.example/" and redirect.status == 302


def test_generated_bodies_have_the_recorded_sizes_and_the_document_references_the_page() -> None:
    page = har.Page("p", "", (har.Entry("GET", "https://a.example/", har.Origin("https", "a.example", 443), "/", 200,
                                        "text/html", (), "", None, 3000),
                              har.Entry("GET", "https://b.example/s.css", har.Origin("https", "b.example", 443),
                                        "/s.css", 200, "text/css", (), "", None, 500),
                              har.Entry("GET", "https://b.example/j.js", har.Origin("https", "b.example", 443),
                                        "/j.js", 200, "application/javascript", (), "", None, 400),
                              har.Entry("GET", "https://c.example/i.jpg", har.Origin("https", "c.example", 443),
                                        "/i.jpg", 200, "image/jpeg", (), "", None, 2000)))
    document, kind = bodies.body(page.entries[0], page.entries, True)
    assert len(document) == 3000 and kind == "text/html"
    assert b'<link rel="stylesheet" href="https://b.example/s.css">' in document
    assert b'<script async src="https://b.example/j.js"></script>' in document
    assert b'<img src="https://c.example/i.jpg" alt="">' in document and document.endswith(b"</html>\n")
    css, kind = bodies.body(page.entries[1], page.entries, False)
    assert len(css) == 500 and css.startswith(b"/*") and css.endswith(b"*/") and kind == "text/css"
    image, kind = bodies.body(page.entries[3], page.entries, False)
    # a PNG the browser decodes (a body it cannot decode would be cancelled before its end)
    assert len(image) == 2000 and kind == "image/png" and image.startswith(b"\x89PNG\r\n\x1a\n")
    assert image.endswith(b"IEND\xaeB`\x82")
    assert len(bodies.document(10, page.entries[1:])) > 10         # references that do not fit: larger


def test_the_origin_servers_configuration_is_one_nginx_accepts(tmp_path: Path) -> None:
    page = har.read(PAGES_DIR / "origins-4.har")
    names = dict(zip(page.hosts, origin_addresses("198.18.7.1", len(page.hosts))))
    assert list(names.values()) == ["198.18.7.10", "198.18.7.11", "198.18.7.12", "198.18.7.13"]
    authority = ca.make(tmp_path / "ca", page.hosts)
    served = origins.write(page, names, tmp_path, authority, http2=True)
    assert served == origins.Served(entries=13, generated=13, duplicates=0)
    conf = (tmp_path / "nginx.conf").read_text()
    assert "listen 198.18.7.12:443 ssl http2;" in conf and "listen 198.18.7.12:80;" in conf
    assert '"o1.origins.example/object-1.jpg" "e2";' in conf
    assert (tmp_path / "docroot" / "e2").stat().st_size == 2000
    assert '"o1.origins.example/object-1.jpg" "image/png";' in conf          # what the generated body is
    test = conf.replace("198.18.7.", "127.0.0.")                    # nginx -t binds nothing, but resolves
    (tmp_path / "test.conf").write_text(test)
    (tmp_path / "tmp").mkdir()
    checked = subprocess.run(["/usr/sbin/nginx", "-t", "-p", str(tmp_path), "-e", str(tmp_path / "t.log"), "-c",
                              str(tmp_path / "test.conf")], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    verified = subprocess.run(["openssl", "verify", "-CAfile", str(authority.root), str(tmp_path / "ca" / "server.crt")],
                              capture_output=True, text=True)
    assert verified.returncode == 0, verified.stderr
    assert len(authority.spki) == 44 and (tmp_path / "ca" / "spki").read_text().strip() == authority.spki


def test_the_dns_server_answers_each_name_and_nothing_else() -> None:
    argv = dns.argv("198.18.7.1", {"a.example": "198.18.7.10"}, Path("/r/dns.log"))
    assert "--listen-address=198.18.7.1" in argv and "--host-record=a.example,198.18.7.10" in argv
    assert "--no-resolv" in argv and "--address=/#/" in argv and "--local-ttl=300" in argv
    assert dns.resolv_conf("198.18.7.1").splitlines()[-1] == "nameserver 198.18.7.1"


def test_the_shipped_pages_are_what_the_generator_writes() -> None:
    shipped = pages.shipped()
    assert sorted(p.stem for p in PAGES_DIR.glob("*.har")) == sorted(shipped)
    for name, page in shipped.items():
        assert (PAGES_DIR / f"{name}.har").read_text() == pages.text(page), name
    sizes = {name: har.read(PAGES_DIR / f"{name}.har") for name in shipped}
    assert [e.size for e in sizes["s+2s"].entries] == [6288, 2096, 2096]
    assert [e.size for e in sizes["l+8m"].entries] == [71788] + [8384] * 8
    median = sizes["median-mobile-2024"]
    assert len(median.entries) == 66 and len(median.hosts) == 12
    assert abs(median.bytes - 2_311_000) < 0.01 * 2_311_000
    assert [len(sizes[f"origins-{n}"].hosts) for n in (1, 2, 4, 8)] == [1, 2, 4, 8]


def test_the_browsers_events_make_its_request_log() -> None:
    load = PageLoad()
    timing = {"requestTime": 100.0, "dnsStart": 1.0, "dnsEnd": 81.0, "connectStart": 81.0, "connectEnd": 241.0,
              "sslStart": 161.0, "sslEnd": 241.0, "receiveHeadersEnd": 400.0}
    events = [
        ("Network.requestWillBeSent", {"requestId": "1", "request": {"url": "https://a.example/"},
                                       "timestamp": 100.0, "wallTime": 1000.010}),
        ("Network.responseReceived", {"requestId": "1", "response": {
            "status": 200, "protocol": "h2", "remoteIPAddress": "198.18.7.10", "remotePort": 443, "connectionId": 7,
            "connectionReused": False, "timing": timing}}),
        ("Network.loadingFinished", {"requestId": "1", "timestamp": 100.5, "encodedDataLength": 4100}),
        ("Network.requestWillBeSent", {"requestId": "2", "request": {"url": "https://a.example/i.jpg"},
                                       "timestamp": 100.6, "wallTime": 1000.610}),
        ("Network.responseReceived", {"requestId": "2", "response": {
            "status": 404, "protocol": "h2", "connectionId": 7, "connectionReused": True, "timing": {}}}),
        ("Network.loadingFinished", {"requestId": "2", "timestamp": 100.8, "encodedDataLength": 100}),
        ("Page.domContentEventFired", {"timestamp": 100.55}),
        ("Page.loadEventFired", {"timestamp": 100.9})]
    load.add("Page.loadEventFired", {"timestamp": 99.0})       # about:blank's, before this navigation
    assert load.load_event is None
    for method, params in events:
        load.add(method, params)
    assert load.pending() == 0
    # navigation started 10 ms before the main request (its name looked up first)
    summary, records = load.summary({"loadEventStart": 910.0, "domContentLoadedEventStart": 560.0,
                                     "domainLookupStart": 11.0, "timeOrigin": 1_000_000.0}, first_query=99.995)
    assert summary["page_load_s"] == 0.91 and summary["dom_content_loaded_s"] == 0.56
    assert summary["first_lookup_s"] == 0.011 and summary["first_query_s"] == pytest.approx(0.005)
    assert summary["query_to_load_s"] == pytest.approx(0.905)          # 99.995 -> the load event at 100.9
    assert summary["navigation_start_realtime_us"] == 1_000_000_000
    assert summary["requests"] == 2 and summary["not_found"] == 1 and summary["bytes"] == 4200
    assert summary["connections_per_origin"] == {"https://a.example": 1}
    first = records[0]
    assert first["start_s"] == pytest.approx(0.01) and first["dns_s"] == 0.08 and first["connect_s"] == 0.16
    assert first["tls_s"] == 0.08 and first["first_byte_s"] == pytest.approx(0.41)
    assert first["end_s"] == pytest.approx(0.51) and records[1]["dns_s"] is None


def test_the_run_values_of_a_browser_flow(tmp_path: Path) -> None:
    (tmp_path / "web.browser.log").write_text(json.dumps({"summary": {"page_load_s": 1.5, "requests": 13,
                                                                      "dns_lookups": 4}}))
    warnings: list[str] = []
    values = browser_values(tmp_path, [FlowSpec("web", "browser"), FlowSpec("gone", "browser")], warnings)
    assert values["web.page_load_s"] == 1.5 and values["web.requests"] == 13 and values["web.bytes"] is None
    assert "gone.page_load_s" not in values and "gone.browser.log" in warnings[0]


def test_the_browsers_connections_and_dns_datagrams_are_the_flows() -> None:
    flows = parse_workloads({"web": {"kind": "browser", "port": 443, "browser": {"summary": {"ok": True}}},
                             "bulk": {"kind": "bulk", "port": 5001, "sender": {"summary": None}}}, "workloads.json")
    mobile, replay = "198.19.3.2", "198.18.3.1"
    assert match_flow(flows, "tcp", (mobile, 40000), ("198.18.3.11", 443)).name == "web"
    assert match_flow(flows, "tcp", (mobile, 40001), ("198.18.3.10", 80)).name == "web"
    assert match_flow(flows, "udp", (mobile, 40002), (replay, 53)).name == "web"          # a query
    assert match_flow(flows, "udp", (replay, 53), (mobile, 40002)).name == "web"          # its answer
    assert match_flow(flows, "tcp", (mobile, 40003), (replay, 5001)).name == "bulk"


def test_the_browsers_look_ups_from_its_netlog(tmp_path: Path) -> None:
    constants = {"logEventTypes": {"HOST_RESOLVER_MANAGER_JOB": 7, "DNS_TRANSACTION_ATTEMPT": 9, "OTHER": 1},
                 "logEventPhase": {"PHASE_BEGIN": 1, "PHASE_END": 2, "PHASE_NONE": 0}}
    events = [{"type": 7, "phase": 1, "params": {"host": "https://a.example", "dns_query_types": ["A", "HTTPS"]}},
              {"type": 9, "phase": 0}, {"type": 9, "phase": 2}, {"type": 9, "phase": 1},
              {"type": 7, "phase": 2, "params": {}},
              {"type": 7, "phase": 1, "params": {"host": "b.example"}}, {"type": 9, "phase": 1},
              {"type": 1, "phase": 1}]
    (tmp_path / "n.json").write_text(json.dumps({"constants": constants, "events": events}))
    assert netlog.lookups(tmp_path / "n.json") == netlog.Lookups(("a.example", "b.example"), 3, 0.0)
    later = {"constants": {**constants, "timeTickOffset": 1000},
             "events": [{**e, "time": 10 * i} for i, e in enumerate(events)]}    # epoch ms 1000, 1010, ...
    (tmp_path / "t.json").write_text(json.dumps(later))
    # a warm load counts only what began after its navigation (not the priming load's)
    # and when its first query left: the NetLog's own clock (DevTools' events'), not the epoch
    assert netlog.lookups(tmp_path / "t.json", since_epoch_ms=1045) == netlog.Lookups(("b.example",), 1, 60.0)
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(ValueError, match="not a Chromium NetLog"):
        netlog.lookups(tmp_path / "bad.json")
