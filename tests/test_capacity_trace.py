"""Recorded capacity traces in scenarios (`bandwidth = { mahimahi = "FILE" }`, docs/links.md):
the emulator reads and refuses a bad trace naming its file and line under the scenario's key,
`squall show` summarises the trace, the rendered configuration names it, and the shipped trace
is what its generator writes. The model's semantics: emulator/tests/test_capacity_trace.c."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from testbed.errors import ConfigError
from testbed.scenario import emulator_config
from testbed.scenario import loader as scenario

SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios"

SCENARIO = """
name = "t"
seed = 7

[link]
mtu = "1500B"
delay = "20ms"
send_buffer = "100000B"

[link.down]
bandwidth = { mahimahi = "down.trace" }

[link.up]
bandwidth = "1Mbit"
"""


def load(tmp_path: Path, trace: str) -> scenario.Scenario:
    (tmp_path / "down.trace").write_text(trace)
    path = tmp_path / "s.toml"
    path.write_text(textwrap.dedent(SCENARIO))
    return scenario.load(path)


def test_show_summarises_the_trace_per_second(tmp_path: Path) -> None:
    # Period 2 s (the last line, which is also the next cycle's time 0): the first second has
    # 3 opportunities (10, 20 ms and the one at 2000 ms), the second 1 (1500 ms).
    sc = load(tmp_path, "10\n20\n1500\n2000\n")
    d = sc.cells[0].link.down
    assert d.capacity is not None and [s.rate_bps for s in d.bandwidth] == [36_000, 12_000]
    from testbed.scenario.describe import direction_text
    text = direction_text(d)
    assert "4 opportunities, period 2 s" in text and "mean 24 kbit/s, min 12 kbit/s, max 36 kbit/s" in text, text
    rendered = emulator_config.render(sc.cells[0].link, emulator_config.EmulatorRun(1, 0, None, Path("x.log")))
    assert f"bandwidth = mahimahi({tmp_path.resolve() / 'down.trace'})" in rendered


@pytest.mark.parametrize("trace,words", [
    ("5\n3\n", "down.trace:2: times must be non-decreasing"),
    ("0\n0\n", "last a nonzero time"),
    ("5\nfive\n", "down.trace:2: expected a delivery opportunity's time in whole milliseconds"),
    ("", "opportunities"),
])
def test_a_bad_trace_is_refused_naming_file_line_and_key(tmp_path: Path, trace: str, words: str) -> None:
    with pytest.raises(ConfigError) as err:
        load(tmp_path, trace)
    assert "link.down.bandwidth" in str(err.value) and words in str(err.value), str(err.value)


def test_the_emulator_refuses_what_mahimahi_refuses(tmp_path: Path) -> None:
    """The emulator's own reading (a decreasing time; a blank line, which mahimahi refuses too)."""
    emulator = Path(__file__).resolve().parent.parent / "build" / "bin" / "squall-emulator"
    sc = load(tmp_path, "5\n6\n")
    text = emulator_config.render(sc.cells[0].link, emulator_config.EmulatorRun(1, 0, "0" * 16, Path("/dev/null")))
    for trace, message in (("5\n\n6\n", "down.trace:2: expected a delivery opportunity's time"),
                           ("5\n3\n", "down.trace:2: times must be non-decreasing")):
        (tmp_path / "down.trace").write_text(trace)
        proc = subprocess.run([str(emulator), "--check", "-"], input=text, capture_output=True, text=True)
        assert proc.returncode == 2 and message in proc.stderr, proc.stderr


def test_the_shipped_trace_is_what_its_generator_writes() -> None:
    traces = SCENARIOS / "traces"
    out = subprocess.run([sys.executable, str(traces / "gen_lte_driving.py")], capture_output=True, text=True,
                         check=True).stdout
    assert out == (traces / "lte-driving.trace").read_text()
