"""Files that appear whole or not at all: the one writer of results files (summary tables,
status.json, tcp.json). The runner and the analysis both use it; a full disk leaves the old
file (or none), never a half-written one or a stray temporary."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path


def write_atomically(path: Path, write: Callable[[Path], None]) -> None:
    """Calls write(temporary) for a temporary beside `path`, syncs it and renames it over
    `path`; the temporary is removed when anything fails."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        write(tmp)
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text_atomically(path: Path, text: str) -> None:
    write_atomically(path, lambda tmp: tmp.write_text(text))
