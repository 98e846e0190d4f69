"""--help and --version of `squall` and of every C program the build makes (the generators'
options: test_workload_cli.py): one version string for all, the one scripts/squall-version
gives (no root needed)."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from conftest import require_programs
from testbed.paths import bin_dir
from testbed.paths import REPO_ROOT


def run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=REPO_ROOT)


def squall(*args: str) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "testbed.cli", *args])


def test_squall_version_is_the_c_programs_version_with_the_full_revision() -> None:
    r = squall("--version")
    assert (r.returncode, r.stderr) == (0, "")
    expected = run(["scripts/squall-version"]).stdout.strip()
    first, second = r.stdout.splitlines()
    assert first == f"squall (squall) {expected}"
    head = run(["git", "rev-parse", "HEAD"]).stdout.strip()
    assert re.fullmatch(rf"git revision {head}(\+dirty)?", second) if head else second.startswith("git revision")


def test_squall_help_exits_0() -> None:
    r = squall("--help")
    assert r.returncode == 0 and r.stdout.startswith("usage: squall ") and "--version" in r.stdout
    for command in ("show", "run", "status"):
        assert squall(command, "--help").returncode == 0


def test_every_subcommand_answers_help_and_version_under_its_own_name() -> None:
    from testbed.cli import build_parser, subcommands

    version = squall("--version").stdout
    commands = subcommands(build_parser())
    assert {"show", "run", "status", "demo-link", "report", "compare"} <= set(commands)
    for command in commands:
        r = squall(command, "--help")
        assert r.returncode == 0 and r.stdout.startswith(f"usage: squall {command} "), (command, r)
        assert "--version" in r.stdout, command
        r = squall(command, "--version")
        assert (r.returncode, r.stdout) == (0, version), (command, r)


def test_queue_monitor_help_and_version() -> None:
    require_programs("squall-queue-monitor")
    monitor = str(bin_dir() / "squall-queue-monitor")
    r = run([monitor, "--help"])
    assert (r.returncode, r.stderr) == (0, "") and r.stdout.startswith("usage: squall-queue-monitor ")
    assert "--help | --version" in r.stdout
    r = run([monitor, "--version"])
    assert (r.returncode, r.stderr) == (0, "")
    version = squall("--version").stdout.splitlines()[0].split()[-1]
    # the build may be older than the working tree: the same form, a revision of this repository
    assert re.fullmatch(r"squall-queue-monitor \(squall\) \S+\n", r.stdout)
    assert r.stdout.split()[-1].split("+")[0] == version.split("+")[0]
    r = run([monitor, "--bogus"])
    assert r.returncode == 2 and r.stdout == "" and "usage: squall-queue-monitor" in r.stderr


PROGRAMS = ("squall-emulator", "squall-npa", "squall-control", "squall-http", "squall-bulk", "squall-udp",
            "squall-queue-monitor", "squall-capture-records", "squall-log-records", "squall-naive-relay",
            "squall-tcp-sampler", "squall-model-cost", "squall-hostbpf")


def test_the_list_is_every_program_the_build_makes() -> None:
    """Programs: what a Slurm worker asks for its version (testbed/run/worker.py: executable
    squall-* files); squall-host-2004.bpf.o is squall-hostbpf's object, not a program."""
    made = sorted(p.name for p in bin_dir().iterdir() if p.name.startswith("squall-") and os.access(p, os.X_OK))
    assert made == sorted(PROGRAMS)


@pytest.mark.parametrize("program", PROGRAMS)
def test_every_program_answers_help_and_version(program: str) -> None:
    require_programs(program)
    path = str(bin_dir() / program)
    r = run([path, "--help"])
    assert (r.returncode, r.stderr) == (0, "") and "usage" in r.stdout.lower(), r
    r = run([path, "--version"])
    assert (r.returncode, r.stderr) == (0, ""), r
    version = squall("--version").stdout.splitlines()[0].split()[-1]
    assert re.fullmatch(rf"{program} \(squall\) \S+\n", r.stdout)
    assert r.stdout.split()[-1].split("+")[0] == version.split("+")[0]
