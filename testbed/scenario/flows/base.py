"""FlowBase: the questions every flow kind answers, grouped by who asks them.

- the registry and the scenario loader (registry.py): the kind's keys, its workloads.toml
  profile, how a table becomes a flow (`from_table`), the objects the loader checks;
- the replication (testbed/run/replication.py): roles and their hosts, ports, the command
  lines of its programs, their readiness, log files, summaries and how to judge their ends;
- the progress line's first ETA (testbed/run/progress.py): `planned_us`;
- `squall show` (testbed/scenario/describe.py): `describe`;
- the status table (testbed/run/status.py): `main_metrics`;
- the analysis: `ANALYSIS`, the kind's entry in analysis/flows.py's FLOW_KINDS (the analysis
  reads files only, so what it knows of a kind lives there and the kind refers to it).

The active program (HTTP client, bulk or UDP sender) starts at the flow's offset from t = 0
and its end ends the flow; the passive side (web server, receiver) listens from before t = 0.
"""
from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ClassVar, Mapping

from analysis.join.flows import FLOW_KINDS, KindTraits
from testbed.scenario.flows.running import LinkPackets, PacedStream, Readiness
from testbed.scenario.link_section import LinkConfig
from testbed.units import format_time_us
from testbed.scenario.workloads import Workload


