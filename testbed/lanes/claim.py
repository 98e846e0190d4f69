"""Claiming a lane for as long as a process uses it: an exclusive flock per lane number.

Independently scheduled processes on one machine (Slurm tasks, or a `squall run` beside a
cluster worker) must never build the same lane. Reading the owner record and then creating
the lane races between them; a kernel lock does not: it is taken atomically and released by
the kernel when its holder exits, however it exits.
"""
from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import Iterable

from testbed.lanes.lane import OWNER_DIR, LaneBusy


class LaneClaim:
    """Holds lane `number` until release() (or the process's end)."""

    def __init__(self, number: int, fd: int):
        self.number, self._fd = number, fd

    def release(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)     # closing the descriptor drops the lock
            self._fd = -1

    def __enter__(self) -> "LaneClaim":
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _lock_path(number: int) -> Path:
    return OWNER_DIR / f"lane-{number}.lock"


def try_claim(number: int) -> LaneClaim | None:
    """The claim on lane `number`, or None when another process holds it."""
    OWNER_DIR.mkdir(parents=True, exist_ok=True)
    fd = os.open(_lock_path(number), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return LaneClaim(number, fd)


def first_free(numbers: Iterable[int]) -> LaneClaim | None:
    """The claim on the first of `numbers` no other process holds; None when all are held."""
    for number in numbers:
        held = try_claim(number)
        if held is not None:
            return held
    return None


def claim(number: int) -> LaneClaim:
    """Lane `number`, or LaneBusy naming it."""
    held = try_claim(number)
    if held is None:
        raise LaneBusy(f"lane {number} (namespaces sq{number}-*) is claimed by another squall process "
                       "on this machine; use another lane number, or wait for it")
    return held
