"""A channel's start (docs/scenarios.md): `fresh` begins every replication with a whole
period of its initial state, `running` at a random point of a long run of the channel, as a
channel that had been running before the test started. Checked through the real emulator's
--print-timeline on the file squall renders for it."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import require_programs
from testbed.paths import bin_dir
from testbed.errors import ConfigError
from testbed.scenario.emulator_config import EmulatorRun, render
from testbed.scenario import loader

SCENARIO = """
seed = 5
[link]
profile = "r0"
channel = {{ good = "fixed(8s)", bad = "fixed(2s)", start = "{start}" }}
[flows.web]
kind = "http"
workload = "s+2s"
"""


def first_periods(tmp_path: Path, start: str, replications: int) -> list[tuple[str, float]]:
    """Per replication, the state at t = 0 and when it first changes (s)."""
    path = tmp_path / f"{start}.toml"
    path.write_text(SCENARIO.format(start=start))
    link = loader.load(path).cells[0].link
    found = []
    for rep in range(1, replications + 1):
        run = EmulatorRun(seed=5, replication=rep, token="0123456789abcdef", log_path=tmp_path / "e.log",
                          listen="127.0.0.1:0")
        conf = tmp_path / f"{start}-{rep}.conf"
        conf.write_text(render(link, run))
        done = subprocess.run([str(bin_dir() / "squall-emulator"), "--print-timeline", "30s", str(conf)],
                              capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, done.stderr
        lines = [line.split() for line in done.stdout.splitlines()]
        assert lines[0][0] == "0"
        found.append((lines[0][1], int(lines[1][0]) / 1e6))
    return found


def test_a_fresh_channel_starts_every_replication_with_a_whole_good_period(tmp_path: Path) -> None:
    require_programs("squall-emulator")
    assert set(first_periods(tmp_path, "fresh", 10)) == {("good", 8.0)}


def test_a_running_channel_is_met_at_a_random_point_of_its_cycle(tmp_path: Path) -> None:
    require_programs("squall-emulator")
    periods = first_periods(tmp_path, "running", 60)
    bad = [end for state, end in periods if state == "bad"]
    good = [end for state, end in periods if state == "good"]
    # bad at t = 0 with probability 0.2; the rest of a period uniform on its length
    assert 3 <= len(bad) <= 24
    assert all(0 < end <= 2.0 for end in bad) and all(0 < end <= 8.0 for end in good)
    assert 2.5 < sum(good) / len(good) < 5.5
    assert len(set(periods)) == len(periods)      # each replication its own phase
    assert first_periods(tmp_path, "running", 3) == periods[:3]    # and the same every time


def test_a_trace_has_no_start(tmp_path: Path) -> None:
    (tmp_path / "t.trace").write_text("good 2s\nbad 1s\n")
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO.format(start="running").replace(
        'good = "fixed(8s)", bad = "fixed(2s)", ', 'trace = "t.trace", '))
    with pytest.raises(ConfigError, match="link.channel.start: a trace replaces good, bad, initial and start"):
        loader.load(path)
