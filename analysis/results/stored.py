"""A finished replication's bulky files are stored gzip-compressed: `emulator.log.gz`,
`fixed.pcap.gz`, `mobile.pcap.gz` (docs/runner.md). Every reader takes either form, so runs
made before, and files a user decompressed, read the same; Wireshark and tshark open the
compressed captures as they are (`zcat fixed.pcap.gz | tcpdump -r -` for tcpdump).

    stored(rep_dir, "emulator.log")     # the path that is there, plain or .gz
    open_text(path)                     # a text stream of either
    compress_replication(work_dir)      # the runner, before a replication is moved in place
"""
from __future__ import annotations

import gzip
import os
import shutil
from pathlib import Path
from typing import TextIO

from analysis.results.directory import LOG_NAME

SUFFIX = ".gz"
LEVEL = 6                        # gzip's default: ~8x on logs, ~5x on header-only captures
_MAGIC = b"\x1f\x8b"


def stored(directory: Path, name: str) -> Path:
    """`directory/name`, or `directory/name.gz` when only the compressed file is there."""
    plain = directory / name
    packed = directory / (name + SUFFIX)
    return packed if not plain.exists() and packed.exists() else plain


def is_gzip(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(2) == _MAGIC


def open_text(path: Path) -> TextIO:
    """The file as UTF-8 text, decompressed when it is gzip."""
    if is_gzip(path):
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def compress(path: Path) -> Path:
    """`path` replaced by `path.gz` (written whole, then the original removed). On a write
    error (a full disk) the original stays and the partial `.gz` is removed; the error is
    raised."""
    target = path.with_name(path.name + SUFFIX)
    partial = path.with_name(f".{target.name}.partial")
    try:
        with open(path, "rb") as src, gzip.GzipFile(partial, "wb", compresslevel=LEVEL, mtime=0) as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        os.replace(partial, target)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    path.unlink()
    return target


def bulky_files(work: Path) -> list[Path]:
    """What a replication stores compressed: the emulator log and every capture."""
    return [p for p in [work / LOG_NAME, *sorted(work.glob("*.pcap"))] if p.is_file()]


def compress_replication(work: Path) -> list[str]:
    """Compresses the replication's bulky files; what could not be compressed stays plain
    and is named in the returned messages."""
    problems = []
    for path in bulky_files(work):
        try:
            compress(path)
        except OSError as e:
            problems.append(f"{path.name} kept uncompressed: {e.strerror or e}")
    return problems
