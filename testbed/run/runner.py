"""`squall run`: every (cell, replication) of a scenario, on one or more lanes (docs/runner.md).

A run directory (testbed/run/results.py) is created, or reopened with --resume; each
replication that has no ok result is run on a lane of its own worker (K workers with
--parallel K, lanes lane_base … lane_base+K−1; with --prepare-ahead one more, which sets up
the next replication while K run their flows), rebuilt before every replication so no
state is carried over — except the replications of a CBI cell (a TCP profile that keeps
its metrics), which run in order on one lane without rebuilding it in between.
A failed or hung replication is recorded and the matrix goes on. SIGINT/SIGTERM stop
the workers, tear every lane down and leave a run that --resume completes.
With --testbed FILE the replications run one after the other on three lab hosts over SSH
instead (testbed/lab/hosts.py, docs/lab-hosts.md); with --slurm the units go to a cluster
(docs/cluster.md). Which of these runs the replications is the backend (testbed/run/backends/),
chosen here once (`choose_backend`); the workers on this machine are testbed/run/local_runner.py,
the end of a run (analysis, status table, what is left) testbed/run/ending.py.
"""
from __future__ import annotations

import os
import sys
from dataclasses import asdict, is_dataclass, replace
from pathlib import Path
from typing import Any, Callable, Mapping, TextIO
from analysis.results import cell_selection
from testbed.run import meta, planning
from testbed.run.stop import Stopped, raise_on_signals
from testbed.scenario import loader as scenario_mod
from testbed.units import si_quantity
from testbed.addresses import MAX_LANE
from testbed.errors import ConfigError
from testbed.run.backends.base import Backend, BackendUnavailable, Planned
from testbed.run.backends.lab import LabBackend
from testbed.run.backends.lanes import LaneBackend
from testbed.run.backends.slurm import SlurmBackend
from testbed.run.ending import analyse
from testbed.run.lint import scenario_warnings
from testbed.run.local_runner import RunResult, Runner
from testbed.run.meta import RUN_OPTIONS_KEY
from testbed.run.options import DEFAULT_LANE_BASE, RunOptions
from testbed.run.replication_range import describe, replication_numbers
from testbed.run.results import RunDir, check_results_dir
from testbed.run.unit import plan

# what other modules and the tests take from the command's module
__all__ = ["DEFAULT_LANE_BASE", "RunOptions", "RunResult", "Runner", "analyse", "choose_backend", "run_command"]

LANE_BASE_VARIABLE = "SQUALL_LANE_BASE"


def default_lane_base() -> int:
    """$SQUALL_LANE_BASE, else 0; a ConfigError naming the variable when it is no lane number."""
    text = os.environ.get(LANE_BASE_VARIABLE, "0")
    try:
        return int(text)
    except ValueError:
        raise ConfigError(LANE_BASE_VARIABLE, f"{text!r} is not a lane number; expected a whole number "
                          f"0..{MAX_LANE}") from None


# --- checks before anything is created ------------------------------------------------------

def check_options(options: RunOptions) -> None:
    """The command line's numbers and paths, before a scenario is read or a lane touched."""
    if options.replications is not None and not 1 <= options.replications <= scenario_mod.MAX_REPLICATIONS:
        raise ConfigError("--replications", f"{options.replications} is not a number of replications; expected "
                          f"1..{scenario_mod.MAX_REPLICATIONS} (leave it out for the scenario's own)")
    first = options.first_replication
    if first is not None and not 1 <= first <= scenario_mod.MAX_REPLICATIONS:
        raise ConfigError("--first-replication", f"{first} is not a replication number; expected "
                          f"1..{scenario_mod.MAX_REPLICATIONS}")
    if not 1 <= options.parallel <= MAX_LANE + 1:
        raise ConfigError("--parallel", f"{options.parallel} is not a number of lanes; expected 1..{MAX_LANE + 1}")
    if options.testbed_file is None:
        if not 0 <= options.lane_base <= MAX_LANE:
            raise ConfigError("--lane-base", f"{options.lane_base} is not a lane number; expected 0..{MAX_LANE}")
        last = options.lane_base + options.lanes - 1
        if last > MAX_LANE and options.slurm is None:     # a node's lanes: --lanes-per-node
            spare = " and the spare of --prepare-ahead" if options.prepare_ahead else ""
            raise ConfigError("--parallel", f"{options.parallel} lanes{spare} from --lane-base {options.lane_base} "
                              f"would need lane {last}; lanes go up to {MAX_LANE}: lower --lane-base or --parallel")
    results = options.results
    if results.exists() and not results.is_dir():
        raise ConfigError("--results", f"{str(results)!r} exists and is not a directory; expected the directory "
                          "run directories are created in")
    existing = next((p for p in [results, *results.absolute().parents] if p.exists()), None)
    if existing is not None and existing.is_dir() and not os.access(existing, os.W_OK | os.X_OK):
        raise ConfigError("--results", f"{str(existing)!r} is not writable; cannot create run directories there")
    check_results_dir(results)


