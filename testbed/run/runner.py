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
instead (testbed/lab/hosts.py, docs/lab-hosts.md).
"""
from __future__ import annotations

import os
import signal
import sys
import threading
from dataclasses import asdict, dataclass, field, is_dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, TextIO
from analysis import cell_selection
from testbed.lanes import claim as lane_claim
from testbed.lanes import lane as lanes
from testbed.run import meta, planning
from testbed.scenario import loader as scenario_mod
from testbed.addresses import MAX_LANE
from testbed.errors import ConfigError
from testbed.hosts import Testbed
from testbed.lanes.hosts import NamespaceTestbed
from testbed.run.lint import scenario_warnings
from testbed.run.progress import Progress, planned_replication_s
from testbed.run.meta import RUN_OPTIONS_KEY
from testbed.run import slurm
from testbed.run.replication_range import describe, replication_numbers
from testbed.run.results import RunDir, Status, check_results_dir, failure_text
from testbed.run.slurm import SlurmOptions
from testbed.run.flow_slots import FlowSlots
from testbed.run.unit import Plan, Unit, UnitRunner, plan
from testbed.run.status import print_report

LANE_BASE_VARIABLE = "SQUALL_LANE_BASE"


def default_lane_base() -> int:
    """$SQUALL_LANE_BASE, else 0; a ConfigError naming the variable when it is no lane number."""
    text = os.environ.get(LANE_BASE_VARIABLE, "0")
    try:
        return int(text)
    except ValueError:
        raise ConfigError(LANE_BASE_VARIABLE, f"{text!r} is not a lane number; expected a whole number "
                          f"0..{MAX_LANE}") from None


DEFAULT_LANE_BASE = 0


@dataclass(frozen=True)
class RunOptions:
    parallel: int = 1
    replications: int | None = None       # default: the scenario's
    first_replication: int | None = None  # run replications first..N only (default 1; a resume: the run's)
    cells: str | None = None              # glob over cell ids
    results: Path = Path("results")
    lane_base: int = DEFAULT_LANE_BASE
    analyse: bool = True                  # at the end: `squall report`'s tables (analysis package)
    testbed_file: Path | None = None      # lab hosts over SSH (docs/lab-hosts.md) instead of lanes
    slurm: SlurmOptions | None = None     # hand the units to Slurm (docs/cluster.md) instead of lanes here
    redo: tuple[str, ...] = ()            # --resume --redo-degraded/--redo-timeouts: these statuses run again
    prepare_ahead: bool = False           # one spare lane sets up the next replication (run/flow_slots.py)

    @property
    def lanes(self) -> int:
        """Lanes of this machine the run may use: one per replication at once, and the spare."""
        return self.parallel + (1 if self.prepare_ahead else 0)


@dataclass
class RunResult:
    run_dir: Path
    statuses: dict[tuple[str, int], str] = field(default_factory=dict)
    interrupted_by: int | None = None     # the signal that stopped the run
    errors: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        if self.interrupted_by is not None:
            return 128 + self.interrupted_by
        if self.errors or any(s != "ok" for s in self.statuses.values()):
            return 1
        return 0


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


def check_lanes_free(options: RunOptions) -> None:
    """LaneBusy naming the first of the run's lanes that another squall process holds or whose
    namespaces are not squall's, before the run directory exists (the workers claim again)."""
    for number in range(options.lane_base, options.lane_base + options.lanes):
        with lane_claim.claim(number):
            lanes.check_free(number)


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
            "cells": [{"cell": c.cell_id, "axes": dict(c.labels), "link": plain(c.link),
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


# --- running ---------------------------------------------------------------------------------

class Runner:
    def __init__(self, sc: scenario_mod.Scenario, run_dir: RunDir, units: Plan, options: RunOptions,
                 stream: TextIO = sys.stderr, lab: Any = None):
        """`lab`: an open ssh_hosts.SshTestbed; then every replication runs on it, serially."""
        self.sc, self.run_dir, self.units, self.options = sc, run_dir, units, options
        self.lab = lab
        self.stop = threading.Event()
        self._todo: Iterator[Unit] = iter(units)     # units made as the workers take them
        planned = units.replications()
        workers = max(1, min(options.lanes, len(units)))     # lab hosts: 1 (check_options, _run_on_lab)
        self.lanes = [options.lane_base + i for i in range(workers)]
        # more workers than replications at once: the spare builds and sets up the next one
        self.slots = FlowSlots(options.parallel) if workers > options.parallel else None
        estimates = {cell.cell_id: planned_replication_s(cell, sc.timeout_us) for cell, _ in units.todo}
        self.progress = Progress(sc.name, planned, min(workers, options.parallel), stream, estimates=estimates)
        self.result = RunResult(run_dir.root)
        self._lock = threading.Lock()
        self._built: set[int] = set()
        self._claims: dict[int, lane_claim.LaneClaim] = {}

    def run(self) -> RunResult:
        threads = [threading.Thread(target=self._worker, args=(n,), name=f"lane-{n}", daemon=True)
                   for n in self.lanes]
        with _signals_stop(self):
            for t in threads:
                t.start()
            while any(t.is_alive() for t in threads):
                for t in threads:
                    t.join(0.2)
                self.progress.tick()
        self.progress.close()
        return self.result

    def _worker(self, lane_number: int) -> None:
        units = UnitRunner(self.run_dir, self.sc.seed, self.sc.timeout_us, self.stop,
                           fresh_testbed=lambda: self._fresh_testbed(lane_number), record=self._record,
                           started=self.progress.start,
                           provenance=meta.provenance(None if self.lab is not None else lane_number),
                           tolerances=self.sc.tolerances, slots=self.slots)
        try:
            while not self.stop.is_set():
                with self._lock:
                    unit = next(self._todo, None)
                if unit is None:
                    return
                units.run(unit)
        except Exception as e:   # the lane itself could not be built: nothing can run on it
            with self._lock:
                self.result.errors.append(f"lane {lane_number}: {failure_text(e, self.run_dir.root)}")
            self.stop.set()
        finally:
            if lane_number in self._built:     # never a lane another run owns (LaneBusy)
                lanes.teardown(lane_number)
            claim = self._claims.pop(lane_number, None)
            if claim is not None:
                claim.release()

    def _fresh_testbed(self, lane_number: int) -> Testbed:
        if self.lab is not None:
            problems = self.lab.reset()     # processes, sysctls, routes, TCP metrics as at the start
            if problems:
                raise RuntimeError(f"the lab hosts could not be reset: {'; '.join(problems)}")
            return self.lab
        if lane_number not in self._claims:
            self._claims[lane_number] = lane_claim.claim(lane_number)
        testbed = NamespaceTestbed.create(lane_number)   # tears down what was there
        self._built.add(lane_number)
        return testbed

    def _record(self, cell_id: str, rep: int, status: Status) -> None:
        with self._lock:
            self.result.statuses[(cell_id, rep)] = status.status
        # the ETA plans the work left per slot: a prepared replication's wait for one is not its work
        waited = status.details.get("timings", {}).get("slot_wait_s", 0.0)
        self.progress.record(cell_id, status.status, max(0.0, status.duration_s - waited), rep)


class _signals_stop:
    """SIGINT/SIGTERM set the runner's stop event (workers then wind down) instead of killing it."""

    def __init__(self, runner: Runner):
        self.runner = runner
        self.previous: dict[int, Any] = {}

    def __enter__(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in (signal.SIGINT, signal.SIGTERM):
            self.previous[sig] = signal.signal(sig, self._handle)

    def _handle(self, signum: int, frame: object) -> None:
        if self.runner.result.interrupted_by is None:
            self.runner.result.interrupted_by = signum
            print(f"\nsquall run: {signal.Signals(signum).name} received, stopping the replications "
                  "and tearing the lanes down ...", file=sys.stderr, flush=True)
        self.runner.stop.set()

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)


# --- the command -----------------------------------------------------------------------------

def _last_from(option: int | None, otherwise: str) -> str:
    return f"--replications {option}" if option else otherwise


def start_run(scenario_path: Path, options: RunOptions, lab_hosts: dict[str, Any] | None = None,
              sc: scenario_mod.Scenario | None = None) -> tuple[scenario_mod.Scenario, RunDir, int]:
    """`lab_hosts`: with --testbed, what each lab host runs (meta.json testbed.hosts); `sc`: the
    scenario when the caller has loaded it with load_for_run already."""
    if sc is None:
        sc, _ = load_for_run(scenario_path, options)
    reps = replication_numbers(options.first_replication, options.replications or sc.replications,
                               _last_from(options.replications, "the scenario's `replications`"))
    testbed: dict[str, Any] = {"backend": "namespaces",
                               "lanes": list(range(options.lane_base, options.lane_base + options.lanes)),
                               "parallel": options.parallel, "prepare_ahead": options.prepare_ahead}
    if options.slurm is not None:
        testbed = {"backend": "slurm", "lane_base": options.lane_base,
                   "lanes_per_node": options.slurm.lanes_per_node, "partition": options.slurm.partition,
                   "prepare_ahead": options.prepare_ahead}
    if options.testbed_file is not None:
        testbed = {"backend": "ssh", "testbed_file": str(options.testbed_file),
                   "testbed_source": options.testbed_file.read_text(), "hosts": lab_hosts or {}}
    testbed |= {RUN_OPTIONS_KEY: {"replications": reps.stop - 1, "first_replication": reps.start,
                                 "cells": options.cells, "parallel": options.parallel,
                                 "scenario_file": str(scenario_path),
                                 "scenario_dir": str(Path(scenario_path).parent.absolute())}}
    run_dir = RunDir.create(options.results, sc.name, sc.source, expanded(sc), meta.collect(sc.digest, testbed))
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


def open_and_plan(scenario_path: Path | None, options: RunOptions, resume: Path | None,
                  lab_hosts: dict[str, Any] | None = None, sc: scenario_mod.Scenario | None = None,
                  progress: Callable[[int, int], None] | None = None
                  ) -> tuple[scenario_mod.Scenario, RunDir, range, list[scenario_mod.ResolvedCell], Plan]:
    """The run directory, new or reopened (--resume), its selected cells and what is left to run;
    `progress`: see unit.plan."""
    if resume is not None:
        sc, run_dir, reps, cells_glob = reopen_run(resume, options)
    else:
        assert scenario_path is not None
        sc, run_dir, reps = start_run(scenario_path, options, lab_hosts, sc)
        cells_glob = options.cells
    cells = select_cells(sc, cells_glob)
    check_runnable(sc, cells)
    try:
        return sc, run_dir, reps, cells, plan(cells, reps, run_dir, options.redo, progress)
    except planning.Stopped as stopped:
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
    except planning.Stopped as stopped:
        print(stopped.message(), file=err)
        return 128 + stopped.signum


def _run_command(scenario_path: Path | None, options: RunOptions, resume: Path | None,
                 out: TextIO, err: TextIO) -> int:
    with planning.StopBeforeRunning(err):
        checked = check_run(scenario_path, options, resume)
    for warning in scenario_warnings(checked):
        print(f"squall run: warning: {warning}", file=err)
    sc = checked if resume is None else None      # a resumed run is reopened by open_and_plan
    if options.testbed_file is None and options.slurm is None and os.geteuid() != 0:
        print("squall run: needs root (network namespaces, TUN devices, tc)", file=err)
        return 2
    if options.testbed_file is not None:
        return _run_on_lab(scenario_path, options, resume, out, err, sc)
    if options.slurm is not None:
        return _run_on_slurm(scenario_path, options, resume, out, err, sc)
    removed = lanes.cleanup_leftovers()
    if removed:
        print(f"squall run: removed leftover lanes of dead runs: {', '.join(map(str, removed))}", file=err)
    check_lanes_free(options)
    with planning.StopBeforeRunning(err):
        sc, run_dir, reps, cells, units = open_and_plan(scenario_path, options, resume, sc=sc,
                                                        progress=planning.progress_printer(err))
    lane_runner = Runner(sc, run_dir, units, options, err) if units else None
    spare = " and a spare lane setting up the next replication (--prepare-ahead)" \
        if lane_runner is not None and lane_runner.slots is not None else ""
    print(f"squall run: {sc.name}: {len(cells)} cells x {describe(reps)}, "
          f"{sum(units.replications().values())} to run on {min(options.parallel, max(1, len(units)))} "
          f"lane(s){spare}; results in {run_dir.root}", file=err)
    result = lane_runner.run() if lane_runner is not None else RunResult(run_dir.root)
    return _finish(sc, run_dir, cells, reps, result, options, out, err)


def _run_on_lab(scenario_path: Path | None, options: RunOptions, resume: Path | None,
                out: TextIO, err: TextIO, checked: scenario_mod.Scenario | None) -> int:
    """`--testbed FILE`: the lab hosts are checked before the run directory is made, then every
    replication runs on them in turn (docs/lab-hosts.md)."""
    from testbed.lab import hosts as ssh_hosts
    from testbed.lab import testbed_file

    assert options.testbed_file is not None
    if options.parallel != 1:
        raise ConfigError("--parallel", f"{options.parallel}: a testbed file names one set of lab hosts, "
                          "so its replications run one at a time; leave out --parallel")
    if options.prepare_ahead:
        raise ConfigError("--prepare-ahead", "a testbed file names one set of lab hosts, so there is no "
                          "spare to set up the next replication on; leave out --prepare-ahead")
    lab = testbed_file.load(options.testbed_file)
    sc = checked if checked is not None else reopen_run(resume, options)[0]  # type: ignore[arg-type]
    routers = [c.router for c in sc.cells]
    needs = {"needs_nginx": any(f.web_pages() for c in sc.cells for f in c.flows),
             "needs_tc": any(r is not None and r.engine == "tc" for r in routers)}
    try:
        testbed = ssh_hosts.SshTestbed.open(lab, **needs)
    except ssh_hosts.LabError as e:
        print(f"squall run: {e}", file=err)
        return 2
    try:
        hosts = testbed.host_info() if resume is None else None     # a resumed run keeps its meta.json
        sc, run_dir, reps, cells, units = open_and_plan(scenario_path, options, resume, hosts, checked)
        print(f"squall run: {sc.name}: {len(cells)} cells x {describe(reps)}, "
              f"{sum(units.replications().values())} to run on the lab hosts of {lab.path}; "
              f"results in {run_dir.root}", file=err)
        result = Runner(sc, run_dir, units, options, err, lab=testbed).run() if units else RunResult(run_dir.root)
    finally:
        problems = testbed.close()
    for problem in problems:
        print(f"squall run: could not restore: {problem}", file=err)
    return _finish(sc, run_dir, cells, reps, result, options, out, err)


def _run_on_slurm(scenario_path: Path | None, options: RunOptions, resume: Path | None,
                  out: TextIO, err: TextIO, checked: scenario_mod.Scenario | None) -> int:
    """`--slurm`: the units go to the cluster (docs/cluster.md); with --wait, until they are done."""
    assert options.slurm is not None
    slurm.max_array_size()     # a submit host answers; found out before the run directory is made
    sc, run_dir, reps, cells, units = open_and_plan(scenario_path, options, resume, sc=checked)
    print(f"squall run: {sc.name}: {len(cells)} cells x {describe(reps)}, "
          f"{sum(units.replications().values())} to run as {len(units)} Slurm unit(s); "
          f"results in {run_dir.root}", file=err)
    if not units:
        print_report(run_dir, cells, reps, out)
        return 1 if _say_kept(run_dir, cells, reps, err, " --slurm") else 0
    submission = slurm.submit(run_dir.root, sc.name, units, options.lane_base, options.slurm, err,
                              redo=options.redo, analyse=options.analyse)
    if not options.slurm.wait:
        return 0
    slurm.wait(run_dir.root, submission, err)
    print_report(run_dir, cells, reps, out)
    left = plan(cells, reps, run_dir)
    if left:
        print(f"squall run: {sum(left.replications().values())} replication(s) not ok; redo them with:\n"
              f"  squall run --resume {run_dir.root} --slurm", file=err)
    kept = _say_kept(run_dir, cells, reps, err, " --slurm")
    return 1 if left or kept else 0


def _finish(sc: scenario_mod.Scenario, run_dir: RunDir, cells: list[scenario_mod.ResolvedCell], reps: range,
            result: RunResult, options: RunOptions, out: TextIO, err: TextIO) -> int:
    if options.analyse and result.interrupted_by is None:
        analyse(run_dir.root, out, err, run_dir.incomplete([c.cell_id for c in cells], reps))
    print_report(run_dir, cells, reps, out)
    for error in result.errors:
        print(f"squall run: {error}", file=err)
    if result.interrupted_by is not None or result.errors:
        print(f"squall run: stopped; every lane is torn down. Resume with:\n"
              f"  squall run --resume {run_dir.root}", file=err)
    elif any(s == "failed" for s in result.statuses.values()):
        print(f"squall run: some replications failed (reasons in their status.json); redo them with:\n"
              f"  squall run --resume {run_dir.root}", file=err)
    if result.interrupted_by is not None:
        return result.exit_code
    # Degraded and timed-out ones a resume kept count too: the run is not all ok.
    kept = _say_kept(run_dir, cells, reps, err)
    return max(result.exit_code, 1 if kept else 0)


KEPT_NOT_OK = {
    "degraded": ("degraded (timing error or CPU wait beyond the scenario's timing_tolerance or "
                 "cpu_wait_tolerance; numbers in their status.json)", "--redo-degraded"),
    "timeout": ("timed out with flows unfinished: kept as results, their unfinished times counted "
                "as longer than the timeout (analysis/README.md)", "--redo-timeouts"),
}


def _say_kept(run_dir: RunDir, cells: list[scenario_mod.ResolvedCell], reps: range, err: TextIO,
              engine: str = "") -> int:
    """How many of the selected replications are results that are not ok (degraded, timed
    out), and how to run them again."""
    statuses = [s.status for c in cells for r in reps if (s := run_dir.status(c.cell_id, r)) is not None]
    for status, (what, flag) in KEPT_NOT_OK.items():
        if statuses.count(status):
            print(f"squall run: {statuses.count(status)} replication(s) {what}; to run them again:\n"
                  f"  squall run --resume {run_dir.root} {flag}{engine}", file=err)
    return sum(statuses.count(status) for status in KEPT_NOT_OK)


# --- the report ------------------------------------------------------------------------------

def analyse(root: Path, out: TextIO, err: TextIO, incomplete: list[str] | None = None) -> None:
    """The analysis package's report of the run (summary/*.csv, report.md, report.html, no plots).

    Its failure is reported, never the run's: the replications are recorded either way and
    `squall report RUN_DIR` can be run again. `incomplete`: the replications without an ok
    result (RunDir.incomplete), named either way."""
    incomplete = incomplete or []
    if incomplete:
        shown = "; ".join(incomplete[:20]) + (f"; and {len(incomplete) - 20} more" if len(incomplete) > 20 else "")
        recorded = f"{len(incomplete)} replication(s) are missing, partial or failed ({shown})"
        print(f"squall run: {recorded}; the analysis counts them as failed", file=err)
    else:
        recorded = "every replication is recorded ok"
    try:
        from analysis.atomic_file import write_text_atomically
        from analysis.report import build_tables, render_markdown
        from analysis.report_html import render_html
        from analysis.run import analyse_run
        from analysis.summary import write_summary

        analysis = analyse_run(root, progress=err)
        summary = write_summary(analysis)
        tables = build_tables(analysis)
        markdown = render_markdown(analysis, tables)
        write_text_atomically(summary / "report.md", markdown)
        write_text_atomically(summary / "report.html", render_html(analysis, tables, []))
        print(markdown, file=out)
        print(f"squall run: analysis in {summary} (report.md, report.html, connections.csv, runs.csv, "
              f"cells.csv); plots with `squall plot {root}`", file=err)
    except Exception as e:   # noqa: BLE001 — another package's failure must not lose the run
        print(f"squall run: the analysis failed ({type(e).__name__}: {e}); {recorded}; "
              f"retry with `squall report {root}`", file=err)
