"""The `flent` flow kind (testbed/scenario/flows/flent.py) without root: its keys, the tests it
refuses and why, Flent's command line and irtt's server, and the analysis of a Flent data file
(analysis/metrics/flent.py)."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from analysis.join.flows import FlowSpec
from analysis.metrics.flent import flent_values
from testbed.errors import ConfigError
from testbed.scenario.flows import FlentFlow, parse_flows_section


def parse(**keys: object) -> FlentFlow:
    (flow,) = parse_flows_section({"f": {"kind": "flent", **keys}}, "x.toml: flows")
    assert isinstance(flow, FlentFlow)
    return flow


def test_a_flent_flow_runs_flents_test_against_irtts_server_at_the_server_host() -> None:
    flow = parse(test="ping", length="5s", step="100ms")
    assert flow.hosts() == ("mobile", "fixed") and flow.port(0) == flow.port(3) == 2112
    assert flow.passive_argv(str, "198.18.0.1:2112", Path("l")) == ["irtt", "server", "-b", "198.18.0.1:2112",
                                                                   "-i", "0"]
    assert flow.active_argv(str, "198.18.0.1:2112", offset_us=0, log=Path("/rep/f.client.log"), timeout_us=1) == [
        "flent", "ping", "-H", "198.18.0.1", "-l", "5", "-s", "0.1", "-D", "/rep", "-t", "f"]
    assert flow.describe().startswith("f: flent, Flent's ping test (ping (ICMP) and irtt (UDP)) for 5 s, a sample "
                                      "every 100 ms; client at the mobile host")
    assert parse(test="ping").length_us == 10_000_000


@pytest.mark.parametrize("keys, key, words", [
    ({}, "test", "missing"),
    ({"test": "rrul"}, "test", "Flent's test 'rrul' needs netperf, which Debian main does not package"),
    ({"test": "voip"}, "test", "needs D-ITG"),
    ({"test": "ping", "length": "2500ms"}, "length", "whole seconds"),
    ({"test": "ping", "length": "2s", "step": "3s"}, "step", "to the length"),
    ({"test": "ping", "client": ["flent"]}, "client", "unknown key"),
])
def test_flent_mistakes_name_the_key_and_the_missing_program(keys: dict, key: str, words: str) -> None:
    with pytest.raises(ConfigError) as e:
        parse(**keys)
    assert f"flows.f.{key}" in str(e.value) and words in str(e.value)
    if key == "test" and keys:
        assert "tests it runs: ping" in str(e.value)


def test_the_series_statistics_are_of_flents_measurements(tmp_path: Path) -> None:
    data = {"raw_values": {"Ping (ms) UDP": [{"t": 1.0, "val": 40.0}, {"t": 1.2, "val": 44.0}, {"t": 1.4}],
                           "Ping (ms) ICMP": []},
            "results": {"Ping (ms) UDP": [40.0, 41.0, 42.0, 43.0, 44.0]}}       # interpolated: not used
    with gzip.open(tmp_path / "ping-2026-01-01T000000.000000.f.flent.gz", "wt") as f:
        json.dump(data, f)
    warnings: list[str] = []
    values = flent_values(tmp_path, [FlowSpec("f", "flent"), FlowSpec("g", "flent")], warnings)
    assert values["f.flent.ping_ms_udp.n"] == 2 and values["f.flent.ping_ms_udp.median"] == 42.0
    assert values["f.flent.ping_ms_icmp.n"] == 0 and values["f.flent.ping_ms_icmp.median"] is None
    assert warnings == [f"{tmp_path}: no *.g.flent.gz: Flent wrote no data file for flow g"]


def test_one_flent_flow_per_cell() -> None:
    with pytest.raises(ConfigError) as e:
        parse_flows_section({"a": {"kind": "flent", "test": "ping"}, "b": {"kind": "flent", "test": "ping"}},
                            "x.toml: flows")
    assert str(e.value) == ("x.toml: flows.b: a second flent flow (beside a): both would need port 2112 at their "
                            "server host; one flent flow per cell")