def check_runnable(sc: scenario_mod.Scenario, cells: list[scenario_mod.ResolvedCell]) -> None:
    """What loads but cannot run: a cell without flows would run "ok" and measure nothing."""
    empty = [c.cell_id for c in cells if not c.flows]
    if empty:
        which = "" if empty == ["default"] else f" (cells {', '.join(empty[:3])}{', ...' if len(empty) > 3 else ''})"
        raise ConfigError(f"{sc.path}: flows", f"missing{which}: a replication without flows measures nothing; "
                          "add e.g. [flows.web] kind = \"http\" workload = \"s+2s\" (docs/runner.md)")


def load_for_run(scenario_path: Path, options: RunOptions, base_dir: Path | None = None
                 ) -> tuple[scenario_mod.Scenario, list[scenario_mod.ResolvedCell]]:
    """The scenario and its selected cells, checked as far as anything can be before a run."""
    sc = scenario_mod.load(scenario_path, base_dir=base_dir)
    cells = select_cells(sc, options.cells)
    check_runnable(sc, cells)
    return sc, cells


# --- planning --------------------------------------------------------------------------------

def select_cells(sc: scenario_mod.Scenario, pattern: str | None) -> list[scenario_mod.ResolvedCell]:
    cells = [c for c in sc.cells if cell_selection.selected(c.cell_id, pattern)]
    if not cells:
        raise ConfigError("--cells", f"{pattern!r} matches no cell; the cells are "
                          f"{', '.join(c.cell_id for c in sc.cells)}")
    return cells


def expanded(sc: scenario_mod.Scenario) -> dict[str, Any]:
    return {"name": sc.name, "description": sc.description, "seed": sc.seed, "replications": sc.replications,
            "timeout_us": sc.timeout_us, **sc.tolerances.as_json(),
            "cells": [{"cell": c.cell_id, "axes": dict(c.labels),
                       "axis_si": {a: q for a, label in c.labels.items() if (q := si_quantity(label))},
                       "inapplicable": [*(f"link.{k}" for k in c.link.inapplicable_keys()),
                                        *(f"flows.{f.name}.{k}" for f in c.flows
                                          for k in f.inapplicable_keys())],
                       "link": plain(c.link),
                       **{k: plain(v) for k, v in c.sections().items()}} for c in sc.cells]}


def plain(value: Any) -> Any:
    """Dataclasses, tuples and sets as JSON-ready dicts and lists."""
    if is_dataclass(value) and not isinstance(value, type):
        return {k: plain(v) for k, v in asdict(value).items()}
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(plain(v) for v in value)
    return value


# --- the backend ---------------------------------------------------------------------------

def choose_backend(options: RunOptions) -> Backend:
    """Where the run's replications run (testbed/run/backends/): the one place that decides."""
    if options.testbed_file is not None:
        return LabBackend(options)
    if options.slurm is not None:
        return SlurmBackend(options)
    return LaneBackend(options)


# --- the command -----------------------------------------------------------------------------

def _last_from(option: int | None, otherwise: str) -> str:
    return f"--replications {option}" if option else otherwise


