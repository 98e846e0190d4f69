"""The bodies a HAR omits, generated with the recorded size (docs/browser.md).

The document the browser navigates to (the page's first entry) becomes HTML that references every
other entry of the page — style sheets as <link>, scripts as async <script>, everything else as
<img> — padded with an HTML comment to its recorded size (larger only when the references alone
do not fit). A style sheet or script is one comment of its size (it parses and does nothing);
anything else is a repeating printable pattern."""
from __future__ import annotations

import html
from typing import Sequence

from testbed.browser.har import Entry


def body(entry: Entry, page: Sequence[Entry], first: bool) -> bytes:
    """The entry's body: the recorded one, else one generated with its size."""
    if entry.body is not None:
        return entry.body
    if first:
        return document(entry.size, page[1:])
    if _is_code(entry.mime):
        return _padded(b"/*", b"*/", entry.size)
    pattern = b"squall-replay-body\n"
    return (pattern * (entry.size // len(pattern) + 1))[:entry.size]


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
