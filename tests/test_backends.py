"""The backends of `squall run` (testbed/run/backends/): one chosen per run in one place, each
describing itself for meta.json; one signal stop and one lane claim for the runner and the cluster
worker. No namespaces needed."""
from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from testbed.lanes import claim
from testbed.run.backends.lab import LabBackend
from testbed.run.backends.lanes import LaneBackend
from testbed.run.backends.slurm import SlurmBackend
from testbed.run.options import RunOptions
from testbed.run.runner import choose_backend
from testbed.run.slurm import SlurmOptions
from testbed.run.stop import Stop, stop_on_signals

BASE = int(os.environ.get("SQUALL_TEST_LANE_BASE", "0"))


def test_the_options_choose_the_backend_and_it_describes_itself_for_meta_json(tmp_path: Path) -> None:
    lanes = choose_backend(RunOptions(parallel=2, lane_base=BASE, prepare_ahead=True))
    assert isinstance(lanes, LaneBackend)
    assert lanes.describe() == {"backend": "namespaces", "lanes": [BASE, BASE + 1, BASE + 2], "parallel": 2,
                                "prepare_ahead": True}
    slurm = choose_backend(RunOptions(lane_base=BASE, slurm=SlurmOptions(partition="p", lanes_per_node=4)))
    assert isinstance(slurm, SlurmBackend)
    assert slurm.describe() == {"backend": "slurm", "lane_base": BASE, "lanes_per_node": 4, "partition": "p",
                                "prepare_ahead": False}
    testbed = tmp_path / "lab.toml"
    testbed.write_text("# the lab\n")
    lab = choose_backend(RunOptions(testbed_file=testbed))
    assert isinstance(lab, LabBackend)
    assert lab.describe() == {"backend": "ssh", "testbed_file": str(testbed), "testbed_source": "# the lab\n",
                              "hosts": {}}        # no hosts opened: nothing to say of them


def test_lanes_one_worker_per_replication_at_once_and_the_spare_only_with_work_for_it() -> None:
    lanes = LaneBackend(RunOptions(parallel=2, lane_base=BASE, prepare_ahead=True))
    assert lanes.workers(10) == [BASE, BASE + 1, BASE + 2]
    assert lanes.workers(2) == [BASE, BASE + 1]
    assert lanes.workers(0) == [BASE]
    assert lanes.where([object()] * 5) == ("on 2 lane(s) and a spare lane setting up the next replication "  # type: ignore[list-item]
                                           "(--prepare-ahead)")
    assert lanes.where([object()] * 2) == "on 2 lane(s)"      # type: ignore[list-item]
    assert lanes.lane(BASE + 1) == BASE + 1


def test_the_first_signal_stops_the_work_once_and_the_handlers_come_back() -> None:
    before = signal.getsignal(signal.SIGTERM)
    said: list[int] = []
    with stop_on_signals(Stop(), said.append) as stop:
        assert not stop.is_set()
        os.kill(os.getpid(), signal.SIGTERM)
        os.kill(os.getpid(), signal.SIGINT)     # a second one changes nothing: it is the first that is said
        assert stop.is_set()
        assert (stop.signal_number, stop.signal_name, said) == (signal.SIGTERM, "SIGTERM", [signal.SIGTERM])
    assert signal.getsignal(signal.SIGTERM) is before


@pytest.mark.skipif(os.geteuid() != 0, reason="lane locks live in /run/squall (root)")
def test_the_first_free_lane_of_a_range_is_claimed() -> None:
    held = claim.claim(BASE + 8)
    try:
        got = claim.first_free(range(BASE + 8, BASE + 10))
        assert got is not None and got.number == BASE + 9
        assert claim.first_free([BASE + 8, BASE + 9]) is None       # this process holds both now
        got.release()
    finally:
        held.release()
