"""Lab hosts: the three hosts of a testbed file, over SSH (testbed/lab/, docs/lab-hosts.md). They are
checked (reachable, programs installed, what the scenario needs) before the run directory is
made; every replication then runs on them in turn, the hosts reset in between, and at the end
they are left as they were."""
from __future__ import annotations

from typing import Any, TextIO

from testbed.errors import ConfigError
from testbed.link.testbed import Testbed
from testbed.lab import hosts as ssh_hosts
from testbed.lab import testbed_file
from testbed.router.engines import engine_of
from testbed.run.backends.base import BackendUnavailable, LocalBackend
from testbed.run.unit import Plan
from testbed.scenario.loader import Scenario


class LabBackend(LocalBackend):
    NAME = "ssh"

    testbed: ssh_hosts.SshTestbed | None = None
    lab: testbed_file.LabTestbed | None = None

    def check(self, sc: Scenario, err: TextIO) -> None:
        o = self.options
        assert o.testbed_file is not None
        if o.parallel != 1:
            raise ConfigError("--parallel", f"{o.parallel}: a testbed file names one set of lab hosts, "
                              "so its replications run one at a time; leave out --parallel")
        if o.prepare_ahead:
            raise ConfigError("--prepare-ahead", "a testbed file names one set of lab hosts, so there is no "
                              "spare to set up the next replication on; leave out --prepare-ahead")
        lanes_only = sorted({f"{f.name} ({f.kind})" for c in sc.cells for f in c.flows if f.LANES_ONLY})
        if lanes_only:
            raise ConfigError("--testbed", f"flows {', '.join(lanes_only)} run on lanes only (namespaces of one "
                              "machine: their programs share the run's files); leave out --testbed")
        self.lab = testbed_file.load(o.testbed_file)
        routers = [c.router for c in sc.cells]
        needs = {"needs_nginx": any(f.web_pages() for c in sc.cells for f in c.flows),
                 "needs_tc": any(r is not None and engine_of(r).needs_tc for r in routers)}
        try:
            self.testbed = ssh_hosts.SshTestbed.open(self.lab, **needs)
        except ssh_hosts.LabError as e:
            raise BackendUnavailable(str(e)) from None

    def describe(self) -> dict[str, Any]:
        assert self.options.testbed_file is not None
        return {"backend": self.NAME, "testbed_file": str(self.options.testbed_file),
                "testbed_source": self.options.testbed_file.read_text(),
                "hosts": self.testbed.host_info() if self.testbed is not None else {}}

    def where(self, units: Plan) -> str:
        assert self.lab is not None
        return f"on the lab hosts of {self.lab.path}"

    def workers(self, units: int) -> list[int]:
        return [self.options.lane_base]        # one set of hosts: one replication at a time

    def fresh_testbed(self, worker: int) -> Testbed:
        assert self.testbed is not None
        problems = self.testbed.reset()     # processes, sysctls, routes, TCP metrics as at the start
        if problems:
            raise RuntimeError(f"the lab hosts could not be reset: {'; '.join(problems)}")
        return self.testbed

    def close(self, err: TextIO) -> None:
        testbed, self.testbed = self.testbed, None
        for problem in testbed.close() if testbed is not None else []:
            print(f"squall run: could not restore: {problem}", file=err)
