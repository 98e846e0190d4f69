"""The `[flows]` section: the named traffic flows of a scenario (docs/runner.md).

    [flows.web]
    kind = "http"            # http | bulk | udp | command | probe | flent
    workload = "s+2s"        # a label of workloads.toml, or objects = [6288, 2096, 2096]
    http = "1.0"             # "1.0" (parallel = 4) | "1.1" (persistent = 1|2, pipeline)
    start = "0s"             # offset from the emulator's start command (t = 0)
    dscp = 0                 # or tos = 0..255

`parse_flows_section` makes the cell's `flows`, a tuple of HttpFlow / BulkFlow / UdpFlow /
CommandFlow / ProbeFlow / FlentFlow in file order. Every mistake is a ConfigError naming the key path (`flows.web.http`).

The parts: base.py (FlowBase, the questions every kind answers: parsing, running, ETA, `show`
line, metrics), one file per kind (http.py, bulk.py, udp.py, command.py, probe.py, flent.py; sender_receiver.py is
what bulk and udp share), registry.py (the one list of kinds, and the keys every kind has),
running.py (readiness, link packets, paced streams), values.py (the values keys take).
testbed/run/ asks a flow; it never tests a flow's kind. Adding a kind: docs/architecture.md.
"""
from testbed.scenario.flows.base import FlowBase
from testbed.scenario.flows.bulk import BulkFlow
from testbed.scenario.flows.command import COMMAND_PLACEHOLDERS, CommandFlow
from testbed.scenario.flows.flent import FlentFlow
from testbed.scenario.flows.http import HttpFlow
from testbed.scenario.flows.probe import ProbeFlow
from testbed.scenario.flows.registry import FLOW_TYPES, KINDS, Flow, parse_flow, parse_flows_section
from testbed.scenario.flows.running import LinkPackets, PacedStream, Readiness
from testbed.scenario.flows.udp import UdpFlow

__all__ = ["COMMAND_PLACEHOLDERS", "FLOW_TYPES", "KINDS", "BulkFlow", "CommandFlow", "FlentFlow", "Flow", "FlowBase", "HttpFlow",
           "LinkPackets", "PacedStream", "ProbeFlow", "Readiness", "UdpFlow", "parse_flow", "parse_flows_section"]
