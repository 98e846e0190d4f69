"""Each host's TCP/IP MIB counters before and after a replication: the kernel's own account of
what happened, independent of squall's captures and logs (`kernel-counters.json`).

    counters = KernelCounters.before(testbed)      # before the link comes up
    ...the replication...
    counters.take_after(testbed)                   # the programs stopped, the captures not yet
    counters.finish(testbed, work, details)        # the file (takes `after` if not yet taken)

The `after` snapshot is taken while the captures still run: a host keeps retransmitting (a FIN
in LAST_ACK, say) after its programs ended, and what its kernel counts after the captures
stopped (even a timeout whose retransmission could not be sent any more, the link gone) is
in no capture, so the analysis, which classifies what the captures hold, could not match it.

The counters are the ones `nstat -az` shows (IP, ICMP, TCP, UDP, their extensions, IPv6),
under nstat's names (`TcpActiveOpens`, `TcpExtTCPTimeouts`, `Ip6InReceives`, ...), read from
/proc/net/snmp, /proc/net/netstat and /proc/net/snmp6 of the host's network namespace with
the Host interface's `read_proc`, so it works the same on a lane and on lab hosts, and nothing
depends on nstat's history file or daemon. Format (docs/runner.md):

    {"fixed": {"before": {name: value}, "after": {...}, "delta": {name: after - before}},
     "emu": {...}, "mobile": {...}}

A host whose counters could not be read has "error" (the message) and null where a snapshot
or the delta is missing; that is noted in status.json (`kernel_counters`), it fails nothing.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analysis.results.directory import KERNEL_COUNTERS_FILE
from testbed.hosts import Host
from testbed.link.testbed import Testbed
from testbed.run.results import write_json_atomic

PROC_FILES = ("/proc/net/snmp", "/proc/net/netstat", "/proc/net/snmp6")
# Settings and gauges nstat leaves out: they are not counters, a difference means nothing.
NOT_COUNTERS = frozenset({"IpForwarding", "IpDefaultTTL", "TcpRtoAlgorithm", "TcpRtoMin", "TcpRtoMax",
                          "TcpMaxConn", "TcpCurrEstab"})


class CountersError(RuntimeError):
    """A host's counters could not be read or made no sense."""


def parse_counters(text: str) -> dict[str, int]:
    """The counters of /proc/net/snmp and /proc/net/netstat (pairs of `Prefix: names` and
    `Prefix: values` lines) and /proc/net/snmp6 (`Name value` lines), in any order and
    concatenated, named as nstat names them (prefix + name)."""
    counters: dict[str, int] = {}
    lines = [line.split() for line in text.splitlines() if line.strip()]
    i = 0
    while i < len(lines):
        words = lines[i]
        if words[0].endswith(":"):
            values = lines[i + 1] if i + 1 < len(lines) else []
            if not values or values[0] != words[0] or len(values) != len(words):
                raise CountersError(f"a `{words[0]}` line of names without its line of values")
            prefix = words[0][:-1]
            counters.update((prefix + name, int(value)) for name, value in zip(words[1:], values[1:]))
            i += 2
        elif len(words) == 2:
            counters[words[0]] = int(words[1])
            i += 1
        else:
            raise CountersError(f"unexpected line {' '.join(words)!r}")
    return {name: value for name, value in counters.items() if name not in NOT_COUNTERS}


def read_counters(host: Host) -> dict[str, int]:
    """The host's counters now. /proc/net/snmp6 is absent where IPv6 is off at boot: what
    `cat` could read counts, as long as the TCP counters are there."""
    text = host.read_proc(PROC_FILES)
    try:
        counters = parse_counters(text)
    except (CountersError, ValueError) as e:
        raise CountersError(f"{' '.join(PROC_FILES)} on the {host.role} host: {e}") from None
    if "TcpActiveOpens" not in counters:
        raise CountersError(f"no TCP counters in {' '.join(PROC_FILES)} on the {host.role} host")
    return counters


def delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    return {name: after[name] - before[name] for name in after if name in before}


@dataclass
class KernelCounters:
    """The snapshots of one replication, per host role (fixed, emu, mobile)."""
    hosts: dict[str, dict[str, Any]] = field(default_factory=dict)
    _after_taken: bool = False

    @classmethod
    def before(cls, testbed: Testbed) -> "KernelCounters":
        taken = cls()
        taken._snapshot(testbed, "before")
        return taken

    def take_after(self, testbed: Testbed) -> None:
        """The after snapshot, once: the first call counts."""
        if not self._after_taken:
            self._after_taken = True
            self._snapshot(testbed, "after")

    def finish(self, testbed: Testbed, work: Path, details: dict[str, Any]) -> None:
        """The after snapshot (unless taken already) and the deltas into
        work/kernel-counters.json; status.json's `kernel_counters` names the file, or says
        which host's counters are incomplete."""
        self.take_after(testbed)
        for entry in self.hosts.values():
            both = entry["before"] is not None and entry["after"] is not None
            entry["delta"] = delta(entry["before"], entry["after"]) if both else None
        write_json_atomic(work / KERNEL_COUNTERS_FILE, self.hosts)
        errors = [f"{role}: {entry['error']}" for role, entry in self.hosts.items() if "error" in entry]
        details["kernel_counters"] = {"file": KERNEL_COUNTERS_FILE, "hosts": list(self.hosts), **({"errors": errors} if errors else {})}

    def _snapshot(self, testbed: Testbed, when: str) -> None:
        for host in (testbed.fixed, testbed.emu, testbed.mobile):
            entry = self.hosts.setdefault(host.role, {"before": None, "after": None, "delta": None})
            try:
                entry[when] = read_counters(host)
            except Exception as e:     # noqa: BLE001 — a host that cannot be asked must not end the run
                error = f"{when}: {type(e).__name__}: {e}"
                entry["error"] = f"{entry['error']}; {error}" if "error" in entry else error
