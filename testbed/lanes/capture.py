"""Packet captures with tcpdump inside a namespace.

    with Capture(ns, "eth0", path, "ip and dst host 198.19.20.2"):
        ...traffic...
    packets = read_packets(path)

The capture is running when the context is entered (tcpdump has said "listening")
and flushed to the file when it is left. `ending` then says whether tcpdump ended by
squall's SIGINT (testbed.processes.Ending); tcpdump's stderr is `<pcap>.stderr`, with the
figures it printed at its exit (`parse_tcpdump_statistics`) and its complaints
(`tcpdump_messages`).
"""
from __future__ import annotations

import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Sequence

from testbed import netns
from testbed.processes import START_POLL_S, Ending, StartedInContext, stop_process

SNAPLEN = 256    # IP + TCP headers with options: the packet identity, never payloads
STOP_GRACE_S = 5.0
# tcpdump's last lines on stderr: "12 packets captured", "12 packets received by filter",
# "0 packets dropped by kernel" and, when libpcap counts any, "3 packets dropped by interface".
_STATISTIC = re.compile(r"^\s*(\d+) packets? (captured|received by filter|dropped by kernel|dropped by interface)\s*$")


def parse_tcpdump_statistics(stderr: str) -> dict[str, int]:
    """tcpdump's exit statistics as {"captured", "received_by_filter", "dropped_by_kernel"[,
    "dropped_by_interface"]}; empty when it printed none (it was killed). The last figure of
    each kind counts."""
    found: dict[str, int] = {}
    for line in stderr.splitlines():
        m = _STATISTIC.match(line)
        if m:
            found[m.group(2).replace(" ", "_")] = int(m.group(1))
    return found


def tcpdump_messages(stderr: str) -> list[str]:
    """What tcpdump complained of (`pcap_loop: The interface disappeared`), without its
    `listening on` line."""
    return [line.removeprefix("tcpdump: ").strip() for line in stderr.splitlines()
            if line.startswith("tcpdump: ") and not line.startswith("tcpdump: listening on")]


class CaptureError(RuntimeError):
    pass


class Capture(StartedInContext):
    def __init__(self, ns: str, dev: str, path: Path, bpf_filter: str = "", *, start_timeout_s: float = 5.0):
        self.ns, self.dev, self.path = ns, dev, Path(path)
        self.argv: list[str] = ["tcpdump", "-i", dev, "-w", str(self.path), "-U", "--immediate-mode", "-n", "-s", str(SNAPLEN),
                                "-Z", "root", "--time-stamp-precision=micro"]
        if bpf_filter:
            self.argv.append(bpf_filter)
        self.start_timeout_s = start_timeout_s
        self.proc: subprocess.Popen | None = None
        self.stderr_path = self.path.with_suffix(self.path.suffix + ".stderr")
        self.ending: Ending | None = None
        # when squall asked tcpdump to stop (µs since the epoch, this machine's clock, which the
        # emulator in a namespace shares): packets later than that may be missing from the file
        self.stop_requested_us: int | None = None

    def start(self) -> None:
        with open(self.stderr_path, "wb") as err:
            self.proc = netns.popen_in(self.ns, self.argv, stdin=subprocess.DEVNULL,
                                       stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.monotonic() + self.start_timeout_s
        while "listening on" not in self._stderr():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise CaptureError(f"tcpdump on {self.ns}/{self.dev} did not start: {self._stderr().strip()}")
            time.sleep(START_POLL_S)

    def stop(self) -> None:
        if self.proc is None:
            return
        self.stop_requested_us = time.time_ns() // 1000
        self.ending = stop_process(self.proc, signal.SIGINT, STOP_GRACE_S)   # tcpdump flushes and exits
        self.proc = None

    def _stderr(self) -> str:
        try:
            return self.stderr_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""


def read_packets(path: Path) -> Sequence:
    """The IP packets of a capture (Ethernet or raw), each with .time (float seconds)."""
    from scapy.layers.inet import IP
    from scapy.utils import rdpcap

    out = []
    for frame in rdpcap(str(path)):
        ip = frame.getlayer(IP)
        if ip is not None:
            ip.time = frame.time
            out.append(ip)
    return out
