"""Building and tearing down a lane: three namespaces joined by two veth pairs.

The wireless link between emu and mobile is not made here: the two NPAs create
their TUNs when a link session starts (testbed/link/session.py). Layout and
addresses: testbed/addresses.py and docs/testbed.md.

Each lane this module creates has an owner record (the creating process's pid and
start time) so that cleanup_leftovers() can tell the lanes of dead runs from those of
runs still going on the same machine.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from testbed import netns
from testbed.addresses import Interface, LaneAddresses, lane_addresses, lane_of_namespace

OWNER_DIR = Path(os.environ.get("SQUALL_LANE_OWNER_DIR", "/run/squall/lanes"))
KILL_GRACE_S = 2.0
OFFLOADS = ("tso", "gso", "gro")


@dataclass(frozen=True)
class Owner:
    pid: int
    start_ticks: int   # /proc/<pid>/stat field 22: tells a reused pid apart

    def alive(self) -> bool:
        return process_start_ticks(self.pid) == self.start_ticks


class LaneBusy(RuntimeError):
    """The lane is not this process's to build: another live process owns it, or its namespaces
    were not made by squall."""


def check_free(lane: int) -> None:
    """Raises LaneBusy unless lane `lane` is absent, this process's, or a dead run's leftover.

    The rule of cleanup_leftovers(): namespaces without an owner record were not made by this
    module (another tool, another user's experiment) and are never torn down.
    """
    present = sorted(ns for ns in netns.list_namespaces() if lane_of_namespace(ns) == lane)
    if not present:
        return
    owner = read_owner(lane)
    if owner is None:
        raise LaneBusy(f"lane {lane}: namespaces {', '.join(present)} exist without squall's owner record "
                       f"({_owner_path(lane)}), so squall did not make them and leaves them alone; use another "
                       "lane number, or delete them yourself (ip netns delete NAME) if they are yours to remove")
    if owner.pid != os.getpid() and owner.alive():
        raise LaneBusy(f"lane {lane} (namespaces {', '.join(present)}) is in use by process {owner.pid}; "
                       "use another lane number, or stop that process")


def create(lane: int) -> LaneAddresses:
    """Builds lane `lane`; a leftover of the same lane (a crashed run) is removed first.

    Raises LaneBusy (check_free) if another live process created the lane, since two runs on one
    lane would corrupt each other's measurements, or if its namespaces are not squall's.
    """
    addr = lane_addresses(lane)
    check_free(lane)
    teardown(lane)
    _write_owner(lane)
    try:
        for ns in addr.ns.all():
            netns.create(ns)
        _add_veth_pair(addr.fixed_eth, addr.emu_fixed)
        _add_veth_pair(addr.emu_carrier, addr.mobile_carrier)
        netns.run_in(addr.ns.emu, ["sysctl", "-q", "-w", "net.ipv4.ip_forward=1"])
        netns.run_in(addr.ns.fixed, ["ip", "route", "add", addr.wireless_net, "via", addr.emu_fixed.address])
    except BaseException:
        teardown(lane)
        raise
    return addr


def teardown(lane: int) -> None:
    """Stops every process in the lane's namespaces (SIGTERM, then SIGKILL) and deletes them."""
    addr = lane_addresses(lane)
    # with a cell's further mobile hosts (sqN-mobileK, testbed/lanes/cell_hosts.py)
    names = [*addr.ns.all(), *sorted(ns for ns in netns.list_namespaces()
                                     if lane_of_namespace(ns) == lane and ns not in addr.ns.all())]
    present = [ns for ns in names if netns.exists(ns)]
    _stop_processes(present)
    for ns in names:      # a namespace already gone may still have its programs' cgroups
        netns.delete(ns)
    # A link session that never closed (a crashed run) leaves its private directory.
    for leftover in Path(tempfile.gettempdir()).glob(addr.private_prefix + "*"):
        shutil.rmtree(leftover, ignore_errors=True)
    _owner_path(lane).unlink(missing_ok=True)


@contextmanager
def lane_up(lane: int) -> Iterator[LaneAddresses]:
    """A freshly built lane, torn down on leaving (also on errors and Ctrl-C)."""
    addr = create(lane)
    try:
        yield addr
    finally:
        teardown(lane)


def cleanup_leftovers() -> list[int]:
    """Tears down the lanes of dead runs; returns their numbers.

    A lane is a leftover when its owner record names a process that no longer runs.
    Namespaces without a record were not made by this module (another tool, another
    user's experiment) and are left alone.
    """
    present = lanes_present()
    removed = []
    for lane in sorted(present):
        owner = read_owner(lane)
        if owner is not None and not owner.alive():
            teardown(lane)
            removed.append(lane)
    _forget_stale_records(present)
    return removed


def _forget_stale_records(present: set[int]) -> None:
    """Removes owner records of dead processes whose namespaces are already gone."""
    if not OWNER_DIR.is_dir():
        return
    for path in OWNER_DIR.glob("*.json"):
        if path.stem.isdigit() and int(path.stem) not in present:
            owner = read_owner(int(path.stem))
            if owner is None or not owner.alive():
                path.unlink(missing_ok=True)


def lanes_present() -> set[int]:
    """Lane numbers that have at least one `sq<N>-*` namespace."""
    return {n for n in map(lane_of_namespace, netns.list_namespaces()) if n is not None}


def read_owner(lane: int) -> Owner | None:
    try:
        data = json.loads(_owner_path(lane).read_text())
        return Owner(int(data["pid"]), int(data["start_ticks"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def process_start_ticks(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may contain spaces and parentheses: split after it.
    fields = stat[stat.rindex(")") + 2:].split()
    return int(fields[19])


def _owner_path(lane: int) -> Path:
    return OWNER_DIR / f"{lane}.json"


def _write_owner(lane: int) -> None:
    OWNER_DIR.mkdir(parents=True, exist_ok=True)
    pid = os.getpid()
    record = {"pid": pid, "start_ticks": process_start_ticks(pid)}
    _owner_path(lane).write_text(json.dumps(record) + "\n")


def _add_veth_pair(a: Interface, b: Interface) -> None:
    netns.run_in(a.ns, ["ip", "link", "add", a.dev, "type", "veth", "peer", "name", b.dev, "netns", b.ns])
    for end in (a, b):
        netns.run_in(end.ns, ["ip", "address", "add", end.cidr, "dev", end.dev])
        # Offloads off so that captures show the segments that really cross the link.
        netns.run_in(end.ns, ["ethtool", "-K", end.dev, *[w for o in OFFLOADS for w in (o, "off")]])
        netns.run_in(end.ns, ["ip", "link", "set", end.dev, "up"])


def _stop_processes(namespaces: list[str]) -> None:
    pids = [p for ns in namespaces for p in netns.pids(ns)]
    _signal_all(pids, signal.SIGTERM)
    deadline = time.monotonic() + KILL_GRACE_S
    while pids and time.monotonic() < deadline:
        time.sleep(0.05)
        pids = [p for ns in namespaces for p in netns.pids(ns)]
    _signal_all(pids, signal.SIGKILL)
    deadline = time.monotonic() + KILL_GRACE_S
    while pids and time.monotonic() < deadline:
        time.sleep(0.02)
        pids = [p for ns in namespaces for p in netns.pids(ns)]


def _signal_all(pids: list[int], sig: signal.Signals) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def main(argv: list[str] | None = None) -> int:
    """python -m testbed.lanes.lane create N | teardown N | cleanup | list"""
    import argparse

    p = argparse.ArgumentParser(prog="python -m testbed.lanes.lane", description="Build and remove testbed lanes.")
    sub = p.add_subparsers(dest="command", required=True)
    for name in ("create", "teardown"):
        sub.add_parser(name).add_argument("lane", type=int)
    sub.add_parser("cleanup", help="tear down the lanes of dead runs")
    sub.add_parser("list", help="lanes present, with their owners")
    args = p.parse_args(argv)
    if args.command == "create":
        addr = create(args.lane)
        # The record names this short-lived process: the lane counts as a leftover
        # for cleanup_leftovers() once we exit, and `teardown` removes it.
        print(f"lane {args.lane}: {' '.join(addr.ns.all())}")
    elif args.command == "teardown":
        teardown(args.lane)
    elif args.command == "cleanup":
        print(f"removed lanes: {cleanup_leftovers()}")
    else:
        for lane in sorted(lanes_present()):
            owner = read_owner(lane)
            state = "no owner record" if owner is None else f"owner {owner.pid} {'alive' if owner.alive() else 'dead'}"
            print(f"lane {lane}: {state}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
