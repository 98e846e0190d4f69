"""Text from a user's file as it may be shown: control and escape characters written out.

A scenario's description (or a profile's) is free text; printed raw, an ESC sequence would
drive the terminal that shows `squall show` and a newline could forge a line of report.md.
`squall show` and the report both print such text through `escaped`.
"""
from __future__ import annotations


def escaped(text: str) -> str:
    """`text` with every non-printable character (controls, ESC, DEL, separators) as a Python escape,
    e.g. "a\\x1b[31mb\\n" -> "a\\\\x1b[31mb\\\\n"; printable text, spaces included, unchanged."""
    return "".join(ch if ch.isprintable() or ch == " " else repr(ch)[1:-1] for ch in text)
