"""How a replication's programs ended (testbed/processes.py: Ending, stop_process) and
tcpdump's exit statistics (testbed/lanes/capture.py), without root."""
from __future__ import annotations

import signal
import subprocess
import sys

from conftest import until
from testbed.lanes.capture import parse_tcpdump_statistics, tcpdump_messages
from testbed.processes import Ending, stop_process

# --- tcpdump's statistics ---------------------------------------------------------------------

def test_tcpdump_statistics_as_tcpdump_4_99_prints_them() -> None:
    stderr = ("tcpdump: listening on eth0, link-type EN10MB (Ethernet), snapshot length 256 bytes\n"
              "341 packets captured\n345 packets received by filter\n4 packets dropped by kernel\n")
    assert parse_tcpdump_statistics(stderr) == {"captured": 341, "received_by_filter": 345,
                                                "dropped_by_kernel": 4}


def test_tcpdump_statistics_singular_and_interface_drops() -> None:
    stderr = "1 packet captured\n1 packet received by filter\n0 packets dropped by kernel\n" \
             "7 packets dropped by interface\n"
    assert parse_tcpdump_statistics(stderr) == {"captured": 1, "received_by_filter": 1,
                                                "dropped_by_kernel": 0, "dropped_by_interface": 7}


def test_tcpdump_messages_leave_out_its_listening_line() -> None:
    stderr = ("tcpdump: listening on wl0, link-type RAW (Raw IP), snapshot length 256 bytes\n"
              "tcpdump: pcap_loop: The interface disappeared\n253 packets captured\n")
    assert tcpdump_messages(stderr) == ["pcap_loop: The interface disappeared"]


def test_tcpdump_killed_prints_no_statistics() -> None:
    assert parse_tcpdump_statistics("tcpdump: listening on wl0, link-type RAW (Raw IP)\n") == {}
    # a line that only looks like one is not taken
    assert parse_tcpdump_statistics("tcpdump: 12 packets captured by someone else\n") == {}


# --- how a program ended ----------------------------------------------------------------------

def _ready(handler: str) -> subprocess.Popen[str]:
    """A program that sets its SIGINT handling, says so, then sleeps: signalled only once it
    is ready (a fixed pause before the signal lost the race on a loaded machine)."""
    code = f"import signal, sys, time\n{handler}\nprint('ready', flush=True)\ntime.sleep(30)\n"
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    return proc


def test_stop_process_tells_a_requested_end_from_an_early_death() -> None:
    asked = subprocess.Popen(["sleep", "30"])
    ending = stop_process(asked, signal.SIGTERM, 5.0)
    assert ending == Ending(requested=True, code=-signal.SIGTERM)
    assert not ending.clean and "killed by SIGTERM" in ending.describe()
    early = subprocess.Popen(["sh", "-c", "exit 3"])
    early.wait()
    ending = stop_process(early, signal.SIGINT, 5.0)
    assert ending == Ending(requested=False, code=3)
    assert ending.describe() == "ended before squall stopped it (exit code 3)"
    clean = _ready("signal.signal(signal.SIGINT, lambda *_: sys.exit(0))")
    assert stop_process(clean, signal.SIGINT, 5.0).clean
    stubborn = _ready("signal.signal(signal.SIGINT, signal.SIG_IGN)")
    ending = stop_process(stubborn, signal.SIGINT, 0.3)
    assert ending.forced and ending.code == -signal.SIGKILL and "was killed" in ending.describe()


# --- process groups: only squall stops what it started -------------------------------------------

SQUALL_LIKE = """
import os, signal, sys, time
from pathlib import Path
from testbed.processes import ProgramGroup
signal.signal(signal.SIGHUP, signal.SIG_DFL)     # as from a terminal, also under nohup
group = ProgramGroup(Path(sys.argv[1]))
emulator = group.start("emulator", None, ["sleep", "30"])
capture = group.start("capture", None, ["sleep", "30"])
os.kill(capture.proc.pid, signal.SIGSTOP)        # a capture suspended from outside
print(emulator.proc.pid, capture.proc.pid, flush=True)
time.sleep(30)
"""


def test_a_hangup_of_squalls_process_group_never_reaches_its_programs(tmp_path) -> None:
    """A detached run's terminal going away (SIGHUP to squall's group), or squall's group
    orphaned with a stopped member, must not end the emulator or the NPAs: each program squall
    starts is in a session and process group of its own."""
    import os

    parent = subprocess.Popen([sys.executable, "-c", SQUALL_LIKE, str(tmp_path)], stdout=subprocess.PIPE,
                              text=True, start_new_session=True)
    assert parent.stdout is not None
    emulator, capture = map(int, parent.stdout.readline().split())

    def state(pid: int) -> str:
        return open(f"/proc/{pid}/stat").read().rsplit(") ", 1)[1][0]
    try:
        assert os.getsid(emulator) == emulator and os.getpgid(capture) == capture
        assert until(lambda: state(capture) == "T")     # the stop takes effect when it is next scheduled
        os.killpg(parent.pid, signal.SIGHUP)             # the terminal's hangup: squall's group
        assert parent.wait(10) == -signal.SIGHUP
        os.kill(emulator, 0)                             # still running: ProcessLookupError otherwise
        assert state(capture) == "T"                     # still stopped: no SIGHUP + SIGCONT came
    finally:
        for pid in (emulator, capture):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
