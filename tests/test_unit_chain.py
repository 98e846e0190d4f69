"""The order and cache of a CBI chain's replications (testbed/run/unit.py), with the
replication itself replaced by a recorder: no lanes, no root."""
from __future__ import annotations

import threading
from pathlib import Path

import pytest

from testbed.run import lingering, replication
from testbed.run.results import RunDir, Status
from testbed.run.unit import Unit, UnitRunner, warm_up_dir
from testbed.scenario import loader as scenario

CHAIN = """\
name = "chain"
seed = 3
replications = 4
timeout = "30s"
[link]
bandwidth = "1Mbit"
delay = "10ms"
mtu = "576B"
[tcp]
profile = "cbi"
[flows.bulk1]
kind = "bulk"
count = 5
"""


@pytest.fixture
def chain(tmp_path: Path):
    path = tmp_path / "chain.toml"
    path.write_text(CHAIN)
    sc = scenario.load(path)
    (cell,) = sc.cells
    return cell, RunDir.create(tmp_path / "results", sc.name, sc.source, {}, {})


class Recorder:
    """replication.run's stand-in: what ran, on which lane, in which work directory."""

    def __init__(self, outcome: dict[int, str] | None = None, stop_at: tuple[int, str] | None = None):
        self.calls: list[tuple[int, int, bool]] = []     # (replication, lane, recorded)
        self.outcome, self.stop_at = outcome or {}, stop_at

    def __call__(self, testbed, job, work, stop, slots=None) -> Status:
        recorded = work.name.startswith("rep-")
        if self.stop_at == (job.replication, "warm-up" if not recorded else "run"):
            stop.set()
            raise replication.Interrupted()
        self.calls.append((job.replication, testbed, recorded))
        return Status(self.outcome.get(job.replication, "ok"), "", "20261124T000000Z", 1.0, {})


@pytest.fixture(autouse=True)
def cleared(monkeypatch) -> list[int]:
    """lingering.clear's stand-in: the lanes it was asked to clear, 1 connection each time."""
    lanes: list[int] = []
    monkeypatch.setattr(lingering, "clear", lambda testbed: lanes.append(testbed) or 1)
    return lanes


def runner(run_dir: RunDir, lanes: list[int], stop: threading.Event | None = None, reason=None) -> UnitRunner:
    def fresh() -> int:
        lanes.append(len(lanes) + 1)
        return lanes[-1]
    return UnitRunner(run_dir, 3, 30_000_000, stop or threading.Event(), fresh_testbed=fresh,
                      record=lambda *a: None, provenance={}, interrupted_reason=reason)


def run_refusing_to_clear(chain, monkeypatch, reps: tuple[int, ...], said: str) -> None:
    """The unit run with every lingering.clear raising `said` (a lane not known clean)."""
    cell, run_dir = chain
    monkeypatch.setattr(replication, "run", Recorder())

    def refuse(testbed):
        raise lingering.LingeringError(said)
    monkeypatch.setattr(lingering, "clear", refuse)
    unit_runner = runner(run_dir, [])
    unit_runner.fresh_testbed = lambda: type("Lane", (), {"describe": lambda self: {"lane": 1}})()
    unit_runner.run(Unit(cell, reps, keep_lane=True))


def cache(run_dir: RunDir, cell, rep: int) -> dict:
    status = run_dir.status(cell.cell_id, rep)
    assert status is not None
    return status.details["cache"]


def test_a_whole_chain_keeps_its_lane(chain, monkeypatch) -> None:
    cell, run_dir = chain
    rec = Recorder()
    monkeypatch.setattr(replication, "run", rec)
    lanes: list[int] = []
    runner(run_dir, lanes).run(Unit(cell, (1, 2, 3), keep_lane=True))
    assert rec.calls == [(1, 1, True), (2, 1, True), (3, 1, True)]
    assert [cache(run_dir, cell, r)["metrics"] for r in (1, 2, 3)] == ["empty", "kept", "kept"]


def test_what_ran_before_on_the_lane_goes_before_a_replication_starts(chain, monkeypatch, cleared) -> None:
    """Every replication and warm-up clears its lane first (a kept lane, a warm-up's, lab hosts
    that outlive a reset), and the status says how many connections were destroyed."""
    cell, run_dir = chain
    monkeypatch.setattr(replication, "run", Recorder())
    lanes: list[int] = []
    runner(run_dir, lanes).run(Unit(cell, (1, 2, 3), keep_lane=True))
    runner(run_dir, lanes).run(Unit(cell, (5,), keep_lane=True))
    assert cleared == [1, 1, 1, 2, 2, 2, 2, 2]     # 1, 2, 3 on lane 1; 5's warm-up (1 to 4) and 5 on lane 2
    destroyed = {r: run_dir.status(cell.cell_id, r).details.get("lingering_connections_destroyed") for r in (1, 2, 3, 5)}
    assert destroyed == {1: 1, 2: 1, 3: 1, 5: 1}


def test_connections_that_survive_fail_the_replication_not_the_run(chain, monkeypatch) -> None:
    cell, run_dir = chain
    run_refusing_to_clear(chain, monkeypatch, (1, 2), "lane 1: 1 of 1 TCP connections of an earlier replication ...")
    second = run_dir.status(cell.cell_id, 2)
    assert second.status == "failed" and "connections of an earlier replication" in second.reason


