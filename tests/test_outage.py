"""Outages in scenarios (`[link] outages = { every = DIST, length = DIST }`, docs/links.md): the
link's process goes to the emulator's [channel], a direction's own to its section, and what the
emulator refuses is named by the scenario's key. The model: emulator/tests/test_outage.c; the
ACK compression after an outage: tests/test_outage_netns.py."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from testbed.errors import ConfigError
from testbed.scenario import emulator_config
from testbed.scenario import loader as scenario

HEAD = """
name = "t"
seed = 7

[link]
bandwidth = "64kbit"
delay = "300ms"
mtu = "576B"
arq = { retransmissions = 10, delay = "700ms" }
"""


def load(tmp_path: Path, text: str) -> scenario.Scenario:
    path = tmp_path / "s.toml"
    path.write_text(textwrap.dedent(HEAD + text))
    return scenario.load(path)


def rendered(sc: scenario.Scenario) -> str:
    return emulator_config.render(sc.cells[0].link, emulator_config.EmulatorRun(1, 0, None, Path("x.log")))


def test_the_link_outages_and_a_direction_own_are_rendered(tmp_path: Path) -> None:
    sc = load(tmp_path, 'outages = { every = "exponential(60s, min=10s, max=600s)", length = "uniform(5s, 30s)" }\n'
                        '[link.up]\noutages = { every = "fixed(20s)", length = "fixed(1s)" }\n')
    text = rendered(sc)
    channel = text[text.index("[channel]"):text.index("[down]")]
    up = text[text.index("[up]"):]
    assert "outage_every = exponential(60000000us, min=10000000us, max=600000000us)" in channel
    assert "outage_length = uniform(5000000us, 30000000us)" in channel
    assert "outage_every = fixed(20000000us)" in up and "outage_length = fixed(1000000us)" in up
    assert "outage" not in text[text.index("[down]"):text.index("[up]")]


@pytest.mark.parametrize("line,key,words", [
    ('outages = { every = "fixed(20s)" }', "link.outages.length", "missing"),
    ('outages = { every = "uniform(3s, 1s)", length = "fixed(1s)" }', "link.outages.every", "got 'uniform(3000000us, 1000000us)'"),
    ('[link.down]\noutages = { every = "fixed(2s)", length = "fixed(0s)" }', "link.down.outages.length",
     "got 'fixed(0us)'"),
])
def test_mistakes_name_the_scenario_key(tmp_path: Path, line: str, key: str, words: str) -> None:
    with pytest.raises(ConfigError) as err:
        load(tmp_path, line + "\n")
    assert f"{key}: " in str(err.value) and words in str(err.value), str(err.value)
