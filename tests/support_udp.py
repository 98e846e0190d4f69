"""squall-udp run in a lane's namespace, and the JSON summary it prints when it ends."""
from __future__ import annotations

import json
import subprocess

from testbed import netns
from testbed.paths import bin_dir


def udp_in(ns: str, argv: list[str]) -> subprocess.Popen:
    """squall-udp with argv (`send ...` or `recv ...`) in namespace ns, output piped."""
    return netns.popen_in(ns, [str(bin_dir() / "squall-udp"), *argv], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)


def udp_summary(proc: subprocess.Popen, timeout: float) -> dict:
    """Waits for proc to end cleanly and returns its last JSON line."""
    out, err = proc.communicate(timeout=timeout)
    lines = [line for line in out.splitlines() if line.startswith("{")]
    assert proc.returncode == 0 and lines, f"exit {proc.returncode}; stdout {out!r}; stderr {err!r}"
    return json.loads(lines[-1])
