"""What a --slurm run keeps in its run directory, without the daemons: each task's final Slurm
state after Slurm forgot the job, the settings a resume submits with again, the options that do
not go with --slurm, the node's build check and its lanes as a generic resource."""
from __future__ import annotations

from pathlib import Path

import pytest

from testbed.cli import main as cli_main
from testbed.errors import ConfigError
from testbed.run import runner, slurm_jobs, worker
from testbed.run.slurm import recorded_options
from testbed.run.slurm_jobs import TaskState, parse_sacct, parse_scontrol
from testbed.run.submission import PlannedUnit, SlurmSettings, Submission

SCONTROL = (
    "JobId=40 ArrayJobId=40 ArrayTaskId=2-3 JobName=squall-x JobState=PENDING Reason=Resources ExitCode=0:0 "
    "NodeList= Features=(null)\n"
    "JobId=42 ArrayJobId=40 ArrayTaskId=1 JobName=squall-x JobState=FAILED Reason=NonZeroExitCode ExitCode=2:0 "
    "NodeList=node2 BatchHost=node2\n"
    "JobId=41 ArrayJobId=40 ArrayTaskId=0 JobName=squall-x JobState=COMPLETED Reason=None ExitCode=0:0 "
    "NodeList=node1\n")


def test_scontrol_and_sacct_answers_are_read_per_array_task() -> None:
    states = parse_scontrol(SCONTROL)
    assert {t: (s.state, s.node, s.exit_code) for t, s in states.items()} == {
        "40_2": ("PENDING", "", "0:0"), "40_3": ("PENDING", "", "0:0"),
        "40_1": ("FAILED", "node2", "2:0"), "40_0": ("COMPLETED", "node1", "0:0")}
    assert states["40_1"].reason == "NonZeroExitCode" and not states["40_2"].final and states["40_1"].final
    sacct = parse_sacct("40_0|COMPLETED|0:0|node1\n40_1|CANCELLED by 0|0:15|node2\n40_[2-3]|PENDING|0:0|None assigned\n")
    assert {t: s.state for t, s in sacct.items()} == {"40_0": "COMPLETED", "40_1": "CANCELLED"}


def _submission(tmp_path: Path, **settings: object) -> Submission:
    root = tmp_path / "run"
    root.mkdir()
    units = [PlannedUnit("c", (r,), False) for r in (1, 2, 3, 4)]
    sub = Submission(root, 1, 100, 2, units, prepare_ahead=True, settings=SlurmSettings(**settings))
    sub.output_dir.mkdir(parents=True)
    sub.jobs = {"arrays": [{"job_id": "40", "first_unit": 0, "units": 4}], "end": "44"}
    sub.save()
    return sub


