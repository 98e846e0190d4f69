"""squall-npa's command line: --help, and bad arguments exit 2 with a message naming the
flag — checked before anything needs root, so these run as any user."""
from __future__ import annotations

import subprocess

import pytest

from testbed.paths import bin_dir

REQUIRED = ["--role", "mobile", "--emulator", "198.19.128.1:5300", "--token", "0123456789abcdef",
            "--address", "198.19.0.2/32"]


def npa(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(bin_dir() / "squall-npa"), *argv], capture_output=True, text=True,
                          timeout=10)


def test_help_documents_every_flag():
    proc = npa("--help")
    assert proc.returncode == 0
    for flag in ("--role", "--emulator", "--token-file", "--token", "--dev", "--address", "--peer", "--mtu",
                 "--route", "--keepalive", "--peer-timeout", "--connect-timeout"):
        assert flag in proc.stdout


@pytest.mark.parametrize("extra, message", [
    (["--role", "sp"], "squall-npa: --role: expected 'router' or 'mobile'"),
    (["--keepalive", "100"], "squall-npa: --keepalive: '100' is not a positive duration"),
    (["--token", "12"], "squall-npa: --token: '12' is not a run token: expected exactly 16 hexadecimal digits"),
    (["--emulator", "198.19.128.1"], "squall-npa: --emulator: '198.19.128.1' is not HOST:PORT"),
    (["--route", "198.18.3.7/24"], "squall-npa: --route: '198.18.3.7/24' has host bits set"),
    (["--mtu", "70000"], "squall-npa: --mtu: '70000' is not a whole number from 68 to 65535"),
    (["--connect-timeout"], "squall-npa: --connect-timeout needs a value"),
    (["--frobnicate", "1"], "squall-npa: unknown option '--frobnicate'"),
])
def test_bad_arguments_exit_2_naming_the_flag(extra, message):
    proc = npa(*REQUIRED, *extra)
    assert proc.returncode == 2
    assert proc.stderr.startswith(message), proc.stderr
    assert proc.stdout == ""


def test_missing_required_flag_is_named():
    proc = npa("--role", "router", "--emulator", "127.0.0.1:5300", "--address", "198.19.0.1/32")
    assert (proc.returncode, proc.stderr.strip()) == (2, "squall-npa: missing --token-file PATH (or --token HEX16) "
                                                       "(see --help)")


def test_token_file_others_can_read_is_refused_without_its_content(tmp_path):
    path = tmp_path / "token"
    path.write_text("0123456789abcdef\n")
    path.chmod(0o644)
    proc = npa("--role", "router", "--emulator", "127.0.0.1:5300", "--address", "198.19.0.1/32",
               "--token-file", str(path))
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"squall-npa: --token-file: the token file {path} can be read or written by "
                                  "other users (mode 0644)"), proc.stderr
    assert "0123456789abcdef" not in proc.stderr


def test_naive_relay_bad_arguments_exit_2():
    proc = subprocess.run([str(bin_dir() / "squall-naive-relay"), "--netns-a", "x", "--address-a",
                           "198.19.0.1/33"], capture_output=True, text=True, timeout=10)
    assert proc.returncode == 2
    assert "--address-a" in proc.stderr and "prefix length" in proc.stderr
