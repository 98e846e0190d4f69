"""The [router] section inside a scenario: the loader's typed cell, link rate, profiles."""
from __future__ import annotations

import pytest

from testbed.scenario import loader as scenario
from testbed.errors import ConfigError
from testbed.router.disciplines.pfifo import PfifoQueue
from testbed.scenario.router_section import parse_router_section


def _load(tmp_path, body: str):
    path = tmp_path / "x.toml"
    path.write_text('seed = 1\nlink = "e0-384"\n' + body)
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
    router = parse_router_section({"profile": "saarto"}, "x.toml: router", cell.link.down, tmp_path)
    assert router.classes[0].queue == PfifoQueue(20)
    router = parse_router_section({"profile": "iip-red", "engine": "emulator"}, "x.toml: router", cell.link.down, tmp_path)
    assert (router.engine, router.rate_bps, router.classes[0].queue.bandwidth_bps) == ("emulator", 1_000_000, 384_000)
    with pytest.raises(ConfigError, match=r"x.toml: router.profile: unknown routers profile 'nope'"):
        parse_router_section({"profile": "nope"}, "x.toml: router", cell.link.down, tmp_path)