def test_a_chain_resumed_past_a_gap_replays_the_gap_on_its_lane(chain, monkeypatch) -> None:
    """--resume with rep 2 ok: the unit is (1, 3), and 3 must not go on from 1's cache: 2 runs
    again, unrecorded, on the lane that holds 1's."""
    cell, run_dir = chain
    rec = Recorder()
    monkeypatch.setattr(replication, "run", rec)
    lanes: list[int] = []
    runner(run_dir, lanes).run(Unit(cell, (1, 3), keep_lane=True))
    assert rec.calls == [(1, 1, True), (2, 1, False), (3, 1, True)]
    third = cache(run_dir, cell, 3)
    assert (third["metrics"], third["warmed_by_replications"], third["warm_up_status"]) == ("warmed", [2], "ok")
    assert not warm_up_dir(run_dir.root / "cells", cell.cell_id, 2).exists()


def test_a_chain_started_late_replays_every_replication_before_it(chain, monkeypatch) -> None:
    """What a connection leaves in the cache depends on what it found there: replication 4 on a
    fresh lane starts from the cache 1, 2 and 3 leave in turn, not from a cold run of 3."""
    cell, run_dir = chain
    rec = Recorder()
    monkeypatch.setattr(replication, "run", rec)
    runner(run_dir, []).run(Unit(cell, (4,), keep_lane=True))
    assert rec.calls == [(1, 1, False), (2, 1, False), (3, 1, False), (4, 1, True)]
    fourth = cache(run_dir, cell, 4)
    assert (fourth["metrics"], fourth["warmed_by_replications"]) == ("warmed", [1, 2, 3])
    assert fourth["warm_up_lingering_connections_destroyed"] == 3       # one before each replay


def test_a_failed_replay_ends_the_warm_up(chain, monkeypatch) -> None:
    cell, run_dir = chain
    rec = Recorder(outcome={2: "failed"})
    monkeypatch.setattr(replication, "run", rec)
    runner(run_dir, []).run(Unit(cell, (4,), keep_lane=True))
    assert rec.calls == [(1, 1, False), (2, 1, False), (4, 1, True)]
    fourth = cache(run_dir, cell, 4)
    assert (fourth["metrics"], fourth["warmed_by_replications"], fourth["warm_up_status"]) == \
        ("warm-up failed", [1, 2], "failed")


def test_a_warm_up_records_the_connections_destroyed_before_it(chain, monkeypatch) -> None:
    """Its own count, not its successor's: the warm-up clears the fresh lane first (3 here),
    the successor after it (none left)."""
    cell, run_dir = chain
    monkeypatch.setattr(replication, "run", Recorder())
    counts = iter([3, 0])
    monkeypatch.setattr(lingering, "clear", lambda testbed: next(counts))
    runner(run_dir, []).run(Unit(cell, (2,), keep_lane=True))
    assert cache(run_dir, cell, 2)["warm_up_lingering_connections_destroyed"] == 3
    assert run_dir.status(cell.cell_id, 2).details["lingering_connections_destroyed"] == 0


def test_a_warm_up_on_a_lane_not_known_clean_records_no_count(chain, monkeypatch) -> None:
    cell, run_dir = chain
    run_refusing_to_clear(chain, monkeypatch, (2,), "lane 1: listing the TCP connections ... failed")
    warm_up = cache(run_dir, cell, 2)
    assert warm_up["warm_up_lingering_connections_destroyed"] is None
    assert warm_up["warm_up_status"] == "failed" and "listing the TCP connections" in warm_up["warm_up_reason"]


def test_a_failed_warm_up_does_not_count_as_warm(chain, monkeypatch) -> None:
    cell, run_dir = chain
    monkeypatch.setattr(replication, "run", Recorder(outcome={1: "failed"}))
    runner(run_dir, []).run(Unit(cell, (2,), keep_lane=True))
    assert cache(run_dir, cell, 2)["metrics"] == "warm-up failed"


def test_a_stop_during_the_warm_up_is_recorded_by_a_cluster_worker(chain, monkeypatch) -> None:
    cell, run_dir = chain
    monkeypatch.setattr(replication, "run", Recorder(stop_at=(1, "warm-up")))
    runner(run_dir, [], reason=lambda: "interrupted by SIGTERM").run(Unit(cell, (2, 3), keep_lane=True))
    status = run_dir.status(cell.cell_id, 2)
    assert status is not None and (status.status, status.reason) == ("failed", "interrupted by SIGTERM")
    assert run_dir.status(cell.cell_id, 3) is None


def test_a_timeout_is_a_result_and_the_chain_goes_on_on_its_lane(chain, monkeypatch) -> None:
    """A timed-out replication ran to its end (the link's doing): its successor keeps the lane,
    and a warm-up replaying it goes on past it."""
    cell, run_dir = chain
    rec = Recorder(outcome={2: "timeout"})
    monkeypatch.setattr(replication, "run", rec)
    runner(run_dir, []).run(Unit(cell, (1, 2, 3), keep_lane=True))
    assert rec.calls == [(1, 1, True), (2, 1, True), (3, 1, True)]
    assert cache(run_dir, cell, 3)["metrics"] == "kept"
    rec.calls.clear()
    runner(run_dir, []).run(Unit(cell, (4,), keep_lane=True))
    assert rec.calls == [(1, 1, False), (2, 1, False), (3, 1, False), (4, 1, True)]
    assert cache(run_dir, cell, 4)["metrics"] == "warmed"


def test_replications_kept_after_a_failed_warm_up_say_so(chain, monkeypatch) -> None:
    cell, run_dir = chain
    monkeypatch.setattr(replication, "run", Recorder(outcome={1: "failed"}))
    runner(run_dir, []).run(Unit(cell, (2, 3), keep_lane=True))
    assert cache(run_dir, cell, 2)["metrics"] == "warm-up failed"
    third = cache(run_dir, cell, 3)
    assert third == {"metrics": "kept", "after_failed_warm_up_of": 1}
