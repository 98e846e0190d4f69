"""Files that appear whole or not at all: the one writer of results files (summary tables,
status.json, tcp.json, plots). The runner and the analysis both use it; a full disk leaves the
old file (or none), never a half-written one or a stray temporary.

It never writes through a symbolic link inside a run directory: a link there (a `summary/`
pointing elsewhere, a planted `status.json.tmp`) would send root's writes wherever it points.
The run directory itself may be reached through a link its user chose (`results/latest`)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

# What makes a directory a squall run directory (testbed/run/results.py writes it first; the
# analysis reads its cells from it).
RUN_MARKER = "expanded.json"


class SymlinkRefused(ValueError):
    """A file squall was to write lies behind a symbolic link inside a run directory."""


def write_atomically(path: Path, write: Callable[[Path], None]) -> None:
    """Calls write(temporary) for a temporary beside `path`, syncs it and renames it over
    `path`; the temporary is removed when anything fails. SymlinkRefused when a directory
    between the run directory and `path` is a symbolic link."""
    refuse_symlinks(path)
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.unlink(missing_ok=True)       # a leftover, or a link: unlink removes the link, not its target
        os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644))
        write(tmp)
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)             # replaces a link at `path` itself, never its target
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text_atomically(path: Path, text: str) -> None:
    write_atomically(path, lambda tmp: tmp.write_text(text))


def refuse_symlinks(path: Path) -> None:
    """SymlinkRefused naming the first symbolic link among `path`'s directories below the run
    directory that holds it; outside a run directory nothing is refused."""
    parents = list(Path(path).parents)
    root = next((i for i, p in enumerate(parents) if (p / RUN_MARKER).is_file()), 0)
    for directory in reversed(parents[:root]):
        if directory.is_symlink():
            raise SymlinkRefused(f"{directory}: is a symbolic link (to {os.readlink(directory)}) inside the run "
                                 f"directory {parents[root]}; squall writes there only into its own directories "
                                 "— remove the link and run again")
