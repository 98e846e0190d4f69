"""Scenario files: profiles, matrix expansion, and one clear error per mistake."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from testbed import scenario
from testbed.errors import ConfigError
from testbed.profiles import ProfileSet

HEAD = """
name = "t"
seed = 7
"""
BASE = HEAD + 'replications = 3\nlink = "r2"\n'


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "s.toml"
    path.write_text(textwrap.dedent(text))
    return path


def load(tmp_path: Path, text: str) -> scenario.Scenario:
    return scenario.load(write(tmp_path, text))


def test_profile_resolves_base_chain_and_overrides(tmp_path):
    sc = load(tmp_path, HEAD + """
        [link]
        profile = "r2"
        channel = "iip-short"
        arq = { retransmissions = 3 }
        [link.up]
        bandwidth = "32kbit"
        """)
    (cell,) = sc.cells
    down, up = cell.link.down, cell.link.up
    assert (down.rate_bps, up.rate_bps) == (64_000, 32_000)
    assert down.delay_us == up.delay_us == 300_000
    assert down.error_bad == 0.83 and down.error_good == 0.0
    # the override changed one key of the nested arq table, the delay comes from r0
    assert down.arq_retransmissions == 3 and down.arq_delay_us == 700_000
    assert cell.link.channel.good.kind == "uniform"
    assert (cell.link.channel.good.a_us, cell.link.channel.good.b_us) == (2_800_000, 3_500_000)


def test_matrix_crosses_axes_in_order_with_readable_ids(tmp_path):
    sc = load(tmp_path, BASE.replace('"r2"', '"e0"') + """
        [matrix]
        link = ["e0", "r4"]
        channel = ["iip-short", "iip-long"]
        [[matrix.rate]]
        label = "slow"
        set = { "link.bandwidth" = "64kbit" }
        [[matrix.rate]]
        label = "fast"
        set = { "link.bandwidth" = "384kbit", "link.down.delay" = "100ms" }
        """)
    assert len(sc.cells) == 8
    ids = [c.cell_id for c in sc.cells]
    assert ids[0] == "link-e0_channel-iip-short_rate-slow"
    assert ids[-1] == "link-r4_channel-iip-long_rate-fast"
    fast = sc.cells[-1]
    assert fast.link.down.rate_bps == 384_000 and fast.link.down.delay_us == 100_000
    assert fast.link.up.delay_us == 300_000
    assert fast.link.down.arq_retransmissions == 4


def test_every_link_profile_validates():
    links = ProfileSet.load("links")
    channels = ProfileSet.load("channels")
    from testbed.link import parse_channel, parse_link
    # the studies' links and channels at least: an empty profile set would pass vacuously
    assert {"e0", "r0", "r2", "r4", "arq-low", "arq-medium", "arq-high"} <= set(links.names())
    assert {"iip-short", "iip-long", "saarto"} <= set(channels.names())
    for channel in channels.names():
        parse_channel(channels.resolve(channel, "t"), f"channels.{channel}")
    for name in links.names():
        parse_link(links.resolve(name, "t"), f"links.{name}", name,
                   parse_channel(channels.resolve("iip-long", "t"), "c"))


E0 = 'link = "e0"\n'
BAD = [
    # (mistake, scenario text after HEAD, expected key in message, expected words)
    ("unknown top-level key", E0 + 'colour = "blue"', "colour", "unknown key"),
    ("missing seed", None, "seed", "missing"),
    ("link missing", "replications = 2", "link", "missing"),
    ("negative replications", E0 + "replications = -1", "replications", ">= 1"),
    ("unknown link profile", '[link]\nprofile = "r9"', "link.profile", "unknown links profile"),
    ("lossy link without channel", '[link]\nprofile = "r2"', "link.channel", "needs a channel"),
    ("unknown channel profile", '[link]\nprofile = "r2"\nchannel = "stormy"', "link.channel.profile", "unknown channels profile"),
    ("time without unit", '[link]\nprofile = "e0"\ndelay = "300"', "link.down.delay", "number and a unit"),
    ("unknown unit", '[link]\nprofile = "e0"\nbandwidth = "64kbps"', "link.down.bandwidth", "unknown unit"),
    ("probability above one", '[link]\nprofile = "e0"\nchannel = "iip-short"\nerror = { bad = 1.5 }', "link.down.error.bad", "probability"),
    ("unknown link key", '[link]\nprofile = "e0"\nlatency = "1ms"', "link.latency", "unknown key"),
    ("unknown direction key", '[link]\nprofile = "e0"\n[link.down]\nspeed = "1kbit"', "link.down.speed", "unknown key"),
    ("send buffer below MTU", '[link]\nprofile = "e0"\nsend_buffer = "500B"', "link.down.send_buffer", "at least 576"),
    ("uniform low above high", '[link]\nprofile = "r2"\nchannel = { good = "uniform(3s, 1s)", bad = "fixed(1s)" }', "link.channel.good", "low <= high"),
    ("bad distribution", '[link]\nprofile = "r2"\nchannel = { good = "normal(3s)", bad = "fixed(1s)" }', "link.channel.good", "not a distribution"),
    ("schedule not starting at zero", '[link]\nprofile = "e0"\nbandwidth = [["1s", "64kbit"]]', "link.down.bandwidth[0]", "start at"),
    ("schedule ending in outage", '[link]\nprofile = "e0"\nbandwidth = [["0s", "64kbit"], ["5s", "0bit"]]', "link.down.bandwidth[1]", "last rate"),
    ("negative arq count", '[link]\nprofile = "e0"\narq = { retransmissions = -2 }', "link.down.arq.retransmissions", "whole number"),
    ("matrix axis without path", E0 + '[matrix]\nspeed = ["1", "2"]', "matrix.speed", "unknown axis"),
    ("matrix duplicate labels", E0 + '[matrix]\nlink = ["e0", "e0"]', "matrix.link", "labels must differ"),
    ("matrix mixed forms", E0 + '[matrix]\nx = ["a", { label = "b", set = { "link.delay" = "1ms" } }]', "matrix.x", "mixes"),
    ("in_order not boolean", '[link]\nprofile = "e0"\nin_order = "yes"', "link.down.in_order", "true or false"),
]


@pytest.mark.parametrize("mistake,text,key,words", BAD, ids=[b[0] for b in BAD])
def test_bad_input_names_file_key_and_expectation(tmp_path, mistake, text, key, words):
    # each text is the whole scenario after HEAD (None: HEAD without its seed)
    body = E0 if text is None else HEAD + text
    path = write(tmp_path, body)
    with pytest.raises(ConfigError) as err:
        scenario.load(path)
    message = str(err.value)
    assert str(path) in message
    assert key in message, message
    assert words in message, message


def test_not_toml_names_the_file(tmp_path):
    path = write(tmp_path, "seed = = 1")
    with pytest.raises(ConfigError, match="not valid TOML"):
        scenario.load(path)


def test_cli_show_prints_cells_and_exits_2_on_error(tmp_path, capsys):
    from testbed.cli import main
    good = write(tmp_path, BASE.replace('"r2"', '"e0"') + '[matrix]\nlink = ["e0", "e0-384"]\n')
    assert main(["show", str(good)]) == 0
    out = capsys.readouterr().out
    assert "2 cells x 3 replications" in out and "[link-e0-384]" in out and "384 kbit/s" in out
    bad = tmp_path / "bad.toml"
    bad.write_text(BASE.replace("seed = 7\n", ""))
    assert main(["show", str(bad)]) == 2
    assert "seed: missing" in capsys.readouterr().err


def test_emulator_router_engine_refuses_what_it_cannot_express_at_load(tmp_path):
    import testbed.router_section  # noqa: F401  (registers the [router] parser)
    path = write(tmp_path, HEAD + E0 + """
        [router]
        engine = "emulator"
        default = "BE"
        [router.classes.EF]
        rate = "32kbit"
        priority = 0
        queue = { discipline = "pfifo", limit = 10 }
        [router.classes.BE]
        rate = "32kbit"
        priority = 1
        queue = { discipline = "pfifo", limit = 20 }
        [[router.filters]]
        class = "EF"
        src = "198.18.0.1/32"
        """)
    with pytest.raises(ConfigError) as err:
        scenario.load(path)
    assert "router.filters[0].src" in str(err.value), str(err.value)
