"""Lanes: each worker builds its testbed as three network namespaces on this machine (testbed/lanes/),
lanes lane_base .. lane_base + K - 1 for --parallel K (one more with --prepare-ahead), each claimed
for as long as this process uses it and rebuilt before every replication."""
from __future__ import annotations

import os
from typing import Any, TextIO

from testbed.link.testbed import Testbed
from testbed.lanes import claim as lane_claim
from testbed.lanes import lane as lanes
from testbed.lanes.hosts import NamespaceTestbed
from testbed.run.backends.base import BackendUnavailable, LocalBackend
from testbed.run.options import RunOptions
from testbed.run.unit import Plan
from testbed.scenario.loader import Scenario


def remove_dead_leftovers(command: str, err: TextIO) -> None:
    """Lanes a dead run left behind are removed before any is built (lanes of live runs stay)."""
    removed = lanes.cleanup_leftovers()
    if removed:
        print(f"squall {command}: removed leftover lanes of dead runs: {', '.join(map(str, removed))}", file=err)


class LaneBackend(LocalBackend):
    NAME = "namespaces"

    def __init__(self, options: RunOptions):
        super().__init__(options)
        self._built: set[int] = set()
        self._claims: dict[int, lane_claim.LaneClaim] = {}

    def check(self, sc: Scenario, err: TextIO) -> None:
        if os.geteuid() != 0:
            raise BackendUnavailable("needs root (network namespaces, TUN devices, tc)")
        remove_dead_leftovers("run", err)
        self.check_lanes_free()

    def check_lanes_free(self) -> None:
        """LaneBusy naming the first of the run's lanes that another squall process holds or whose
        namespaces are not squall's, before the run directory exists (the workers claim again)."""
        o = self.options
        for number in range(o.lane_base, o.lane_base + o.lanes):
            with lane_claim.claim(number):
                lanes.check_free(number)

    def describe(self) -> dict[str, Any]:
        o = self.options
        return {"backend": self.NAME, "lanes": list(range(o.lane_base, o.lane_base + o.lanes)),
                "parallel": o.parallel, "prepare_ahead": o.prepare_ahead}

    def workers(self, units: int) -> list[int]:
        return [self.options.lane_base + i for i in range(max(1, min(self.options.lanes, units)))]

    def where(self, units: Plan) -> str:
        spare = " and a spare lane setting up the next replication (--prepare-ahead)" \
            if units and len(self.workers(len(units))) > self.options.parallel else ""
        return f"on {min(self.options.parallel, max(1, len(units)))} lane(s){spare}"

    def fresh_testbed(self, worker: int) -> Testbed:
        if worker not in self._claims:
            self._claims[worker] = lane_claim.claim(worker)
        testbed = NamespaceTestbed.create(worker)   # tears down what was there
        self._built.add(worker)
        return testbed

    def release(self, worker: int) -> None:
        if worker in self._built:     # never a lane another run owns (LaneBusy)
            lanes.teardown(worker)
        claim = self._claims.pop(worker, None)
        if claim is not None:
            claim.release()

    def lane(self, worker: int) -> int | None:
        return worker
