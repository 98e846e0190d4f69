"""The bodies a HAR omits, generated with the recorded size (docs/browser.md).

The document the browser navigates to (the page's first entry) becomes HTML that references every
other entry of the page — style sheets as <link>, scripts as async <script>, everything else as
<img> — padded with an HTML comment to its recorded size (larger only when the references alone
do not fit). A style sheet or script is one comment of its size (it parses and does nothing);
anything else is a 1 x 1 PNG image padded with a private chunk to its size, served as image/png
whatever the HAR's type: the document loads it as an image, and a body the browser cannot decode
would be cancelled before its last byte (and a cross-origin one of another type blocked by ORB).
Below the smallest such image (GENERATED_MIN_B) a body is a repeating printable pattern."""
from __future__ import annotations

import html
import struct
import zlib
from typing import Sequence

from testbed.browser.har import Entry


PNG_TYPE = "image/png"


def body(entry: Entry, page: Sequence[Entry], first: bool) -> tuple[bytes, str]:
    """The entry's body and its Content-Type: the recorded ones, else generated with its size."""
    if entry.body is not None:
        return entry.body, entry.mime
    if first:
        return document(entry.size, page[1:]), entry.mime or "text/html"
    if _is_code(entry.mime):
        return _padded(b"/*", b"*/", entry.size), entry.mime
    if entry.size >= GENERATED_MIN_B:
        return png(entry.size), PNG_TYPE
    pattern = b"squall-replay-body\n"
    return (pattern * (entry.size // len(pattern) + 1))[:entry.size], entry.mime


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


_PNG_HEAD = b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
_PNG_TAIL = _chunk(b"IDAT", zlib.compress(b"\x00\x00")) + _chunk(b"IEND", b"")
GENERATED_MIN_B = len(_PNG_HEAD) + 12 + len(_PNG_TAIL)       # with an empty padding chunk


def png(size: int) -> bytes:
    """A valid 1 x 1 grey PNG of exactly `size` bytes (>= GENERATED_MIN_B): its padding is a private
    ancillary chunk (`sqPd`), which decoders skip."""
    return _PNG_HEAD + _chunk(b"sqPd", b"\0" * (size - GENERATED_MIN_B)) + _PNG_TAIL


def document(size: int, others: Sequence[Entry]) -> bytes:
    head, tail = [], []
    for e in others:
        url = html.escape(e.url, quote=True)
        if "css" in e.mime:
            head.append(f'<link rel="stylesheet" href="{url}">')
        elif _is_code(e.mime):
            head.append(f'<script async src="{url}"></script>')
        else:
            tail.append(f'<img src="{url}" alt="">')
    # rel=icon: no favicon request of the browser's own after the page
    start = ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>squall replay</title>\n"
             "<link rel=\"icon\" href=\"data:,\">\n"
             + "\n".join(head) + "\n</head><body>\n" + "\n".join(tail) + "\n").encode()
    return start + _padded(b"<!--", b"-->\n</body></html>\n", size - len(start))


def _is_code(mime: str) -> bool:
    return "javascript" in mime or "ecmascript" in mime or "css" in mime


def _padded(opening: bytes, closing: bytes, size: int) -> bytes:
    """opening + filler + closing, `size` bytes long (never shorter than opening + closing)."""
    fill = max(0, size - len(opening) - len(closing))
    line = b"x" * 63 + b"\n"
    return opening + (line * (fill // len(line) + 1))[:fill] + closing
