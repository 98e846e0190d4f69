"""What the browser's DevTools events say about one page load: one record per request (its
timing, bytes, connection and protocol) and the page's summary (docs/browser.md "What is measured").

Times are seconds from navigation start (Navigation Timing's time origin, which comes before the
main document's `Network.requestWillBeSent`: the browser may look its name up and connect first);
events carry the browser's monotonic clock, placed on navigation start's by the main request's
wall time. A request's DNS, connect and TLS
times are Chromium's ResourceTiming of the request that opened the connection (-1 in DevTools,
None here, for a reused one); `first_byte_s` is when its response headers arrived, `end_s` when
its last byte did (`Network.loadingFinished`); `bytes` the bytes the browser received for it
(headers and body, as encoded on the wire)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit


@dataclass
class Request:
    request_id: str
    url: str
    method: str
    started: float                  # monotonic s (event timestamp)
    wall_time: float                # s since the epoch, at `started`
    status: int | None = None
    protocol: str = ""
    remote: str = ""                # address:port
    connection: int | None = None   # Chromium's connection id
    reused: bool | None = None
    timing: dict[str, float] = field(default_factory=dict)
    finished: float | None = None
    failed: str = ""
    bytes: int = 0
    from_cache: bool = False

    @property
    def host(self) -> str:
        return urlsplit(self.url).hostname or ""

    @property
    def origin(self) -> str:
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}"

    def _span(self, start: str, end: str) -> float | None:
        a, b = self.timing.get(start, -1), self.timing.get(end, -1)
        return round((b - a) / 1000, 6) if a >= 0 and b >= 0 else None

    def record(self, zero: float) -> dict[str, Any]:
        base = self.timing.get("requestTime")
        headers = self.timing.get("receiveHeadersEnd", -1)
        return {"url": self.url, "method": self.method, "host": self.host, "status": self.status,
                "protocol": self.protocol, "remote": self.remote, "connection": self.connection,
                "reused": self.reused, "from_cache": self.from_cache, "failed": self.failed or None,
                "start_s": round(self.started - zero, 6),
                "dns_s": self._span("dnsStart", "dnsEnd"), "connect_s": self._span("connectStart", "connectEnd"),
                "tls_s": self._span("sslStart", "sslEnd"),
                "first_byte_s": round(base + headers / 1000 - zero, 6) if base is not None and headers >= 0 else None,
                "end_s": round(self.finished - zero, 6) if self.finished is not None else None,
                "bytes": self.bytes}


@dataclass
class PageLoad:
    """The events of one navigation, folded as they come (`add`)."""
    requests: dict[str, Request] = field(default_factory=dict)
    hops: list[Request] = field(default_factory=list)      # redirected hops, each its own request
    main: Request | None = None
    load_event: float | None = None
    dom_content_event: float | None = None

    def add(self, method: str, p: dict[str, Any]) -> None:
        rid = p.get("requestId", "")
        if method == "Network.requestWillBeSent":
            if rid in self.requests and p.get("redirectResponse"):
                hop = self.requests.pop(rid)
                self._response(hop, p["redirectResponse"])
                hop.finished = p["timestamp"]
                self.hops.append(hop)
            r = Request(rid, p["request"]["url"], p["request"].get("method", "GET"), p["timestamp"],
                        p.get("wallTime", 0.0))
            self.requests[rid] = r
            if self.main is None:
                self.main = r
        elif rid in self.requests:
            r = self.requests[rid]
            if method == "Network.responseReceived":
                self._response(r, p["response"])
            elif method == "Network.loadingFinished":
                r.finished, r.bytes = p["timestamp"], int(p.get("encodedDataLength", 0))
            elif method == "Network.loadingFailed":
                r.finished, r.failed = p["timestamp"], p.get("errorText", "failed")
        if self.main is None:       # a page event of what came before this navigation
            return
        if method == "Page.loadEventFired":
            self.load_event = p["timestamp"]
        elif method == "Page.domContentEventFired":
            self.dom_content_event = p["timestamp"]

    @staticmethod
    def _response(r: Request, response: dict[str, Any]) -> None:
        r.status, r.protocol = response.get("status"), response.get("protocol", "")
        ip, port = response.get("remoteIPAddress", ""), response.get("remotePort")
        r.remote = f"{ip}:{port}" if ip else ""
        r.connection, r.reused = response.get("connectionId"), response.get("connectionReused")
        r.timing = dict(response.get("timing") or {})
        r.from_cache = bool(response.get("fromDiskCache") or response.get("fromPrefetchCache"))

    def pending(self) -> int:
        return sum(1 for r in self.requests.values() if r.finished is None)

    def all_requests(self) -> list[Request]:
        return sorted([*self.hops, *self.requests.values()], key=lambda r: r.started)

    def summary(self, navigation: dict[str, Any], first_query: float | None = None
                ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The page's numbers; `navigation`: the document's PerformanceNavigationTiming (ms from
        navigation start), the source of page_load_s and dom_content_loaded_s; `first_query`: when
        the browser's first DNS query left (its NetLog; the events' clock, s); and the request records."""
        assert self.main is not None
        origin_ms = navigation.get("timeOrigin")
        # navigation start on the events' clock: the main request's time less its lead on the wall clock
        lead = self.main.wall_time - origin_ms / 1000 if isinstance(origin_ms, (int, float)) else 0.0
        zero = self.main.started - lead
        records = [r.record(zero) for r in self.all_requests()]
        connections: dict[str, set[int]] = {}
        for r in self.all_requests():
            if r.connection and not r.from_cache:
                connections.setdefault(r.origin, set()).add(r.connection)
        protocols: dict[str, int] = {}
        for r in records:
            protocols[r["protocol"] or "none"] = protocols.get(r["protocol"] or "none", 0) + 1
        ends = [r["end_s"] for r in records if r["end_s"] is not None]
        return {
            "page_load_s": _ms(navigation.get("loadEventStart")),
            "dom_content_loaded_s": _ms(navigation.get("domContentLoadedEventStart")),
            # the document's name look-up began (the browser's own work before it is in page_load_s)
            "first_lookup_s": _ms(navigation.get("domainLookupStart")),
            "first_query_s": round(first_query - zero, 6) if first_query is not None else None,
            # the network's part on one clock (the browser's monotonic one, no wall clock between):
            # its first DNS query -> the load event
            "query_to_load_s": (round(self.load_event - first_query, 6)
                                if first_query is not None and self.load_event is not None else None),
            "load_event_s": round(self.load_event - zero, 6) if self.load_event is not None else None,
            "navigation_start_realtime_us": int((self.main.wall_time - lead) * 1e6),
            "requests": len(records), "failed": sum(1 for r in records if r["failed"]),
            "not_found": sum(1 for r in records if r["status"] == 404),
            "bytes": sum(r["bytes"] for r in records), "last_byte_s": max(ends) if ends else None,
            "hosts": len({r["host"] for r in records}),
            "connections": sum(len(c) for c in connections.values()),
            "connections_per_origin": {o: len(c) for o, c in sorted(connections.items())},
            "protocols": protocols,
        }, records


def _ms(value: Any) -> float | None:
    return round(value / 1000, 6) if isinstance(value, (int, float)) and value > 0 else None