@dataclass(frozen=True)
class FlowBase(ABC):
    """One flow of a cell; each kind (a subclass, one per file, listed in registry.py) answers
    for itself, so nothing outside the kind tests which kind it is."""
    name: str
    start_us: int               # offset from t = 0 (the emulator's START)
    tos: int                    # IP TOS byte (DSCP << 2)
    direction: str              # down: server/sender at the fixed host; up: at the mobile host

    # Each kind's constants (class variables, so not in expanded.json).
    # - its declaration (registry.py):
    KEYS: ClassVar[frozenset[str]]          # the kind's own keys, beside registry.COMMON_KEYS
    PROFILE_KIND: ClassVar[str | None]      # its `kind` in workloads.toml; None: takes no `workload`
    WORKLOAD_TYPE: ClassVar[type | None]    # what such a profile reads as (scenario/workloads.py)
    ANALYSIS: ClassVar[KindTraits]          # what the analysis knows of the kind (analysis/flows.py),
                                            # found by the kind's name (__init_subclass__)
    TITLE: ClassVar[str]                    # the kind in prose ("HTTP", "bulk", "UDP", "command")
    # - its programs:
    PROGRAM: ClassVar[str]                  # the C generator (build/bin/): ANALYSIS's tool, or ""
    ROLES: ClassVar[tuple[str, str]]        # (active, passive), as in workloads.json and file names
    ACTIVE_SENDS: ClassVar[bool]            # the active program is where the data starts (a sender)
    PORT_BASE: ClassVar[int]                # flow i (0-based, file order) uses PORT_BASE + i
    PORT_PER_FLOW: ClassVar[bool] = True    # False: every flow of the kind uses PORT_BASE (a port its
                                            # third-party program cannot be told, as Flent's irtt's)
    METRICS_ROLE: ClassVar[str]             # the role whose summary holds the main metrics
    STARTS_ITSELF: ClassVar[bool] = True    # the active program waits for --start-offset itself;
                                            # False: the replication starts it at the flow's start
    PRESTARTS: ClassVar[bool] = False       # the active program is started before t = 0 (after the
                                            # passive one is ready), prints "ready" once it is, and
                                            # starts on SIGUSR1, sent at the flow's start (a browser,
                                            # whose start-up must not count); with STARTS_ITSELF False
    FIXED_RATE: ClassVar[bool] = False      # the active program sends at its own rate whatever the
                                            # link takes (UDP), so it can overflow the link
    LANES_ONLY: ClassVar[bool] = False      # it runs on lanes only (its programs share files, and
                                            # a signal starts it): lab hosts refuse it at `check`
    OPENS_TCP: ClassVar[bool] = True        # it may open TCP connections (a drain then waits for
                                            # a lost FIN's retransmission); squall-udp does not
    SIZED_BY_BYTES: ClassVar[bool] = False  # it ends when its bytes have crossed (HTTP, bulk), so
                                            # planned_us says when it can end at the earliest

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A kind (a class whose body sets `kind`) takes what the analysis knows of it and its
        generator from FLOW_KINDS by its name, unless its body states them (a kind the analysis
        does not list, as tests/test_flow_registry.py's), so the name is written once."""
        super().__init_subclass__(**kwargs)
        if "kind" in cls.__dict__:
            cls.ANALYSIS = cls.__dict__.get("ANALYSIS") or FLOW_KINDS[cls.__dict__["kind"]]
            cls.PROGRAM = cls.__dict__.get("PROGRAM", cls.ANALYSIS.tool or "")

    # --- parsing (registry.parse_flow calls it with the keys every kind has) ---

    @classmethod
    @abstractmethod
    def from_table(cls, table: Mapping[str, Any], where: str, workload: Any, common: dict[str, Any]) -> FlowBase:
        """The flow of `table` (a [flows.NAME] table whose keys are checked to be known);
        `workload`: the profile its `workload` names (of WORKLOAD_TYPE), or None; `common`: the
        fields of FlowBase, parsed."""

    @classmethod
    def resolve_paths(cls, table: Mapping[str, Any], base_dir: Path | None) -> Mapping[str, Any]:
        """`table` with the files it names made absolute, relative to `base_dir` (the scenario
        file's directory); the kinds that name files say how."""
        return table

    def unchecked_objects(self) -> tuple[tuple[str, int], ...]:
        """(key, size) of each object the flow's server serves that parsing the flow did not check
        against MAX_SIZE_BYTES (an HTTP page's, from `objects` or a workloads.toml label): the
        scenario loader checks them, naming the key (`objects[1]`)."""
        return ()

    # --- identity ---

    @property
    def dscp(self) -> int:
        return self.tos >> 2

    @property
    @abstractmethod
    def workload(self) -> Workload:
        """The page, transfer or stream; its label is workloads.json's `workload`."""

    @property
    def workload_label(self) -> str:
        """workloads.json's `workload`: a label of workloads.toml, or `custom`."""
        return self.workload.label

    # --- running: roles, hosts, ports, command lines, readiness, logs, summaries, problems ---

    def hosts(self) -> tuple[str, str]:
        """The hosts ("fixed" or "mobile") of the active and the passive role."""
        source, sink = ("fixed", "mobile") if self.direction == "down" else ("mobile", "fixed")
        return (source, sink) if self.ACTIVE_SENDS else (sink, source)

    def port(self, index: int) -> int:
        """The port the passive side listens on, for the flow at `index` of its cell."""
        return self.PORT_BASE + (index if self.PORT_PER_FLOW else 0)

    def paced(self, index: int) -> PacedStream | None:
        """What the flow sends on a schedule (None: it sends as its transport lets it)."""
        return None

    def late_answer_ports(self) -> tuple[int, ...]:
        """Ports whose answers may come after the asking client gave up and asked again (a DNS
        resolver's): the host's ICMP port unreachable for them is no failure (run/unreachable.py)."""
        return ()

    def inapplicable_keys(self) -> tuple[str, ...]:
        """The flow's settings that do not apply to it as configured (expanded.json
        `inapplicable`, hidden in the report's parameter tables)."""
        return ()

    def third_party_programs(self) -> tuple[str, ...]:
        """The programs not squall's own that the flow runs, whose versions meta.json records
        (`flow_programs`); squall's generators answer squall's own --version."""
        return ()

    def program_name(self, role: str) -> str:
        """The name of the role's program: <flow>.<role>.stdout / .stderr in the results."""
        return f"{self.name}.{role}"

    def log_name(self, role: str) -> str:
        """The event log (--log) the role's program writes."""
        return f"{self.name}.{role}.log"

    def active_argv(self, program: Callable[[str], str], peer: str, *, offset_us: int, log: Path,
                    timeout_us: int, local: str = "") -> list[str]:
        """The active program's command line: `program` gives a C program's path on its host,
        `peer` is the passive side's address:port, `offset_us` the time left until the flow's
        start, `timeout_us` the scenario's timeout, `local` the active host's own address."""
        return [program(self.PROGRAM), *self._active_args(peer, timeout_us),
                "--start-offset", f"{offset_us}us", "--tos", str(self.tos), "--log", str(log)]

    @abstractmethod
    def _active_args(self, peer: str, timeout_us: int) -> list[str]:
        """The kind's own arguments of the active program."""

    @abstractmethod
    def passive_argv(self, program: Callable[[str], str], listen: str, log: Path, *,
                     peer: str = "", timeout_us: int = 0) -> list[str] | None:
        """The passive program's command line, listening on `listen` (address:port), ready as
        `readiness()` says; `peer` is the active host's address. None: no passive program (a web
        server serving web_pages(), or nothing)."""

    def readiness(self) -> Readiness:
        """When the passive program is ready: the generators print "listening ..."."""
        return Readiness()

    def web_pages(self) -> tuple[tuple[int, ...], ...]:
        """The pages (object sizes, main object first) a web server on the passive side serves."""
        return ()

    @abstractmethod
    def log_files(self) -> list[tuple[str, str]]:
        """(host, file name) of the event logs the flow's programs write."""

    def summary(self, stdout: str) -> dict | None:
        """The program's summary for workloads.json: the generators' last JSON line."""
        for line in reversed(stdout.splitlines()):
            if line.startswith("{"):
                try:
                    found = json.loads(line)
                except ValueError:
                    return None
                return found if isinstance(found, dict) else None
        return None

    def problem(self, role: str, code: int | None, summary: Mapping[str, Any] | None, *, stopped: bool,
                stderr: str) -> str | None:
        """What went wrong with the role's program, as the end of "flow F: the ROLE (PROGRAM) ...";
        None when it did its job. `stopped`: squall ended it (a passive program after the flow);
        `stderr`: the end of its stderr. A generator must exit 0 with an ok summary."""
        if code is None:
            return "had not ended"
        if code != 0 or summary is None or not summary.get("ok"):
            return f"exited with code {code}: {(summary or {}).get('error') or stderr}"
        return None

    @abstractmethod
    def link_packets(self, index: int) -> list[LinkPackets]:
        """What each side of the flow at `index` of its cell sends, in which direction of the link."""

    def _ways(self) -> tuple[str, str]:
        """The link directions of the data and of what answers it."""
        return ("up", "down") if self.direction == "up" else ("down", "up")

    # --- ETA planning ---

    def planned_us(self, link: LinkConfig, timeout_us: int) -> int:
        """How long the flow is expected to last from its start on an error-free link: its bytes at the
        link's slowest rate in the direction of its data and a few round trips (the progress line's
        first ETA, before replications have been measured)."""
        return min(timeout_us, self._planned_us(link, timeout_us))

    def _planned_us(self, link: LinkConfig, timeout_us: int) -> int:
        return timeout_us

    def _transfer_us(self, link: LinkConfig, data_bytes: int, round_trips: int) -> int:
        d = link.direction(self.direction)
        rates = [s.rate_bps for s in d.bandwidth if s.rate_bps]          # None: unlimited, 0: an outage
        serialisation = data_bytes * 8 * 1_000_000 // min(rates) if rates else 0
        return serialisation + round_trips * (link.down.delay_us + link.up.delay_us)

    # --- `squall show` ---

    def describe(self) -> str:
        """One line for `squall show`: what the flow runs, on which hosts, from when, with units."""
        active, passive = self.hosts()
        marking = f"DSCP {self.dscp}" if self.tos & 3 == 0 else f"TOS {self.tos}"
        return (f"{self.name}: {self.kind}, {self._what()}; {self.ROLES[0]} at the {active} host, {self.ROLES[1]} "
                f"at the {passive} host ({self.direction}); start {format_time_us(self.start_us)}; {marking}")

    @abstractmethod
    def _what(self) -> str:
        """The kind's own part of describe()."""

    # --- metrics (the status table) ---

    @classmethod
    def main_metrics(cls, entry: Mapping[str, Any]) -> dict[str, float]:
        """The main metrics of the flow's workloads.json entry, from its generators' own
        summaries (the status table); {} where the summary lacks them."""
        return cls._metrics((entry.get(cls.METRICS_ROLE) or {}).get("summary") or {})

    @staticmethod
    @abstractmethod
    def _metrics(summary: Mapping[str, Any]) -> dict[str, float]: ...
