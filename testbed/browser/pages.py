"""The shipped pages (scenarios/pages/*.har), written by `python -m testbed.browser.pages DIR`;
tests/test_browser_pages.py checks that the files are what this writes.

They hold sizes and types only: the replay generates each body with its recorded size, the
document as HTML referencing the page's other objects (testbed/browser/bodies.py). The sources of
the numbers are in docs/browser.md "Shipped pages":

- `s+2s`, `m+8m`, `l+8m`: the seeds' pages (scenarios/profiles/workloads.toml, from the IIP report's
  table 6 and Saarto 2003): a main object and its in-line images from one server, over HTTP.
- `median-mobile-2024`: the HTTP Archive Web Almanac 2024 median mobile home page, 2,311 KB in 66
  requests, its bytes split by type as the chapter's median desktop page (images 1,054 KB,
  JavaScript 613 KB, fonts 131 KB, CSS 78 KB, HTML 18 KB of 2,652 KB), spread over 12 host names.
- `origins-N` (N = 1, 2, 4, 8): one small page (a 4 KB document, 12 objects of 2 KB) whose objects
  are spread over N host names, for the number of origins alone (docs/browser.md).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Sequence

MIME = {"html": "text/html", "css": "text/css", "js": "application/javascript", "img": "image/jpeg",
        "gif": "image/gif", "font": "font/woff2", "json": "application/json"}


def har(title: str, objects: Sequence[tuple[str, str, str, int]]) -> dict[str, Any]:
    """A HAR 1.2 log of one page: `objects` (url, kind of MIME, cache-control, size), the document
    first; sizes and types only, no text."""
    entries = []
    for i, (url, kind, cache, size) in enumerate(objects):
        headers = [{"name": "Content-Type", "value": MIME[kind]}]
        if cache:
            headers.append({"name": "Cache-Control", "value": cache})
        entries.append({
            "pageref": "page_1", "startedDateTime": "2026-01-01T00:00:00.000Z", "time": 0,
            "request": {"method": "GET", "url": url, "httpVersion": "HTTP/1.1", "cookies": [], "headers": [],
                        "queryString": [], "headersSize": -1, "bodySize": 0},
            "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "cookies": [],
                         "headers": headers, "content": {"size": size, "mimeType": MIME[kind]},
                         "redirectURL": "", "headersSize": -1, "bodySize": size},
            "cache": {}, "timings": {"send": 0, "wait": 0, "receive": 0}})
    return {"log": {"version": "1.2", "creator": {"name": "squall testbed/browser/pages.py", "version": "1"},
                    "pages": [{"id": "page_1", "title": title, "startedDateTime": "2026-01-01T00:00:00.000Z",
                               "pageTimings": {}}],
                    "entries": entries}}


def seeds_page(label: str, main: int, inline: Sequence[int]) -> dict[str, Any]:
    base = f"http://www.{label.replace('+', '-')}.example"
    return har(f"the seeds' {label}", [(f"{base}/", "html", "", main),
                                       *((f"{base}/inline-{i}.gif", "gif", "", size) for i, size in enumerate(inline))])


def median_mobile_2024() -> dict[str, Any]:
    # (kind, requests, KB of the desktop median's split); requests per kind beside HTML are
    # assumptions (the chapter gives images 18 and JavaScript 24 of desktop's 71): scaled to 66.
    split = (("img", 17, 1054), ("js", 22, 613), ("font", 4, 131), ("css", 6, 78), ("json", 16, 0))
    scale = (2311 - 18 * 2311 / 2652) / sum(kb for _, _, kb in split)       # the mobile total, HTML apart
    hosts = ["www.median.example"] + [f"cdn{i}.median.example" for i in range(1, 12)]
    objects: list[tuple[str, str, str, int]] = [(f"https://{hosts[0]}/", "html", "no-cache", round(18 * 2311 / 2652 * 1000))]
    n = 0
    for kind, count, kb in split:
        size = max(200, round(kb * scale * 1000 / count)) if kb else 600     # JSON/XHR: 600 B each (assumed)
        for j in range(count):
            objects.append((f"https://{hosts[1 + n % 11]}/{kind}/{j}.{kind}", kind, "max-age=86400", size))
            n += 1
    return har("HTTP Archive Web Almanac 2024: median mobile home page", objects)


def origins_page(hosts: int) -> dict[str, Any]:
    names = ["www.origins.example"] + [f"o{i}.origins.example" for i in range(1, hosts)]
    objects = [(f"https://{names[0]}/", "html", "no-cache", 4000)]
    objects += [(f"https://{names[i % hosts]}/object-{i}.jpg", "img", "max-age=86400", 2000) for i in range(12)]
    return har(f"12 objects from {hosts} host names", objects)


def shipped() -> dict[str, dict[str, Any]]:
    """Every shipped page by name."""
    pages = {"s+2s": seeds_page("s+2s", 6288, [2096] * 2), "m+8m": seeds_page("m+8m", 12576, [8384] * 8),
             "l+8m": seeds_page("l+8m", 71788, [8384] * 8), "median-mobile-2024": median_mobile_2024()}
    pages.update({f"origins-{n}": origins_page(n) for n in (1, 2, 4, 8)})
    return pages


def text(page: dict[str, Any]) -> str:
    return json.dumps(page, indent=1) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m testbed.browser.pages DIRECTORY", file=sys.stderr)
        return 2
    out = Path(args[0])
    out.mkdir(parents=True, exist_ok=True)
    for name, page in shipped().items():
        (out / f"{name}.har").write_text(text(page))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