def start_run(scenario_path: Path, options: RunOptions, backend: Backend | None = None,
              sc: scenario_mod.Scenario | None = None) -> tuple[scenario_mod.Scenario, RunDir, range]:
    """A new run directory; its meta.json's `testbed` is what `backend` (by default the options')
    says of itself, and the run options. `sc`: the scenario when the caller has loaded it with
    load_for_run already."""
    if sc is None:
        sc, _ = load_for_run(scenario_path, options)
    reps = replication_numbers(options.first_replication, options.replications or sc.replications,
                               _last_from(options.replications, "the scenario's `replications`"))
    testbed = (backend or choose_backend(options)).describe()
    testbed |= {RUN_OPTIONS_KEY: {"replications": reps.stop - 1, "first_replication": reps.start,
                                 "cells": options.cells, "parallel": options.parallel,
                                 "scenario_file": str(scenario_path),
                                 "scenario_dir": str(Path(scenario_path).parent.absolute())}}
    programs = [p for cell in sc.cells for f in cell.flows for p in f.third_party_programs()]
    run_dir = RunDir.create(options.results, sc.name, sc.source, expanded(sc),
                            meta.collect(sc.digest, testbed, title=options.title, note=options.note,
                                         programs=programs))
    return sc, run_dir, reps


def reopen_run(root: Path, options: RunOptions) -> tuple[scenario_mod.Scenario, RunDir, range, str | None]:
    run_dir = RunDir.open(root, f"--resume {root}")
    run_meta = run_dir.read_json("meta.json")
    stored = run_meta.get("testbed", {}).get(RUN_OPTIONS_KEY, {})
    # A channel trace named relative to the original scenario file is found beside it.
    sc = scenario_mod.load(root / "scenario.toml", base_dir=meta.scenario_dir(run_meta))
    name = run_dir.read_json("expanded.json").get("name", sc.name)
    sc = replace(sc, name=name)
    last = options.replications or stored.get("replications") or sc.replications
    first = options.first_replication or stored.get("first_replication")
    reps = replication_numbers(first, last, _last_from(options.replications, "the run's replications"))
    cells = options.cells if options.cells is not None else stored.get("cells")
    return sc, run_dir, reps, cells


def open_and_plan(scenario_path: Path | None, options: RunOptions, resume: Path | None, backend: Backend,
                  sc: scenario_mod.Scenario | None = None,
                  progress: Callable[[int, int], None] | None = None) -> Planned:
    """The run directory, new or reopened (--resume), its selected cells and what is left to run;
    `progress`: see unit.plan."""
    if resume is not None:
        sc, run_dir, reps, cells_glob = reopen_run(resume, options)
    else:
        assert scenario_path is not None
        sc, run_dir, reps = start_run(scenario_path, options, backend, sc)
        cells_glob = options.cells
    cells = select_cells(sc, cells_glob)
    check_runnable(sc, cells)
    try:
        return Planned(sc, run_dir, reps, cells, plan(cells, reps, run_dir, options.redo, progress))
    except Stopped as stopped:
        stopped.run_dir = run_dir.root
        raise


def check_run(scenario_path: Path | None, options: RunOptions, resume: Path | None) -> scenario_mod.Scenario:
    """Everything `squall run` can check before it creates or removes anything: the options,
    the scenario (a new run) or the run directory and its stored scenario (--resume)."""
    check_options(options)
    if resume is None:
        assert scenario_path is not None
        return load_for_run(scenario_path, options)[0]
    sc, _, _, cells_glob = reopen_run(resume, options)
    check_runnable(sc, select_cells(sc, cells_glob))
    return sc


def run_command(scenario_path: Path | None, options: RunOptions, resume: Path | None,
                out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    try:
        return _run_command(scenario_path, options, resume, out, err)
    except Stopped as stopped:
        print(stopped.message(), file=err)
        return 128 + stopped.signum


def _run_command(scenario_path: Path | None, options: RunOptions, resume: Path | None,
                 out: TextIO, err: TextIO) -> int:
    with raise_on_signals(err):
        checked = check_run(scenario_path, options, resume)
    for warning in scenario_warnings(checked):
        print(f"squall run: warning: {warning}", file=err)
    backend = choose_backend(options)
    try:
        backend.check(checked, err)
    except BackendUnavailable as e:
        print(f"squall run: {e}", file=err)
        return 2
    try:
        # a resumed run is reopened (its meta.json kept as it is)
        with raise_on_signals(err):
            planned = open_and_plan(scenario_path, options, resume, backend, checked if resume is None else None,
                                    progress=planning.progress_printer(err))
        print(f"squall run: {planned.sc.name}: {len(planned.cells)} cells x {describe(planned.reps)}, "
              f"{planned.replications} to run {backend.where(planned.units)}; results in {planned.run_dir.root}",
              file=err)
        return backend.run(planned, out, err)
    finally:
        backend.close(err)
