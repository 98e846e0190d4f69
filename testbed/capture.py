"""Packet captures with tcpdump inside a namespace.

    with Capture(ns, "eth0", path, "ip and dst host 198.19.20.2"):
        ...traffic...
    packets = read_packets(path)

The capture is running when the context is entered (tcpdump has said "listening")
and flushed to the file when it is left.
"""
from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path
from typing import Sequence

from . import netns

SNAPLEN = 256    # IP + TCP headers with options: the packet identity, never payloads


class CaptureError(RuntimeError):
    pass


class Capture:
    def __init__(self, ns: str, dev: str, path: Path, bpf_filter: str = "", *, start_timeout_s: float = 5.0):
        self.ns, self.dev, self.path = ns, dev, Path(path)
        self.argv: list[str] = ["tcpdump", "-i", dev, "-w", str(self.path), "-U", "--immediate-mode", "-n", "-s", str(SNAPLEN),
                                "-Z", "root", "--time-stamp-precision=micro"]
        if bpf_filter:
            self.argv.append(bpf_filter)
        self.start_timeout_s = start_timeout_s
        self.proc: subprocess.Popen | None = None
        self.stderr_path = self.path.with_suffix(self.path.suffix + ".stderr")

    def __enter__(self) -> "Capture":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        with open(self.stderr_path, "wb") as err:
            self.proc = netns.popen_in(self.ns, self.argv, stdin=subprocess.DEVNULL,
                                       stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.monotonic() + self.start_timeout_s
        while "listening on" not in self._stderr():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise CaptureError(f"tcpdump on {self.ns}/{self.dev} did not start: {self._stderr().strip()}")
            time.sleep(0.02)

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)   # tcpdump flushes and exits
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
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
