"""A lane program's CPU wait (testbed/cpu_wait.py), as root: the kernel's pressure stall
information of a cgroup holding the program alone counts the time it waited behind another
task on its CPU, starts at zero for a later program of the same name, and goes with the lane."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from testbed import cpu_wait

NS = "test-cpu-wait"      # a name only, of no lane: no namespace is needed to hold a cgroup


def _usable() -> bool:
    base = cpu_wait._base()
    return os.geteuid() == 0 and base is not None and (base.parent / "cgroup.procs").exists()


pytestmark = pytest.mark.skipif(not _usable(), reason="needs root and a cgroup v2 mount")

# Both on CPU 0, both ending by their own clock (never by another process's signal, which a
# busy loop could keep from running): the waker at nice 19 wakes every millisecond for 1 s, the
# busy loop at nice 0 runs for 0.6 s. Nothing real-time: the machine's other work goes on.
# Niceness set outright, not added to the test's own: under `nice make test` the busy loop
# would otherwise be niced too and the waker wait far less.
WAKER = "import os, time\nos.sched_setaffinity(0, {0})\nos.setpriority(os.PRIO_PROCESS, 0, 19)\nend = time.monotonic() + 1.0\n" \
        "while time.monotonic() < end:\n    time.sleep(0.001)\n"
BUSY = "import os, time\nos.sched_setaffinity(0, {0})\nos.setpriority(os.PRIO_PROCESS, 0, 0)\nend = time.monotonic() + 0.6\n" \
       "while time.monotonic() < end:\n    pass\n"


def _python(code: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code])


def test_a_program_behind_a_busy_loop_on_its_cpu_waits_and_its_cgroup_goes_with_the_lane() -> None:
    waker = _python(WAKER)
    group = cpu_wait.place(NS, "waker", waker.pid)
    if group is None:
        waker.kill()
        pytest.skip("no PSI for cgroups on this kernel")
    busy = _python(BUSY)
    try:
        waker.wait(10)
        busy.wait(10)
    finally:
        for p in (waker, busy):
            p.kill()
            p.wait()
    waited = cpu_wait.waited_us(group)
    assert waited is not None and waited > 50_000, waited      # about 110 ms measured
    # a later program of the same name starts from zero
    quiet = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.2)"])
    again = cpu_wait.place(NS, "waker", quiet.pid)
    assert again == group and (cpu_wait.waited_us(again) or 0) < waited
    quiet.wait(10)
    cpu_wait.remove_namespaces([NS])
    assert not group.parent.exists()


def test_a_program_still_running_at_the_lane_s_end_is_killed_with_its_cgroup() -> None:
    sleeper = subprocess.Popen(["sleep", "60"])
    group = cpu_wait.place(NS, "sleeper", sleeper.pid)
    if group is None:
        sleeper.kill()
        pytest.skip("no PSI for cgroups on this kernel")
    started = time.monotonic()
    cpu_wait.remove_namespaces([NS])
    assert sleeper.wait(5) is not None and time.monotonic() - started < 5
    assert not group.exists()
