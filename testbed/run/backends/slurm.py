"""Slurm: the planned units go to a cluster as job arrays (testbed/run/slurm.py, docs/cluster.md),
each run by `squall worker` on a node's lanes (testbed/run/worker.py); with --wait, until they
are done. The submitting host runs nothing itself."""
from __future__ import annotations

from typing import Any, TextIO

from testbed.run import slurm
from testbed.run.backends.base import Backend, Planned
from testbed.run.ending import say_kept
from testbed.run.status import print_report
from testbed.run.unit import Plan, plan
from testbed.scenario.loader import Scenario


class SlurmBackend(Backend):
    NAME = "slurm"

    def check(self, sc: Scenario, err: TextIO) -> None:
        slurm.max_array_size()     # a submit host answers; found out before the run directory is made

    def describe(self) -> dict[str, Any]:
        o = self.options
        assert o.slurm is not None
        return {"backend": self.NAME, "lane_base": o.lane_base, "lanes_per_node": o.slurm.lanes_per_node,
                "partition": o.slurm.partition, "prepare_ahead": o.prepare_ahead}

    def where(self, units: Plan) -> str:
        return f"as {len(units)} Slurm unit(s)"

    def run(self, planned: Planned, out: TextIO, err: TextIO) -> int:
        o, run_dir = self.options, planned.run_dir
        assert o.slurm is not None
        if not planned.units:
            print_report(run_dir, planned.cells, planned.reps, out)
            return 1 if say_kept(run_dir, planned.cells, planned.reps, err, " --slurm") else 0
        submission = slurm.submit(run_dir.root, planned.sc.name, planned.units, o.lane_base, o.slurm, err,
                                  redo=o.redo, analyse=o.analyse)
        if not o.slurm.wait:
            return 0
        slurm.wait(run_dir.root, submission, err)
        print_report(run_dir, planned.cells, planned.reps, out)
        left = plan(planned.cells, planned.reps, run_dir)
        if left:
            print(f"squall run: {sum(left.replications().values())} replication(s) not ok; redo them with:\n"
                  f"  squall run --resume {run_dir.root} --slurm", file=err)
        kept = say_kept(run_dir, planned.cells, planned.reps, err, " --slurm")
        return 1 if left or kept else 0
