"""meta.json: what produced a run — squall's revision, the kernel, tools and sysctls."""
from __future__ import annotations

import functools
import platform
import socket
import subprocess
from pathlib import Path
from typing import Any, Iterable

from analysis.results.provenance import squall_version
from testbed.paths import REPO_ROOT as REPO

RUN_OPTIONS_KEY = "run"     # meta.json testbed.run: the options a run was started with


def scenario_dir(meta: dict[str, Any]) -> Path | None:
    """The directory of the scenario file a run was started from (meta.json testbed.run.scenario_dir):
    what the run's stored scenario.toml's relative paths (a channel trace) are relative to."""
    stored = (meta.get("testbed") or {}).get(RUN_OPTIONS_KEY) or {}
    directory = stored.get("scenario_dir") if isinstance(stored, dict) else None
    return Path(directory) if isinstance(directory, str) else None

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


def program_versions(programs: Iterable[str]) -> dict[str, str]:
    """Each third-party program's `--version` (first line) on this machine, where a run's lanes
    run it: what a command flow ran (iperf3, curl …)."""
    return {name: _first_line([name, "--version"]) for name in dict.fromkeys(programs)}


def collect(scenario_digest: str, testbed: dict[str, Any], *, title: str | None = None,
            note: str | None = None, programs: Iterable[str] = ()) -> dict[str, Any]:
    """meta.json; `title` and `note`: `squall run --title/--note` (as Flent's), left out when
    not given; `programs`: the command flows' programs, whose versions are recorded."""
    uname = platform.uname()
    given = {"title": title, "note": note}
    return {
        **{k: v for k, v in given.items() if v},
        "squall_version": squall_version(),
        "squall_revision": git_revision(),
        "scenario_sha256": scenario_digest,
        "host": socket.gethostname(),
        "flow_programs": program_versions(programs),
        "kernel": f"{uname.system} {uname.release} {uname.version}",
        "machine": uname.machine,
        "python": platform.python_version(),
        "tools": {name: _first_line(argv) for name, argv in TOOLS.items()},
        "host_sysctls": {name: read_sysctl(name) for name in SYSCTLS},
        "testbed": testbed,
    }


@functools.cache
def _this_host() -> dict[str, Any]:
    uname = platform.uname()
    return {"host": socket.gethostname(), "kernel": uname.release, "squall_revision": git_revision(),
            "tools": {name: _first_line(argv) for name, argv in TOOLS.items()}}


def provenance(lane: int | None) -> dict[str, Any]:
    """Where one replication ran and with what (status.json details.provenance): on a cluster
    every node can differ from the machine that created the run."""
    return {**_this_host(), "lane": lane}
