"""A scenario's netem table and error draws (docs/netem.md, docs/scenarios.md): netem's own
syntax per direction, rendered into the emulator's configuration, refused where tc or the
emulator would refuse it, under the scenario's key."""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import require_programs
from testbed.errors import ConfigError
from testbed.scenario.emulator_config import EmulatorRun, render
from testbed.scenario import loader

SCENARIO = """
seed = 5
[link]
profile = "r0"
channel = {{ good = "fixed(8s)", bad = "fixed(2s)"{channel} }}
netem = {{ loss = "gemodel 1% 10%" }}
[link.down]
{down}
[flows.web]
kind = "http"
workload = "s+2s"
"""


def load(tmp_path: Path, down: str = "", channel: str = ""):
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO.format(down=down, channel=channel))
    return loader.load(path).cells[0].link


def rendered(link) -> str:
    return render(link, EmulatorRun(seed=5, replication=1, token="0" * 16, log_path=Path("/dev/null")))


def test_each_direction_gets_netems_keys_and_a_directions_table_replaces_the_links(tmp_path: Path) -> None:
    require_programs("squall-emulator")
    link = load(tmp_path, down='netem = { delay = "100ms   10ms 25%", distribution = "pareto", '
                               'reorder = "5%", gap = 3, duplicate = "1%", corrupt = "0.1% 10%" }')
    text = rendered(link)
    down, up = text.split("[down]")[1].split("[up]")
    assert "netem_delay = 100ms 10ms 25%\nnetem_distribution = pareto\nnetem_reorder = 5%\nnetem_gap = 3\n" \
           "netem_duplicate = 1%\nnetem_corrupt = 0.1% 10%" in down
    assert "netem_loss" not in down               # the direction's table replaces the link's
    assert "netem_loss = gemodel 1% 10%" in up
    assert "error_draws" not in text              # per frame: the Seawind mode, unwritten


def test_error_draws_by_time_reach_the_emulator_with_their_grid(tmp_path: Path) -> None:
    require_programs("squall-emulator")
    text = rendered(load(tmp_path, channel=', error_draws = "by_time", error_grid = "2ms"'))
    assert "[channel]" in text and "error_draws = by_time\nerror_grid = 2000us" in text


@pytest.mark.parametrize("down, key, says", [
    ('netem = { reorder = "25%" }', "link.down.netem.reorder", "reordering needs a delay"),
    ('netem = { delay = "10ms", distribution = "normal" }', "link.down.netem.distribution", "needs a jitter"),
    ('netem = { loss = "gemodel 101%" }', "link.down.netem.loss", "expected netem's loss"),
    ('netem = { loss = "state 70% 50% 60%" }', "link.down.netem.loss", "p31 + p32 <= 1"),
    ('netem = { gap = 5 }', "link.down.netem.gap", "needs a reorder probability"),
    ('netem = { jitter = "1ms" }', "link.down.netem.jitter", "unknown key"),
    ('netem = { duplicate = 0.01 }', "link.down.netem.duplicate", "expected netem's text"),
])
def test_what_tc_or_the_emulator_refuses_is_named_by_the_scenarios_key(tmp_path: Path, down: str, key: str,
                                                                       says: str) -> None:
    require_programs("squall-emulator")
    with pytest.raises(ConfigError) as e:
        load(tmp_path, down=down)
    assert key in str(e.value) and says in str(e.value)


def test_an_unknown_error_draw_mode_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as e:
        load(tmp_path, channel=', error_draws = "by_frame"')
    assert "link.channel.error_draws" in str(e.value) and "by_time" in str(e.value)


def test_netem_outages_and_a_capacity_trace_on_one_link_reach_the_emulator_together(tmp_path: Path) -> None:
    """The three kinds of link behaviour are independent keys: a direction may replay a trace,
    have its own outages and a netem stage, the channel may draw errors by time."""
    require_programs("squall-emulator")
    (tmp_path / "down.trace").write_text("10\n20\n1500\n2000\n")
    link = load(tmp_path, channel=', error_draws = "by_time"',
                down='bandwidth = { mahimahi = "down.trace" }\n'
                     'outages = { every = "uniform(5s, 30s)", length = "fixed(2s)" }\n'
                     'netem = { duplicate = "1%" }')
    down, up = rendered(link).split("[down]")[1].split("[up]")
    assert f"bandwidth = mahimahi({tmp_path.resolve() / 'down.trace'})" in down
    assert "outage_every = uniform(5000000us, 30000000us)\noutage_length = fixed(2000000us)" in down
    assert "netem_duplicate = 1%" in down and "netem_loss = gemodel 1% 10%" in up
    assert "outage_every" not in up
