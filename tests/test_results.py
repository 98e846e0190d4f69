"""The results directory: never overwritten, replications complete or absent, attempts kept."""
from __future__ import annotations

import gzip
import json
import os

import pytest

from testbed.errors import ConfigError
from testbed.run import meta
from testbed.run.results import RunDir, Status


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
    assert gzip.decompress((final / "emulator.log.gz").read_bytes()) == b"x"
    assert not (final / "emulator.log").exists() and "kept_uncompressed" not in run.status("a", 1).details
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
    with pytest.raises(ConfigError, match="not a squall run directory"):
        RunDir.open(tmp_path)


def test_meta_records_revision_kernel_tools_and_sysctls():
    m = meta.collect("abc", {"kind": "namespaces"})
    assert len(m["squall_revision"].split("+")[0]) == 40
    assert m["kernel"].startswith("Linux ")
    assert m["tools"]["iproute2"].startswith("ip utility")
    assert m["host_sysctls"]["net.ipv4.tcp_sack"] in ("0", "1")
    assert m["scenario_sha256"] == "abc" and m["testbed"] == {"kind": "namespaces"}


def _disk_full(*args: object) -> None:
    raise OSError(28, "No space left on device")


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    from testbed.run import results

    path = tmp_path / "status.json"
    results.write_json_atomic(path, {"status": "ok"})
    monkeypatch.setattr(results.os, "fsync", _disk_full)
    with pytest.raises(OSError, match="No space left"):
        results.write_json_atomic(path, {"status": "failed"})
    assert json.loads(path.read_text()) == {"status": "ok"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["status.json"]


def test_a_run_directory_that_cannot_be_written_whole_is_removed(tmp_path, monkeypatch):
    from testbed.run import results

    monkeypatch.setattr(results.os, "fsync", _disk_full)
    with pytest.raises(OSError):
        make_run(tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_incomplete_names_missing_partial_and_failed_replications(tmp_path):
    run = make_run(tmp_path)
    run.finish("a", 1, run.begin("a", 1), status())
    run.finish("a", 2, run.begin("a", 2), status("failed", "emulator died"))
    run.begin("a", 3)                                     # abandoned: rep-03.partial
    run.finish("a", 5, run.begin("a", 5), status("degraded", "timing error 2 ms"))   # complete: analysed
    assert run.incomplete(["a"], range(1, 6)) == ["a rep-02: failed", "a rep-03: partial", "a rep-04: missing"]


def test_open_names_a_damaged_run_file(tmp_path):
    run = make_run(tmp_path)
    (run.root / "meta.json").write_text("")
    with pytest.raises(ConfigError, match="meta.json: cannot be read as the run's meta.json"):
        RunDir.open(run.root)


def test_what_the_runner_records_is_what_the_analysis_reads(tmp_path):
    # One format (analysis/results/directory.py): the writer's replications, partial ones and
    # statuses are the reader's, and both say which are still to be run.
    from analysis.results.layout import read_layout

    run = RunDir.create(tmp_path, "demo", "replications = 3\n", [{"cell": "a"}], {})
    run.finish("a", 1, run.begin("a", 1), status())
    run.finish("a", 2, run.begin("a", 2), status("timeout", "flows still running"))
    run.begin("a", 3)                                   # cut short: rep-03.partial
    refs = read_layout(run.root).replications
    assert [(r.rep, r.status, r.directory) for r in refs] == [
        (1, "ok", run.replication("a", 1)), (2, "timeout", run.replication("a", 2)),
        (3, "missing", run.replication("a", 3))]
    assert "rep-03.partial" in refs[2].reason
    assert run.incomplete(["a"], range(1, 4)) == ["a rep-03: partial"]


# --- never writing through what another user controls -------------------------------------------

def test_a_results_directory_others_can_write_to_is_refused(tmp_path):
    from testbed.run.results import check_results_dir

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(ConfigError, match=r"--results: .*shared' is the results directory but is writable by its "
                                          r"group or others \(mode 0777\)"):
        check_results_dir(shared)
    with pytest.raises(ConfigError, match="is where the results directory would be made"):
        check_results_dir(shared / "results")          # made by squall inside a directory others may change
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chown(theirs, 65534, 65534)
    with pytest.raises(ConfigError, match="owned by user 65534"):
        check_results_dir(theirs)
    shared.chmod(0o1777)                               # root's and sticky, like /tmp: fine to make one in
    check_results_dir(shared / "results")
    own = tmp_path / "own"
    own.mkdir(mode=0o755)
    check_results_dir(own)
    link = shared / "link"
    link.symlink_to(own)
    os.lchown(link, 65534, 65534)                      # another user's link in a sticky directory
    with pytest.raises(ConfigError, match="is a symbolic link of user 65534"):
        check_results_dir(link)


def test_nothing_is_written_through_a_symbolic_link_inside_a_run(tmp_path):
    from analysis.results.atomic_file import SymlinkRefused, write_text_atomically

    run_dir = RunDir.create(tmp_path / "results", "t", "", {}, {})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (run_dir.root / "summary").symlink_to(elsewhere)
    with pytest.raises(SymlinkRefused, match=r"summary: is a symbolic link .* inside the run directory"):
        write_text_atomically(run_dir.root / "summary" / "report.md", "x")
    assert list(elsewhere.iterdir()) == []
    # a planted temporary is removed as a link, its target left alone
    target = tmp_path / "target"
    target.write_text("keep")
    (run_dir.root / "status.json.tmp").symlink_to(target)
    write_text_atomically(run_dir.root / "status.json", "{}")
    assert target.read_text() == "keep" and (run_dir.root / "status.json").read_text() == "{}"
    # the run directory itself may be named through a link its user made
    latest = tmp_path / "latest"
    latest.symlink_to(run_dir.root)
    write_text_atomically(latest / "note.txt", "ok")
    assert (run_dir.root / "note.txt").read_text() == "ok"
