"""The scenario loader's fuzzer (tests/fuzz_scenario.py), bounded: any input loads or raises a
ConfigError naming the file and a key. `make fuzz` runs it for FUZZ_SECONDS."""
from __future__ import annotations

from pathlib import Path

import pytest

import fuzz_scenario

EXAMPLES = 50


def test_the_loader_loads_or_names_file_and_key(tmp_path: Path) -> None:
    counts: dict[str, int] = {}
    fuzz_scenario.run(EXAMPLES, tmp_path, counts)
    # both properties ran, and both kinds of outcome occurred (the inputs reach past the top level)
    assert counts.get("loaded") and counts.get("refused") and counts.get("trace refused"), counts


@pytest.mark.parametrize("data", [
    b"\x80", b"seed = 1\nlink = \"e0\"\nx = " + b"[" * 3000 + b"]" * 3000,
    b"seed = 1\nlink = \"e0\"\nx = " + b"{a = " * 3000 + b"1" + b"}" * 3000,
    "name = \"caf\u00e9\"\n".encode("latin-1"), b"", b"seed = 1\nlink = {channel = {trace = \"/dev/zero\"}}",
])
def test_what_the_fuzzer_found(data: bytes, tmp_path: Path) -> None:
    """Inputs that once escaped the loader as UnicodeDecodeError or RecursionError."""
    assert fuzz_scenario.check(data, tmp_path) == "refused"


def test_a_schedule_longer_than_the_emulators_line_names_the_key(tmp_path: Path) -> None:
    """Once escaped as RuntimeError: the emulator's refusal named a line, not a key."""
    data = (
        'seed = 1\n[link]\ndelay = "1ms"\nmtu = "576B"\nbandwidth = ['
        + ", ".join(f'["{i}s", "{64 + i}kbit"]' for i in range(300)) + ']\n').encode()
    assert fuzz_scenario.check(data, tmp_path) == "refused"


def test_a_trace_changed_since_the_last_check_is_checked_again(tmp_path: Path) -> None:
    """Once the emulator's check was cached by the configuration's text alone, which names the
    trace but not its content: a trace made wrong afterwards passed."""
    assert fuzz_scenario.check(fuzz_scenario.TRACED, tmp_path, b"good 2s\n") == "loaded"
    assert fuzz_scenario.check(fuzz_scenario.TRACED, tmp_path, b"good 2s\nbad 2\n") == "refused"
