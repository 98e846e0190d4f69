"""The [router] section inside a scenario: the loader's typed cell, link rate, profiles."""
from __future__ import annotations

import pytest

from testbed.scenario import describe, loader as scenario
from testbed.errors import ConfigError
from testbed.router.directions import Routers
from testbed.router.disciplines.pfifo import PfifoQueue
from testbed.router.engines import in_emulator
from testbed.scenario.router_section import parse_router_section


def _load(tmp_path, body: str, link: str = 'link = "e0-384"\n'):
    path = tmp_path / "x.toml"
    path.write_text('seed = 1\n' + link + body)
    return scenario.load(path)


def test_the_loader_parses_router_with_the_downlink_rate(tmp_path):
    cell = _load(tmp_path, '[router]\nqueue = { discipline = "pfifo", limit = 20 }\n').cells[0]
    router = cell.router
    assert router.rate_bps == 384_000
    assert router.classes[0].queue == PfifoQueue(20)


def test_loader_errors_name_the_scenario_file_and_key(tmp_path):
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, '[router]\nqueue = { discipline = "sfq" }\n')
    assert str(info.value) == (f"{tmp_path / 'x.toml'}: router.queue.discipline: unknown discipline 'sfq'; "
                               "expected one of pfifo, bfifo, red, head_drop, codel, fq_codel, pie, dualpi2")


def test_profiles_with_overrides(tmp_path):
    (tmp_path / "routers.toml").write_text(
        '[saarto]\ndescription = "Saarto 2003: 20 packets, tail drop"\n'
        'queue = { discipline = "pfifo", limit = 20 }\n'
        '[iip-red]\nrate = "1Mbit"\n'
        'queue = { discipline = "red", limit = "11000B", min = "2000B", max = "6000B", avpkt = "500B", ecn = true }\n')
    cell = _load(tmp_path, '').cells[0]
    router = parse_router_section({"profile": "saarto"}, "x.toml: router", cell.link, tmp_path).down
    assert router.classes[0].queue == PfifoQueue(20)
    router = parse_router_section({"profile": "iip-red", "engine": "emulator"}, "x.toml: router", cell.link, tmp_path).down
    assert (router.engine, router.rate_bps, router.classes[0].queue.bandwidth_bps) == ("emulator", 1_000_000, 384_000)
    with pytest.raises(ConfigError, match=r"x.toml: router.profile: unknown routers profile 'nope'"):
        parse_router_section({"profile": "nope"}, "x.toml: router", cell.link, tmp_path).down


# --- [router.up]: the uplink's router --------------------------------------------------------

UP_PFIFO = '[router.up]\nqueue = { discipline = "pfifo", limit = 5 }\n'


def test_router_up_alone_is_an_uplink_router_in_the_emulator_and_no_downlink_router(tmp_path):
    path = tmp_path / "x.toml"
    path.write_text('seed = 1\n[link]\nprofile = "e0-384"\n[link.up]\nbandwidth = "64kbit"\n' + UP_PFIFO)
    cell = scenario.load(path).cells[0]
    assert cell.router is None
    up = cell.router_up
    # the engine is the emulator's (the only one in front of the uplink), the rate the uplink's
    assert (up.engine, up.rate_bps, up.classes[0].queue) == ("emulator", 64_000, PfifoQueue(5))
    assert cell.routers.items() == (("up", up),)
    lines = describe.cell_lines(cell)
    assert "  router: none on the downlink (packets go straight to the link)" in lines
    assert "  router.up (uplink): engine emulator, 64 kbit/s, one class, no DiffServ" in lines


def test_router_and_router_up_are_two_routers_and_router_keeps_its_meaning(tmp_path):
    cell = _load(tmp_path, '[router]\nengine = "emulator"\nqueue = { discipline = "pfifo", limit = 20 }\n'
                           + UP_PFIFO).cells[0]
    assert cell.router.classes[0].queue == PfifoQueue(20)
    assert cell.router_up.classes[0].queue == PfifoQueue(5)
    # without [router.up] nothing is on the uplink (every existing scenario)
    assert _load(tmp_path, '[router]\nqueue = { discipline = "pfifo", limit = 20 }\n').cells[0].router_up is None


def test_a_tc_downlink_router_and_an_uplink_router_in_the_emulator(tmp_path):
    cell = _load(tmp_path, '[router]\nqueue = { discipline = "pfifo", limit = 20 }\n' + UP_PFIFO).cells[0]
    assert (cell.router.engine, cell.router_up.engine) == ("tc", "emulator")
    # only the uplink's goes into the emulator's configuration
    assert in_emulator(cell.routers) == Routers(up=cell.router_up)


def test_router_up_takes_a_profile_by_name_or_with_overrides(tmp_path):
    cell = _load(tmp_path, '[router]\nup = "saarto"\n').cells[0]
    assert (cell.router, cell.router_up.classes[0].queue) == (None, PfifoQueue(20))
    cell = _load(tmp_path, '[router.up]\nprofile = "iip-red"\nqueue = { ecn = true }\n').cells[0]
    assert (cell.router_up.rate_bps, cell.router_up.classes[0].queue.ecn) == (1_000_000, True)


@pytest.mark.parametrize("body, key, message", [
    ('[router.up]\nengine = "tc"\nqueue = { discipline = "pfifo", limit = 5 }\n', "router.up.engine",
     "is 'tc'; the uplink's router runs only in the emulator"),
    ('[router.up]\nqueue = { discipline = "pfifo", limit = 0 }\n', "router.up.queue.limit", "is not a positive whole number of packets"),
    ('[router.up]\nqueue = { discipline = "pfifo", limit = 5 }\nfoo = 1\n', "router.up.foo", "unknown key"),
    ('[router.up]\nprofile = "nope"\n', "router.up.profile", "unknown routers profile 'nope'"),
    ('[router]\nup = 3\n', "router.up", "expected a router profile name or a table"),
    ('[link]\nprofile = "e0-384"\n[link.up]\nsend_buffer = "500B"\n' + UP_PFIFO, "link.up.send_buffer",
     "below the MTU"),
    ('[router.up]\nclasses = { A = { rate = "8kbit", queue = { discipline = "pfifo", limit = 5 } } }\n'
     'default = "A"\nfilters = [{ class = "A", src = "198.18.1.0/24" }]\n', "router.up.filters[0].src",
     "not supported by the emulator engine"),
])
def test_router_up_errors_name_the_key(tmp_path, body, key, message):
    with pytest.raises(ConfigError, match=message) as info:
        _load(tmp_path, body, "" if body.startswith("[link]") else 'link = "e0-384"\n')
    assert info.value.where == f"{tmp_path / 'x.toml'}: {key}"
