"""Shared fixtures: a fresh lane per namespace test, and the check that nothing is left.

Namespace tests are marked `@pytest.mark.netns`; they are skipped (with the reason)
when not run as root. They use lanes from $SQUALL_TEST_LANE_BASE (default 20) on, ten of
them (five lane tests, five workload test files), so several people can test on one machine
with different bases.
"""
from __future__ import annotations

import os
import shutil
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from testbed.lanes import lane as lanes
from testbed import netns
from testbed.addresses import LaneAddresses, lane_of_namespace, namespaces
from testbed.paths import bin_dir
from testbed.lanes.link_measure import summary as program_summary


LANES_PER_SESSION = 5     # the lane tests use lane_base() ... lane_base() + 4


def lane_base() -> int:
    return int(os.environ.get("SQUALL_TEST_LANE_BASE", "20"))


WORKLOAD_LANES = 5        # the workload tests use one lane each after those: lane_base() + 5 ... + 9


def workload_lane(k: int) -> int:
    """The lane (veth net or emulated link) of the k-th workload test file, 0 <= k < WORKLOAD_LANES."""
    assert 0 <= k < WORKLOAD_LANES
    return lane_base() + LANES_PER_SESSION + k


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("netns") is None:
        return
    if os.geteuid() != 0:
        pytest.skip("needs root: creates network namespaces, veths and TUN devices")
    missing = [tool for tool in ("ip", "tcpdump", "ethtool") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)} on PATH")


def require_programs(*names: str) -> None:
    """Fails (not skips) when a C program is missing: `make pytest` builds them first."""
    for name in names:
        path = bin_dir() / name
        assert os.access(path, os.X_OK), f"{path} is missing; run `make build` first"


def leftovers(lane: int, inodes: set[int]) -> list[str]:
    """What a lane left behind: its namespaces, processes still in them, TUNs of the root namespace."""
    # a cell's further mobile hosts (sqN-mobileK) too
    names = {*namespaces(lane).all(), *(ns for ns in netns.list_namespaces() if lane_of_namespace(ns) == lane)}
    found = [f"namespace {ns}" for ns in sorted(names) if netns.exists(ns)]
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            inode = (entry / "ns" / "net").stat().st_ino
        except OSError:
            continue
        if inode in inodes:
            found.append(f"process {entry.name} ({_comm(entry)}) still in a namespace of lane {lane}")
    if Path("/sys/class/net/wl0").exists():
        found.append("a wl0 device in the root namespace (an NPA ran outside its namespace)")
    return found


def namespace_inodes(addr: LaneAddresses) -> set[int]:
    return {Path(f"/run/netns/{ns}").stat().st_ino for ns in addr.ns.all()}


def _comm(proc_dir: Path) -> str:
    try:
        return (proc_dir / "comm").read_text().strip()
    except OSError:
        return "?"


@pytest.fixture(autouse=True)
def no_test_lane_left(request: pytest.FixtureRequest) -> Iterator[None]:
    """After every namespace test: none of the test lanes has a namespace or TUN left."""
    yield
    if request.node.get_closest_marker("netns") is None or os.geteuid() != 0:
        return
    base = lane_base()
    left = sorted({item for n in range(base, base + LANES_PER_SESSION) for item in leftovers(n, set())})
    assert not left, f"left behind after the test: {'; '.join(left)}"


@contextmanager
def built_lane(number: int) -> Iterator[LaneAddresses]:
    """Lane `number` freshly built; torn down afterwards, and fails if a namespace, TUN or
    process of it is left."""
    addr = lanes.create(number)
    inodes = namespace_inodes(addr)
    try:
        yield addr
    finally:
        lanes.teardown(number)
    left = leftovers(number, inodes)
    assert not left, f"lane {number} left behind: {'; '.join(left)}"


@pytest.fixture
def lane() -> Iterator[LaneAddresses]:
    """A freshly built lane (number $SQUALL_TEST_LANE_BASE)."""
    with built_lane(lane_base()) as addr:
        yield addr


def run_to_completion(group, name: str, ns: str, argv: list[str], timeout_s: float) -> dict:
    """Runs a workload program of a ProgramGroup to its end; returns its JSON summary (last stdout line)."""
    program = group.start(name, ns, argv)
    return program_summary(program, group.wait_exit(name, timeout_s))


@pytest.fixture
def drawn_figures(monkeypatch: pytest.MonkeyPatch) -> dict:
    """File name -> the matplotlib figure a report's plot saved under it (still written)."""
    from analysis.report import plot_frame

    figures: dict = {}
    real_save = plot_frame.save

    def save(fig, out: Path, bottom: float = 0.0) -> Path:
        figures[out.name] = fig
        return real_save(fig, out, bottom)

    monkeypatch.setattr(plot_frame, "save", save)
    return figures


def until(condition, timeout_s: float = 5.0) -> bool:
    """Polls condition() every 20 ms until it holds (True) or timeout_s have passed (False)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True
