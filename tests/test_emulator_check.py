"""`squall-emulator --check CONFIG`: the emulator's own validator on a rendered configuration.

The valid file has the form testbed/scenario/emulator_config.py renders (a cell of the IIP mixture
study with its RED router stage). Runs the built program only; no root, no namespace.
"""
from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import pytest

EMULATOR = Path(__file__).resolve().parent.parent / "build" / "bin" / "squall-emulator"

HEAD = """\
# squall-emulator configuration: link r2, replication 3
listen = 127.0.0.1:{port}
token = 0123456789abcdef
log = {log}
seed = 2004
replication = 3
keepalive = 1000000us
peer_timeout = 5000000us
release_ahead = 0us

[channel]
initial = good
good = uniform(10000000us, 25000000us)
bad = uniform(1800000us, 4000000us)
"""

DIRECTION = """\
mtu = 576B
bandwidth = 64000bit
delay = 300000us
send_buffer = 9600B
recv_buffer = 9600B
overhead = 0B
error_good = 0.0
error_bad = 0.63
arq_retransmissions = 2
arq_delay = 700000us
in_order = true
"""

ROUTER = """\
[down.router]
scheduler = priority
default = TCP

[down.router.class.TCP]
priority = 1
discipline = red
limit = 11000B
red.min = 2000B
red.max = 6000B
red.avpkt = 500B
red.max_p = 0.1
red.w_q = 0.001953125
red.ecn = true
"""

RENDERED = f"{HEAD}\n[down]\n{DIRECTION}\n[up]\n{DIRECTION}\n{ROUTER}"

# (what is wrong, the edit of RENDERED: old text -> new text (first occurrence), the key named)
INVALID = [
    ("5000 retries", "arq_retransmissions = 2", "arq_retransmissions = 5000", "down.arq_retransmissions"),
    ("MTU of 67 bytes", "mtu = 576B", "mtu = 67B", "down.mtu"),
    ("zero ARQ delay with retries", "arq_delay = 700000us", "arq_delay = 0ms", "down.arq_delay"),
    ("RED min not below max", "red.min = 2000B", "red.min = 6000B", "down.router.class.TCP.red.min"),
    ("no token", "token = 0123456789abcdef\n", "", "token"),
    ("a unit missing", "delay = 300000us", "delay = 300000", "down.delay"),
    ("release ahead over 10 ms", "release_ahead = 0us", "release_ahead = 10001us", "release_ahead"),
]

# Edits that stay valid: the limits themselves.
VALID_EDGES = [
    ("MTU of 68 bytes", "mtu = 576B", "mtu = 68B"),
    ("zero ARQ delay without retries", "arq_retransmissions = 2\narq_delay = 700000us",
     "arq_retransmissions = 0\narq_delay = 0ms"),
    ("1000 retries", "arq_retransmissions = 2", "arq_retransmissions = 1000"),
    ("release ahead of 10 ms", "release_ahead = 0us", "release_ahead = 10ms"),
]


@pytest.fixture
def busy_port():
    """A UDP port this test holds: --check must not try to bind it."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        yield s.getsockname()[1]


def rendered(tmp_path: Path, port: int, old: str = "", new: str = "") -> Path:
    text = RENDERED.format(port=port, log=tmp_path / "emulator.log")
    assert old in text, f"the edit's text {old!r} is not in the configuration"
    path = tmp_path / "cell.conf"
    path.write_text(text.replace(old, new, 1))
    return path


def emulator(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    assert os.access(EMULATOR, os.X_OK), f"{EMULATOR} is missing; run `make build` first"
    return subprocess.run([str(EMULATOR), *args], input=stdin, capture_output=True, text=True, timeout=10)


def test_a_rendered_configuration_is_valid_silently_and_nothing_is_created(tmp_path: Path, busy_port: int) -> None:
    result = emulator("--check", str(rendered(tmp_path, busy_port)))
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert not (tmp_path / "emulator.log").exists()


@pytest.mark.parametrize("what,old,new", VALID_EDGES, ids=[v[0] for v in VALID_EDGES])
def test_the_limits_themselves_are_valid(tmp_path: Path, busy_port: int, what: str, old: str, new: str) -> None:
    result = emulator("--check", str(rendered(tmp_path, busy_port, old, new)))
    assert (result.returncode, result.stderr) == (0, ""), what


@pytest.mark.parametrize("what,old,new,key", INVALID, ids=[c[0] for c in INVALID])
def test_an_invalid_configuration_exits_2_with_one_line_naming_file_and_key(
        tmp_path: Path, busy_port: int, what: str, old: str, new: str, key: str) -> None:
    path = rendered(tmp_path, busy_port, old, new)
    result = emulator("--check", str(path))
    assert result.returncode == 2, what
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(f"squall-emulator: {path}"), result.stderr
    assert f": {key}" in result.stderr, result.stderr
    assert not (tmp_path / "emulator.log").exists()


def test_start_up_refuses_with_the_same_line(tmp_path: Path, busy_port: int) -> None:
    """One validator: the run itself says what --check says (with the start-up exit code 1)."""
    path = rendered(tmp_path, busy_port, "arq_retransmissions = 2", "arq_retransmissions = 5000")
    checked, started = emulator("--check", str(path)), emulator(str(path))
    assert started.returncode == 1
    assert started.stderr == checked.stderr == f"squall-emulator: {path}: down.arq_retransmissions: 5000 is more than the limit 1000\n"


def test_standard_input_is_checked_as_stdin(tmp_path: Path, busy_port: int) -> None:
    text = rendered(tmp_path, busy_port).read_text()
    assert emulator("--check", "-", stdin=text).returncode == 0
    result = emulator("--check", "-", stdin=text.replace("mtu = 576B", "mtu = 67B", 1))
    assert result.returncode == 2
    assert result.stderr.startswith("squall-emulator: <stdin>:17: down.mtu: expected a size in bytes in [68B, 65535B]")


def test_command_line_values_take_part_in_the_check(tmp_path: Path, busy_port: int) -> None:
    path = rendered(tmp_path, busy_port, "token = 0123456789abcdef\n", "")
    assert emulator("--check", "--token", "00000000000000ff", str(path)).returncode == 0
    result = emulator("--check", "--seed", "x", str(path))
    assert result.returncode == 2
    assert result.stderr.startswith("squall-emulator: --seed: expected a decimal integer")


def test_check_and_print_timeline_exclude_each_other(tmp_path: Path, busy_port: int) -> None:
    result = emulator("--check", "--print-timeline", "10s", str(rendered(tmp_path, busy_port)))
    assert result.returncode == 1
    assert result.stderr.startswith("squall-emulator: --check and --print-timeline exclude each other\n")


@pytest.mark.parametrize("args,message", [
    (("--print-ecn", "1"), "squall-emulator: --print-ecn needs --print-packets\n"),
    (("--print-packets", "3", "--print-ecn", "0,4"), "squall-emulator: --print-ecn: expected ECN values 0-3 "
                                                     "separated by commas (at most 64), got '0,4'\n"),
    (("--print-packets", "3", "--print-ecn", "1,"), "squall-emulator: --print-ecn: expected ECN values 0-3"),
])
def test_print_ecn_is_checked(tmp_path: Path, busy_port: int, args: tuple[str, ...], message: str) -> None:
    result = emulator(*args, str(rendered(tmp_path, busy_port)))
    assert result.returncode == 1
    assert result.stderr.startswith(message), result.stderr
