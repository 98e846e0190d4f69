"""meta.json: what produced a run — squall's revision, the kernel, tools and sysctls."""
from __future__ import annotations

import platform
import subprocess
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent

TOOLS = {
    "iproute2": ["ip", "-V"],
    "tcpdump": ["tcpdump", "--version"],
    "nginx": ["nginx", "-v"],
    "gcc": ["gcc", "--version"],
}

SYSCTLS = (
    "net.ipv4.tcp_congestion_control", "net.ipv4.tcp_sack", "net.ipv4.tcp_dsack",
    "net.ipv4.tcp_timestamps", "net.ipv4.tcp_frto", "net.ipv4.tcp_ecn",
    "net.ipv4.tcp_no_metrics_save", "net.ipv4.tcp_early_retrans", "net.ipv4.tcp_recovery",
    "net.core.rmem_max", "net.core.wmem_max",
)


def _first_line(argv: list[str]) -> str:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"unavailable ({e})"
    text = (proc.stdout or proc.stderr).strip()
    return text.splitlines()[0] if text else f"unavailable (exit {proc.returncode})"


def git_revision() -> str:
    rev = _first_line(["git", "-C", str(REPO), "rev-parse", "HEAD"])
    dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return rev + ("+dirty" if dirty else "")


def read_sysctl(name: str) -> str | None:
    path = Path("/proc/sys") / name.replace(".", "/")
    try:
        return path.read_text().strip()
    except OSError:
        return None


def collect(scenario_digest: str, testbed: dict[str, Any]) -> dict[str, Any]:
    uname = platform.uname()
    return {
        "squall_revision": git_revision(),
        "scenario_sha256": scenario_digest,
        "kernel": f"{uname.system} {uname.release} {uname.version}",
        "machine": uname.machine,
        "python": platform.python_version(),
        "tools": {name: _first_line(argv) for name, argv in TOOLS.items()},
        "host_sysctls": {name: read_sysctl(name) for name in SYSCTLS},
        "testbed": testbed,
    }
