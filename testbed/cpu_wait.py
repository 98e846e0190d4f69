"""How long a lane's program waited for a CPU, from the kernel's own pressure stall information.

Each program squall starts in a lane's namespace is moved, right after it starts, into a cgroup
v2 of its own, `squall/<namespace>/<program>` under the cgroup2 mount. Its `cpu.pressure` line
`some ... total=N` is then the time, in µs, that the program was runnable but not running:
waiting for a CPU (Documentation/accounting/psi.rst). A program that waits long for its CPU
answers late whatever its TCP does, which the captures' packet timing cannot see.

Nothing is measured (None) where the kernel has no cgroup v2 or no PSI, or the program was gone
before it could be moved. The lane owns the directories: `remove_namespaces` deletes them with it.
"""
from __future__ import annotations

import functools
import time
from pathlib import Path

ROOT_NAME = "squall"
KILL_WAIT_S = 2.0


@functools.cache
def _cgroup2_mount() -> Path | None:
    try:
        mounts = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return None
    for line in mounts:
        fields = line.split()
        if len(fields) >= 3 and fields[2] == "cgroup2":
            return Path(fields[1])
    return None


def _base() -> Path | None:
    mount = _cgroup2_mount()
    return None if mount is None else mount / ROOT_NAME


def place(ns: str, name: str, pid: int) -> Path | None:
    """Moves process `pid` into a fresh cgroup of its own; the cgroup, or None if not measured.
    A cgroup of an earlier program of that name (a lane kept between replications) is replaced,
    so its totals start at zero."""
    base = _base()
    if base is None:
        return None
    group = base / ns / name
    for _attempt in range(2):     # another lane's teardown may take the squall directory meanwhile
        try:
            if group.exists():
                _remove(group)
            group.mkdir(parents=True)
            if not (group / "cpu.pressure").exists():     # PSI off (psi=0) or not built
                group.rmdir()
                return None
            (group / "cgroup.procs").write_text(f"{pid}\n")
            return group
        except FileNotFoundError:
            continue
        except OSError:
            return None
    return None


def waited_us(group: Path | None) -> int | None:
    """The program's time waiting for a CPU so far (µs), None if not measured."""
    if group is None:
        return None
    try:
        for line in (group / "cpu.pressure").read_text().splitlines():
            if line.startswith("some "):
                return int(line.rsplit("total=", 1)[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def _remove(group: Path) -> None:
    """Deletes one program's cgroup; a process still in it (a crashed run's) is killed first."""
    try:
        if (group / "cgroup.procs").read_text().strip():
            (group / "cgroup.kill").write_text("1\n")
            deadline = time.monotonic() + KILL_WAIT_S
            while (group / "cgroup.procs").read_text().strip() and time.monotonic() < deadline:
                time.sleep(0.01)
        group.rmdir()
    except FileNotFoundError:
        pass


def remove_namespaces(namespaces: list[str]) -> None:
    """Deletes the cgroups of the programs of these namespaces and theirs (a lane's teardown)."""
    base = _base()
    if base is None:
        return
    for ns in namespaces:
        directory = base / ns
        if not directory.is_dir():
            continue
        for group in [p for p in directory.iterdir() if p.is_dir()]:
            _remove(group)
        try:
            directory.rmdir()
        except OSError:
            pass
    try:
        base.rmdir()            # the last lane's teardown takes the squall directory with it
    except OSError:
        pass