def test_a_final_state_is_recorded_and_shown_after_slurm_forgot_the_job(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    sub = _submission(tmp_path, units_per_task=2)
    assert sub.task_units() == {"40_0": range(0, 2), "40_1": range(2, 4)}
    monkeypatch.setattr(slurm_jobs, "query", lambda ids: parse_scontrol(SCONTROL))
    first = slurm_jobs.current(sub)
    assert first["40_1"].source == "scontrol"
    (sub.output_dir / "squall-x-40_1.out").write_text(
        "squall worker: /shared/run/meta.json: squall_revision: the run was made by squall abc, this node has def\n")
    monkeypatch.setattr(slurm_jobs, "query", lambda ids: {})       # MinJobAge passed, no accounting
    later = Submission.load(sub.root)
    again = slurm_jobs.current(later)
    assert again["40_1"] == TaskState("40_1", "FAILED", "2:0", "node2", "NonZeroExitCode", "recorded")
    assert "40_2" not in again          # a pending state is never recorded as an ending
    # a task Slurm forgot before anyone looked: its own record of its end (task.sh)
    (sub.output_dir / "ended-40_3.json").write_text('{"exit": 137, "node": "node1"}\n')
    assert slurm_jobs.current(later)["40_3"] == TaskState("40_3", "FAILED", "137:0", "node1", "", "task")
    from testbed.run.status import _cluster_jobs
    (entry,) = _cluster_jobs(sub.root)
    task = entry["tasks"][1]
    assert (task["task"], task["state"], task["node"], task["source"]) == ("40_1", "FAILED", "node2", "recorded")
    assert [u["replications"] for u in task["units"]] == [[3], [4]]
    assert "this node has def" in task["output"]


def test_resume_takes_the_runs_own_slurm_settings_and_the_options_given_override(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    sub = _submission(tmp_path, partition="p1", sbatch_args=("--time=5",), units_per_task=3, analyse=False)
    assert recorded_options(sub.root) == (1, {"lane_base": 100, "lanes_per_node": 2, "units_per_task": 3,
                                              "partition": "p1", "sbatch_arg": ["--time=5"],
                                              "prepare_ahead": True, "no_analysis": True})
    seen = []
    monkeypatch.setattr(runner, "run_command", lambda scenario, options, resume: seen.append(options) or 0)
    monkeypatch.setenv("SQUALL_LANE_BASE", "7")       # the run's own lane base wins over the default's
    assert cli_main(["run", "--resume", str(sub.root), "--slurm", "--partition", "p2"]) == 0
    (options,) = seen
    assert options.lane_base == 100 and options.prepare_ahead and not options.analyse
    assert options.slurm is not None
    assert (options.slurm.partition, options.slurm.lanes_per_node, options.slurm.units_per_task,
            options.slurm.sbatch_args, options.slurm.prepare_ahead) == ("p2", 2, 3, ("--time=5",), True)
    err = capsys.readouterr().err
    assert "resuming with the run's own Slurm settings (submission 1): --lane-base 100" in err
    assert "--no-analysis" in err and "given now instead: --partition" in err


def test_parallel_beside_slurm_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    scenario = tmp_path / "x.toml"
    scenario.write_text('name = "x"\n[flows.b]\nkind = "bulk"\ncount = 1\nlength = "100B"\n')
    assert cli_main(["run", str(scenario), "--slurm", "--parallel", "2", "--results", str(tmp_path)]) == 2
    assert "--parallel: does not apply to --slurm runs" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == [scenario]       # refused before anything was made


def test_a_node_whose_programs_are_of_another_build_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    program = tmp_path / "squall-npa"
    program.write_text("#!/bin/sh\necho 'squall-npa (squall) 0.0.1+git.0000000'\n")
    program.chmod(0o755)
    monkeypatch.setenv("SQUALL_BIN_DIR", str(tmp_path))
    with pytest.raises(ConfigError, match="squall-npa.*expected version .*make build"):
        worker._check_build()
    monkeypatch.setenv("SQUALL_BIN_DIR", str(tmp_path / "none"))
    with pytest.raises(ConfigError, match="no squall programs"):
        worker._check_build()


def test_a_nodes_lanes_as_a_generic_resource(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert worker.node_lane_gres("NodeName=n2 AvailableFeatures=lanes_104 ActiveFeatures=lanes_104 "
                                 "Gres=lane:3 NodeAddr=x") == (3, 104)
    assert worker.node_lane_gres("NodeName=n1 Gres=gpu:2,lane:fast:2(S:0) AvailableFeatures=(null)") == (2, None)
    sub = _submission(tmp_path, gres=True)
    monkeypatch.setenv("SLURMD_NODENAME", "n2")
    monkeypatch.setattr(slurm_jobs, "slurm_command", lambda argv, what, ok=None: type(
        "P", (), {"stdout": "NodeName=n2 AvailableFeatures=lanes_104 Gres=lane:3"})())
    assert worker.node_lanes(sub) == range(104, 110)        # 3 lanes and a spare each (--prepare-ahead)
    monkeypatch.delenv("SLURMD_NODENAME")
    assert worker.node_lanes(sub) == range(100, 104)        # outside a Slurm task: the submission's

