"""Errors the analysis raises on input it cannot trust."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class AnalysisInputError(ValueError):
    """An input file is unreadable, truncated or malformed; the message names the file
    and where (byte offset, frame or line)."""


class CaptureError(AnalysisInputError):
    """A pcap/pcapng capture could not be read completely."""


class LogFormatError(AnalysisInputError):
    """An emulator event log does not follow emulator/LOG_FORMAT.md."""


def read_json(path: Path) -> Any:
    """The JSON document in `path`; AnalysisInputError naming the file when it cannot be read."""
    try:
        return json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise AnalysisInputError(f"{path}: cannot read as JSON: {e}") from e
