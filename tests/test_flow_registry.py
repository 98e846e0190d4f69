"""The flow kinds are declared once: each kind's class (testbed/scenario/flows/) listed in its
registry, with what the analysis knows of it in analysis/flows.py's FLOW_KINDS, and nothing else
in testbed/ tells kinds apart."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import pytest

from analysis.join.flows import FLOW_KINDS, KindTraits, match_flow, parse_workloads
from testbed.errors import ConfigError
from testbed.run.status import main_metrics
from testbed.scenario.flows import FLOW_TYPES, FlowBase, LinkPackets, parse_flows_section
from testbed.scenario.flows import registry
from testbed.scenario.flows.running import UDP

REPO = Path(__file__).resolve().parent.parent


def test_the_testbed_and_the_analysis_know_the_same_kinds_by_the_same_programs() -> None:
    assert set(FLOW_TYPES) == set(FLOW_KINDS)
    for kind, flow_type in FLOW_TYPES.items():
        assert flow_type.kind == kind and flow_type.ANALYSIS is FLOW_KINDS[kind]
        # the analysis tells a generator's summaries apart by the program the runner ran
        assert flow_type.PROGRAM == (FLOW_KINDS[kind].tool or "")


def test_a_kinds_keys_are_its_own_and_the_common_ones() -> None:
    for kind, flow_type in FLOW_TYPES.items():
        with pytest.raises(ConfigError) as e:
            parse_flows_section({"f": {"kind": kind, "nonsense": 1}}, "x.toml: flows")
        allowed = set(registry.COMMON_KEYS | flow_type.KEYS) - ({"workload"} if flow_type.PROFILE_KIND is None else set())
        assert str(e.value).endswith(f"expected one of {', '.join(sorted(allowed))}")


@dataclass(frozen=True)
class ToyFlow(FlowBase):
    """A kind that exists only here: what adding a kind takes is its class and its registry entry."""
    datagrams: int = 1
    kind: str = "toy"

    KEYS = frozenset({"datagrams"})
    PROFILE_KIND = None
    WORKLOAD_TYPE = None
    ANALYSIS = KindTraits("squall-toy", ("udp",))
    TITLE = "toy"
    PROGRAM = "squall-toy"
    ROLES = ("sender", "receiver")
    ACTIVE_SENDS = True
    PORT_BASE = 9001
    METRICS_ROLE = "receiver"

    @classmethod
    def from_table(cls, table: Mapping[str, Any], where: str, workload: None, common: dict[str, Any]) -> "ToyFlow":
        return cls(**common, datagrams=int(table.get("datagrams", 1)))

    @property
    def workload(self) -> Any:
        return None

    def _active_args(self, peer: str, timeout_us: int) -> list[str]:
        return ["--to", peer, "--datagrams", str(self.datagrams)]

    def passive_argv(self, program: Any, listen: str, log: Path, *, peer: str = "", timeout_us: int = 0) -> None:
        return None

    def log_files(self) -> list[tuple[str, str]]:
        return []

    def link_packets(self, index: int) -> list[LinkPackets]:
        return [LinkPackets(self._ways()[0], "data", UDP, self.tos, None, self.port(index))]

    def _what(self) -> str:
        return f"{self.datagrams} datagrams"

    @staticmethod
    def _metrics(summary: Mapping[str, Any]) -> dict[str, float]:
        return {"received": float(summary["received"])} if "received" in summary else {}


def test_a_new_kind_is_its_class_and_its_registry_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(FLOW_TYPES, "toy", ToyFlow)
    monkeypatch.setitem(FLOW_KINDS, "toy", ToyFlow.ANALYSIS)
    (toy,) = parse_flows_section({"t": {"kind": "toy", "datagrams": 3, "start": "2s", "dscp": 46}}, "x.toml: flows")
    assert toy == ToyFlow(name="t", start_us=2_000_000, tos=46 << 2, direction="down", datagrams=3)
    assert toy.describe() == ("t: toy, 3 datagrams; sender at the fixed host, receiver at the mobile host (down); "
                              "start 2 s; DSCP 46")
    assert toy.active_argv(lambda p: f"/bin/{p}", "198.18.0.2:9001", offset_us=5, log=Path("t.log"),
                           timeout_us=1) == ["/bin/squall-toy", "--to", "198.18.0.2:9001", "--datagrams", "3",
                                             "--start-offset", "5us", "--tos", "184", "--log", "t.log"]
    assert main_metrics({"kind": "toy", "receiver": {"summary": {"received": 3}}}) == {"received": 3.0}
    # the analysis matches its UDP flow by the port the runner recorded
    specs = parse_workloads({"t": {"kind": "toy", "port": 9001}}, "workloads.json")
    assert match_flow(specs, "udp", ("198.18.0.1", 40000), ("198.18.0.2", 9001)).kind == "toy"
    assert match_flow(specs, "tcp", ("198.18.0.1", 40000), ("198.18.0.2", 9001)).kind == "tcp"


# a flow's kind told apart outside the kinds' own package: by its class or by its name
KIND_TEST = re.compile(r"isinstance\([^)]*\b(Http|Bulk|Udp|Command)Flow\b|"
                       r"\.kind\s*[!=]=\s*\"(http|bulk|udp|command)\"|\.kind\s+in\s+\(")


def test_nothing_in_testbed_outside_the_flow_kinds_tests_a_flows_kind() -> None:
    flows_package = REPO / "testbed" / "scenario" / "flows"
    found = [f"{path.relative_to(REPO)}:{n}: {line.strip()}"
             for path in sorted((REPO / "testbed").rglob("*.py")) if flows_package not in path.parents
             for n, line in enumerate(path.read_text().splitlines(), 1) if KIND_TEST.search(line)]
    assert found == []
