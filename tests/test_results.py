"""The results directory: never overwritten, replications complete or absent, attempts kept."""
from __future__ import annotations

import json

import pytest

from testbed import meta
from testbed.results import RunDir, Status


def make_run(tmp_path):
    return RunDir.create(tmp_path, "demo", "seed = 1\n", [{"cell": "a"}], {"k": "v"})


def status(s="ok", reason=""):
    return Status(s, reason, "20261122T000000Z", 1.5, {"exit": 0})


def test_create_writes_scenario_expanded_meta_and_never_overwrites(tmp_path):
    first = make_run(tmp_path)
    second = make_run(tmp_path)          # same second: a new directory, not the same one
    assert first.root != second.root
    assert (first.root / "scenario.toml").read_text() == "seed = 1\n"
    assert json.loads((first.root / "expanded.json").read_text()) == [{"cell": "a"}]
    assert json.loads((first.root / "meta.json").read_text()) == {"k": "v"}


def test_replication_is_absent_until_finished(tmp_path):
    run = make_run(tmp_path)
    work = run.begin("a", 1)
    (work / "emulator.log").write_text("x")
    assert run.status("a", 1) is None and run.needs_run("a", 1)
    final = run.finish("a", 1, work, status())
    assert final.name == "rep-01" and not work.exists()
    assert (final / "emulator.log").read_text() == "x"
    assert run.status("a", 1).status == "ok" and not run.needs_run("a", 1)


def test_failed_and_interrupted_attempts_are_kept_on_redo(tmp_path):
    run = make_run(tmp_path)
    run.finish("a", 2, run.begin("a", 2), status("failed", "emulator exited 3: peer mobile lost"))
    assert run.needs_run("a", 2)
    interrupted = run.begin("a", 2)          # the failed result moves to attempts/
    (interrupted / "partial.txt").write_text("cut short")
    redo = run.begin("a", 2)                 # a crash mid-way: the partial one is kept too
    run.finish("a", 2, redo, status())
    attempts = sorted(p.name for p in (run.root / "cells" / "a" / "attempts").iterdir())
    assert attempts == ["rep-02-1", "rep-02-2"]
    kept = run.root / "cells" / "a" / "attempts" / "rep-02-1" / "status.json"
    assert json.loads(kept.read_text())["reason"].startswith("emulator exited 3")
    assert [(c, r, s.status) for c, r, s in run.statuses()] == [("a", 2, "ok")]


def test_status_rejects_unknown_values():
    with pytest.raises(ValueError, match="status must be one of"):
        Status("maybe", "", "", 0.0, {})


def test_open_refuses_a_directory_that_is_not_a_run(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a squall run directory"):
        RunDir.open(tmp_path)


def test_meta_records_revision_kernel_tools_and_sysctls():
    m = meta.collect("abc", {"kind": "namespaces"})
    assert len(m["squall_revision"].split("+")[0]) == 40
    assert m["kernel"].startswith("Linux ")
    assert m["tools"]["iproute2"].startswith("ip utility")
    assert m["host_sysctls"]["net.ipv4.tcp_sack"] in ("0", "1")
    assert m["scenario_sha256"] == "abc" and m["testbed"] == {"kind": "namespaces"}
