"""--help and --version of every traffic generator, with and without a mode (no root needed)."""
from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

import pytest

from conftest import require_programs
from testbed.paths import bin_dir

REPO = Path(__file__).resolve().parent.parent
# Each program, alone and in each of its modes.
COMMANDS = [["squall-http"], ["squall-bulk"], ["squall-bulk", "send"], ["squall-bulk", "recv"],
            ["squall-udp"], ["squall-udp", "send"], ["squall-udp", "recv"]]


def run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    require_programs(argv[0])
    return subprocess.run([str(bin_dir() / argv[0]), *argv[1:]], capture_output=True, text=True, timeout=30)


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_help_prints_usage_on_stdout_and_exits_0(command: list[str]) -> None:
    r = run([*command, "--help"])
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout.startswith(f"usage: {command[0]} ")
    assert f"{command[0]} " in r.stdout and "--help | --version" in r.stdout


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_version_names_the_program_and_the_squall_version(command: list[str]) -> None:
    r = run([*command, "--version"])
    assert (r.returncode, r.stderr) == (0, "")
    assert re.fullmatch(rf"{command[0]} \(squall\) \S+\n", r.stdout)


def test_every_program_reports_the_one_version_of_the_build() -> None:
    versions = {run([name, "--version"]).stdout.split()[-1] for name in ("squall-http", "squall-bulk", "squall-udp")}
    assert len(versions) == 1
    [version] = versions
    package = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode != 0:
        assert version == package
        return
    match = re.fullmatch(rf"{re.escape(package)}\+git\.([0-9a-f]+)(\.dirty)?", version)
    assert match, version
    # a revision of this repository (the build may be older than HEAD)
    assert subprocess.run(["git", "-C", str(REPO), "cat-file", "-e", f"{match[1]}^{{commit}}"]).returncode == 0


def test_a_mistake_still_prints_usage_on_stderr_and_exits_2() -> None:
    r = run(["squall-http", "--bogus", "--help"])
    assert r.returncode == 2 and r.stdout == "" and "usage: squall-http" in r.stderr
    r = run(["squall-bulk", "--bogus"])
    assert r.returncode == 2 and "expected mode 'send' or 'recv', got '--bogus'" in r.stderr
