"""Scenario files: profiles, matrix expansion, and one clear error per mistake."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from testbed.scenario import loader as scenario
from testbed.errors import ConfigError
from testbed.profiles import ProfileSet
from testbed.scenario.tolerances import Tolerances, share_text

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
    from testbed.scenario.link_section import parse_channel, parse_link
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
    ("uniform low above high", '[link]\nprofile = "r2"\nchannel = { good = "uniform(3s, 1s)", bad = "fixed(1s)" }', "link.channel.good", "min <= max, got 'uniform(3000000us, 1000000us)'"),
    ("bad distribution", '[link]\nprofile = "r2"\nchannel = { good = "normal(3s)", bad = "fixed(1s)" }', "link.channel.good", "not a distribution"),
    ("schedule not starting at zero", '[link]\nprofile = "e0"\nbandwidth = [["1s", "64kbit"]]', "link.down.bandwidth", "starting at 0s with increasing times, got '1000000us:64000bit'"),
    ("schedule ending in outage", '[link]\nprofile = "e0"\nbandwidth = [["0s", "64kbit"], ["5s", "0bit"]]', "link.down.bandwidth", "the last rate must be greater than zero"),
    ("constant bandwidth of zero", '[link]\nprofile = "e0"\nbandwidth = "0kbit"', "link.down.bandwidth", "last rate"),
    ("negative arq count", '[link]\nprofile = "e0"\narq = { retransmissions = -2 }', "link.down.arq.retransmissions", "expected a count like 3"),
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


# --- one validator: the emulator's own check decides what a link may be ---------------------

EMULATOR_RULES = [
    ("5000 ARQ retransmissions", 'arq = { retransmissions = 5000, delay = "700ms" }',
     "link.down.arq.retransmissions", "more than the limit 1000"),
    ("MTU of 67 bytes", 'mtu = "67B"', "link.down.mtu", "[68B, 65535B]"),
    ("ARQ without a delay", 'arq = { retransmissions = 2, delay = "0ms" }', "link.down.arq.delay", ">= 1 us"),
]


@pytest.mark.parametrize("mistake,line,key,words", EMULATOR_RULES, ids=[r[0] for r in EMULATOR_RULES])
def test_show_refuses_what_the_emulator_refuses_naming_the_scenario_key(tmp_path, capsys, mistake, line, key, words):
    from testbed.cli import main

    path = write(tmp_path, HEAD + f'[link]\nprofile = "e0"\n{line}\n')
    assert main(["show", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}: {key}: " in err and words in err, err


@pytest.mark.parametrize("retransmissions,delay", [(0, "0ms"), (2, "0ms"), (2, "1us"), (1000, "700ms"), (1001, "700ms")])
def test_the_loader_and_the_emulator_judge_arq_alike(tmp_path, retransmissions, delay):
    """The loader refuses a link exactly when `squall-emulator --check` refuses its rendered file."""
    import subprocess

    from testbed.scenario import emulator_config
    from testbed.paths import program_path

    path = write(tmp_path, HEAD + f'[link]\nprofile = "e0"\narq = {{ retransmissions = {retransmissions}, '
                                  f'delay = "{delay}" }}\n')
    try:
        scenario.load(path)
        loader_accepts = True
    except ConfigError:
        loader_accepts = False
    link = scenario.load(write(tmp_path, HEAD + 'link = "e0"\n')).cells[0].link
    down = link.down.__class__(**{**link.down.__dict__, "arq_retransmissions": retransmissions,
                                  "arq_delay_us": 0 if delay == "0ms" else 1 if delay == "1us" else 700_000})
    rendered = emulator_config.render(link.__class__(link.name, link.channel, down, link.up),
                                      emulator_config.EmulatorRun(1, 1, "0" * 16, tmp_path / "log"))
    checked = subprocess.run([str(program_path("squall-emulator")), "--check", "-"], input=rendered,
                             capture_output=True, text=True)
    assert loader_accepts == (checked.returncode == 0), checked.stderr


def test_timing_tolerance_defaults_to_a_millisecond_and_must_be_a_positive_time(tmp_path):
    base = 'seed = 1\nlink = "e0"\n'
    assert load(tmp_path, base).tolerances == Tolerances(1000, 0.01)
    assert load(tmp_path, base + 'timing_tolerance = "250us"\n').tolerances.timing_us == 250
    assert load(tmp_path, base + 'cpu_wait_tolerance = 0.05\n').tolerances == Tolerances(1000, 0.05)
    with pytest.raises(ConfigError, match="timing_tolerance: must be greater than zero"):
        load(tmp_path, base + 'timing_tolerance = "0ms"\n')
    with pytest.raises(ConfigError, match="timing_tolerance: 1 is not a time with a unit"):
        load(tmp_path, base + 'timing_tolerance = 1\n')
    for bad in ("0", "-0.5", "101", '"1%"', "true"):
        with pytest.raises(ConfigError, match="cpu_wait_tolerance: .*expected a share of the flow's run time"):
            load(tmp_path, base + f'cpu_wait_tolerance = {bad}\n')
    # as squall show and the degraded reason say it
    assert [share_text(x) for x in (0.01, 1, 100)] == ["1 %", "100 %", "100 × the run time"]


def test_the_emulators_router_keys_name_the_scenarios_router_of_their_direction():
    from testbed.scenario.link_check import scenario_key

    assert scenario_key("down.router.default") == "router.default"
    assert scenario_key("up.router.default") == "router.up.default"
    assert scenario_key("up.router") == "router.up"
    assert scenario_key("up.mtu") == "link.up.mtu"
