"""A HAR file (HTTP Archive 1.2, what browsers export) read into the page a replay serves.

The page is the HAR's first page (its entries by `pageref`), or every entry when `pages` is empty;
its URL is its first entry's. What a replay needs of an entry: the request's method and URL, the
response's status, the headers that matter to a browser loading the page (REPLAYED_HEADERS), the
redirect target, and the body: the recorded text when the HAR holds it, else only its size (the
bytes transferred, `bodySize`, or the content's `size` when that is unknown), from which the
replay generates a body (docs/browser.md). Every mistake names the file and the entry's field.
"""
from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

# Response headers replayed as recorded: what decides how the browser treats the body and whether
# a warm cache may reuse it. Length and encoding headers are nginx's (the body is served as is).
REPLAYED_HEADERS = ("cache-control", "expires", "last-modified", "access-control-allow-origin", "timing-allow-origin")


class HarError(ValueError):
    """A HAR file that cannot be replayed; the message names the file and the field."""


@dataclass(frozen=True)
class Origin:
    scheme: str                     # http | https
    host: str                       # a name (lower case), resolved by the replay's DNS server
    port: int

    @property
    def text(self) -> str:
        default = {"http": 80, "https": 443}[self.scheme]
        return f"{self.scheme}://{self.host}" + ("" if self.port == default else f":{self.port}")


@dataclass(frozen=True)
class Entry:
    method: str
    url: str
    origin: Origin
    target: str                     # path and query, as the request line has it
    status: int
    mime: str                       # the response's Content-Type ("" if none)
    headers: tuple[tuple[str, str], ...]   # REPLAYED_HEADERS present in the response
    redirect: str                   # Location of a 3xx ("" if none)
    body: bytes | None              # the recorded body; None: generated from `size`
    size: int                       # body bytes (len(body) when recorded)


@dataclass(frozen=True)
class Page:
    source: str                     # the file, for messages
    title: str
    entries: tuple[Entry, ...]      # the first is the document the browser navigates to

    @property
    def url(self) -> str:
        return self.entries[0].url

    @property
    def hosts(self) -> tuple[str, ...]:
        """The page's host names in order of first use: one address and one DNS name each."""
        return tuple(dict.fromkeys(e.origin.host for e in self.entries))

    @property
    def origins(self) -> tuple[Origin, ...]:
        return tuple(dict.fromkeys(e.origin for e in self.entries))

    @property
    def bytes(self) -> int:
        return sum(e.size for e in self.entries)


def read(path: Path) -> Page:
    try:
        har = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise HarError(f"{path}: cannot read a HAR file (JSON): {e}") from None
    log = _field(har, "log", dict, str(path))
    entries = _field(log, "entries", list, f"{path}: log")
    pages = log.get("pages") or []
    if not isinstance(pages, list):
        raise HarError(f"{path}: log.pages: expected a list of pages")
    title = ""
    if pages:
        first = _field(pages, 0, dict, f"{path}: log.pages")
        title = str(first.get("title", ""))
        entries = [e for e in entries if isinstance(e, dict) and e.get("pageref") == first.get("id")]
    if not entries:
        raise HarError(f"{path}: log.entries: no entry" + (" of the first page" if pages else ""))
    return Page(str(path), title, tuple(_entry(e, f"{path}: log.entries[{i}]") for i, e in enumerate(entries)))


def _entry(entry: Any, where: str) -> Entry:
    if not isinstance(entry, dict):
        raise HarError(f"{where}: expected an object")
    request = _field(entry, "request", dict, where)
    response = _field(entry, "response", dict, where)
    url = _field(request, "url", str, f"{where}.request")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise HarError(f"{where}.request.url: {url!r} is not an http:// or https:// URL")
    port = parts.port or {"http": 80, "https": 443}[parts.scheme]
    status = _field(response, "status", int, f"{where}.response")
    if not 100 <= status <= 599:
        raise HarError(f"{where}.response.status: {status} is not an HTTP status")
    headers = {str(h.get("name", "")).lower(): str(h.get("value", ""))
               for h in response.get("headers") or [] if isinstance(h, dict)}
    content = response.get("content") or {}
    mime = str(content.get("mimeType") or headers.get("content-type", ""))
    body = _recorded_body(content, f"{where}.response.content")
    size = len(body) if body is not None else _size(response, content)
    redirect = str(response.get("redirectURL") or headers.get("location", ""))
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Entry(method=str(request.get("method", "GET")).upper(), url=url,
                 origin=Origin(parts.scheme, parts.hostname.lower(), port), target=target, status=status,
                 mime=mime, headers=tuple((k, v) for k, v in headers.items() if k in REPLAYED_HEADERS),
                 redirect=redirect, body=body, size=size)


def _recorded_body(content: dict, where: str) -> bytes | None:
    text = content.get("text")
    if not isinstance(text, str):
        return None
    if content.get("encoding") == "base64":
        try:
            return base64.b64decode(text, validate=True)
        except ValueError:
            raise HarError(f"{where}.text: not valid base64 (encoding = \"base64\")") from None
    return text.encode("utf-8")


def _size(response: dict, content: dict) -> int:
    """The bytes the recorded response's body took on the wire, else its decoded size."""
    for key, table in (("bodySize", response), ("size", content)):
        value = table.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return 0


def _field(table: Any, key: Any, kind: type, where: str) -> Any:
    try:
        value = table[key]
    except (KeyError, IndexError, TypeError):
        raise HarError(f"{where}: missing {key!r} (expected {kind.__name__})") from None
    if not isinstance(value, kind) or isinstance(value, bool):
        raise HarError(f"{where}.{key}: expected {kind.__name__}, found {value!r}")
    return value
