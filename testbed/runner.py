"""`squall run`: every (cell, replication) of a scenario, on one or more lanes (docs/runner.md).

A run directory (testbed/results.py) is created, or reopened with --resume; each
replication that has no ok result is run on a lane of its own worker (K workers with
--parallel K, lanes lane_base … lane_base+K−1), rebuilt before every replication so no
state is carried over — except the replications of a CBI cell (a TCP profile that keeps
its metrics), which run in order on one lane without rebuilding it in between.
A failed or hung replication is recorded and the matrix goes on. SIGINT/SIGTERM stop
the workers, tear every lane down and leave a run that --resume completes.
With --testbed FILE the replications run one after the other on three lab hosts over SSH
instead (testbed/ssh_hosts.py, docs/lab-hosts.md).
"""
from __future__ import annotations

import fnmatch
import json
import os
import queue
import signal
import statistics
import sys
import threading
from dataclasses import asdict, dataclass, field, is_dataclass, replace
from pathlib import Path
from typing import Any, Mapping, TextIO

from . import flows as _flows  # noqa: F401  registers the [flows] parser
from . import lane as lanes
from . import meta, replication
from . import router_section as _router_section  # noqa: F401  registers the [router] parser
from . import scenario as scenario_mod
from . import tcp_section as _tcp_section  # noqa: F401  registers the [tcp] parser
from .errors import ConfigError
from .hosts import NamespaceTestbed, Testbed
from .progress import Progress
from .results import RunDir, Status, utc_stamp

DEFAULT_LANE_BASE = int(os.environ.get("SQUALL_LANE_BASE", "0"))
RUN_OPTIONS_KEY = "run"


@dataclass(frozen=True)
class RunOptions:
    parallel: int = 1
    replications: int | None = None       # default: the scenario's
    cells: str | None = None              # glob over cell ids
    results: Path = Path("results")
    lane_base: int = DEFAULT_LANE_BASE
    analyse: bool = True                  # at the end: `squall report`'s tables (analysis package)
    testbed_file: Path | None = None      # lab hosts over SSH (docs/lab-hosts.md) instead of lanes


@dataclass(frozen=True)
class Unit:
    """Replications of one cell that one worker runs in order."""
    cell: scenario_mod.ResolvedCell
    replications: tuple[int, ...]
    keep_lane: bool                       # CBI: metrics must survive between them


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


# --- planning --------------------------------------------------------------------------------

def select_cells(sc: scenario_mod.Scenario, pattern: str | None) -> list[scenario_mod.ResolvedCell]:
    cells = [c for c in sc.cells if pattern is None or fnmatch.fnmatchcase(c.cell_id, pattern)]
    if not cells:
        raise ConfigError("--cells", f"{pattern!r} matches no cell; the cells are "
                          f"{', '.join(c.cell_id for c in sc.cells)}")
    return cells


def plan(cells: list[scenario_mod.ResolvedCell], replications: int, run_dir: RunDir) -> list[Unit]:
    units = []
    for cell in cells:
        reps = tuple(r for r in range(1, replications + 1) if run_dir.needs_run(cell.cell_id, r))
        if not reps:
            continue
        tcp = cell.sections.get("tcp")
        if tcp is not None and not tcp.flush_metrics:
            units.append(Unit(cell, reps, keep_lane=True))
        else:
            units.extend(Unit(cell, (r,), keep_lane=False) for r in reps)
    return units


def expanded(sc: scenario_mod.Scenario) -> dict[str, Any]:
    return {"name": sc.name, "description": sc.description, "seed": sc.seed, "replications": sc.replications,
            "timeout_us": sc.timeout_us,
            "cells": [{"cell": c.cell_id, "axes": dict(c.labels), "link": plain(c.link),
                       **{k: plain(v) for k, v in c.sections.items()}} for c in sc.cells]}


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
    def __init__(self, sc: scenario_mod.Scenario, run_dir: RunDir, units: list[Unit], options: RunOptions,
                 stream: TextIO = sys.stderr, lab: Any = None):
        """`lab`: an open ssh_hosts.SshTestbed; then every replication runs on it, serially."""
        self.sc, self.run_dir, self.units, self.options = sc, run_dir, units, options
        self.lab = lab
        self.stop = threading.Event()
        self.queue: queue.Queue[Unit] = queue.Queue()
        for unit in units:
            self.queue.put(unit)
        planned: dict[str, int] = {}
        for unit in units:
            planned[unit.cell.cell_id] = planned.get(unit.cell.cell_id, 0) + len(unit.replications)
        workers = max(1, min(options.parallel, len(units)))
        self.lanes = [options.lane_base + i for i in range(workers)]
        self.progress = Progress(sc.name, planned, len(self.lanes), stream)
        self.result = RunResult(run_dir.root)
        self._lock = threading.Lock()
        self._built: set[int] = set()

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
        testbed: Any = None
        try:
            while not self.stop.is_set():
                try:
                    unit = self.queue.get_nowait()
                except queue.Empty:
                    return
                testbed = self._run_unit(unit, lane_number, testbed)
        except Exception as e:   # the lane itself could not be built: nothing can run on it
            with self._lock:
                self.result.errors.append(f"lane {lane_number}: {type(e).__name__}: {e}")
            self.stop.set()
        finally:
            if lane_number in self._built:     # never a lane another run owns (LaneBusy)
                lanes.teardown(lane_number)

    def _fresh_testbed(self, lane_number: int) -> Testbed:
        if self.lab is not None:
            problems = self.lab.reset()     # processes, sysctls, routes, TCP metrics as at the start
            if problems:
                raise RuntimeError(f"the lab hosts could not be reset: {'; '.join(problems)}")
            return self.lab
        testbed = NamespaceTestbed.create(lane_number)   # tears down what was there
        self._built.add(lane_number)
        return testbed

    def _run_unit(self, unit: Unit, lane_number: int, testbed: Any) -> Any:
        previous_ok = False
        for rep in unit.replications:
            if self.stop.is_set():
                break
            fresh = testbed is None or not (unit.keep_lane and previous_ok)
            if fresh:
                testbed = self._fresh_testbed(lane_number)
            job = replication.Job(unit.cell, rep, self.sc.seed, self.sc.timeout_us)
            work = self.run_dir.begin(unit.cell.cell_id, rep)
            try:
                status = replication.run(testbed, job, work, self.stop)
            except replication.Interrupted:
                break      # the .partial directory stays; RunDir.begin keeps it as an attempt on resume
            except Exception as e:
                status = Status("failed", f"runner error: {type(e).__name__}: {e}", utc_stamp(), 0.0,
                                {"testbed": testbed.describe()})
            status.details["fresh_lane"] = fresh    # False: a CBI successor kept the TCP metrics cache
            self.run_dir.finish(unit.cell.cell_id, rep, work, status)
            previous_ok = status.status == "ok"
            with self._lock:
                self.result.statuses[(unit.cell.cell_id, rep)] = status.status
            self.progress.record(unit.cell.cell_id, status.status, status.duration_s)
        return testbed


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

def start_run(scenario_path: Path, options: RunOptions,
              lab_hosts: dict[str, Any] | None = None) -> tuple[scenario_mod.Scenario, RunDir, int]:
    """`lab_hosts`: with --testbed, what each lab host runs (meta.json testbed.hosts)."""
    sc = scenario_mod.load(scenario_path)
    replications = options.replications or sc.replications
    select_cells(sc, options.cells)
    testbed: dict[str, Any] = {"backend": "namespaces",
                               "lanes": list(range(options.lane_base, options.lane_base + options.parallel))}
    if options.testbed_file is not None:
        testbed = {"backend": "ssh", "testbed_file": str(options.testbed_file),
                   "testbed_source": options.testbed_file.read_text(), "hosts": lab_hosts or {}}
    testbed |= {RUN_OPTIONS_KEY: {"replications": replications, "cells": options.cells, "parallel": options.parallel,
                                 "scenario_file": str(scenario_path)}}
    run_dir = RunDir.create(options.results, sc.name, sc.source, expanded(sc), meta.collect(sc.digest, testbed))
    return sc, run_dir, replications


def reopen_run(root: Path, options: RunOptions) -> tuple[scenario_mod.Scenario, RunDir, int, str | None]:
    run_dir = RunDir.open(root)
    stored = json.loads((root / "meta.json").read_text()).get("testbed", {}).get(RUN_OPTIONS_KEY, {})
    sc = scenario_mod.load(root / "scenario.toml")
    name = json.loads((root / "expanded.json").read_text()).get("name", sc.name)
    sc = replace(sc, name=name)
    replications = options.replications or stored.get("replications") or sc.replications
    cells = options.cells if options.cells is not None else stored.get("cells")
    return sc, run_dir, replications, cells


def open_and_plan(scenario_path: Path | None, options: RunOptions, resume: Path | None,
                  lab_hosts: dict[str, Any] | None = None
                  ) -> tuple[scenario_mod.Scenario, RunDir, int, list[scenario_mod.ResolvedCell], list[Unit]]:
    """The run directory, new or reopened (--resume), its selected cells and what is left to run."""
    if resume is not None:
        sc, run_dir, replications, cells_glob = reopen_run(resume, options)
    else:
        assert scenario_path is not None
        sc, run_dir, replications = start_run(scenario_path, options, lab_hosts)
        cells_glob = options.cells
    cells = select_cells(sc, cells_glob)
    return sc, run_dir, replications, cells, plan(cells, replications, run_dir)


def run_command(scenario_path: Path | None, options: RunOptions, resume: Path | None,
                out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    if options.parallel < 1:
        raise ConfigError("--parallel", f"{options.parallel} is not a number of lanes >= 1")
    if options.testbed_file is not None:
        return _run_on_lab(scenario_path, options, resume, out, err)
    removed = lanes.cleanup_leftovers()
    if removed:
        print(f"squall run: removed leftover lanes of dead runs: {', '.join(map(str, removed))}", file=err)
    sc, run_dir, replications, cells, units = open_and_plan(scenario_path, options, resume)
    print(f"squall run: {sc.name}: {len(cells)} cells x {replications} replications, "
          f"{sum(len(u.replications) for u in units)} to run on {min(options.parallel, max(1, len(units)))} "
          f"lane(s); results in {run_dir.root}", file=err)
    result = Runner(sc, run_dir, units, options, err).run() if units else RunResult(run_dir.root)
    return _finish(sc, run_dir, cells, replications, result, options, out, err)


def _run_on_lab(scenario_path: Path | None, options: RunOptions, resume: Path | None,
                out: TextIO, err: TextIO) -> int:
    """`--testbed FILE`: the lab hosts are checked before the run directory is made, then every
    replication runs on them in turn (docs/lab-hosts.md)."""
    from . import ssh_hosts, testbed_file

    assert options.testbed_file is not None
    if options.parallel != 1:
        raise ConfigError("--parallel", f"{options.parallel}: a testbed file names one set of lab hosts, "
                          "so its replications run one at a time; leave out --parallel")
    lab = testbed_file.load(options.testbed_file)
    sc = scenario_mod.load(resume / "scenario.toml" if resume is not None else scenario_path)  # type: ignore[operator]
    routers = [c.sections.get("router") for c in sc.cells]
    needs = {"needs_nginx": any(getattr(f, "kind", "") == "http" for c in sc.cells for f in c.sections.get("flows", ())),
             "needs_tc": any(r is not None and r.engine == "tc" for r in routers)}
    try:
        testbed = ssh_hosts.SshTestbed.open(lab, **needs)
    except ssh_hosts.LabError as e:
        print(f"squall run: {e}", file=err)
        return 2
    try:
        hosts = testbed.host_info() if resume is None else None     # a resumed run keeps its meta.json
        sc, run_dir, replications, cells, units = open_and_plan(scenario_path, options, resume, hosts)
        print(f"squall run: {sc.name}: {len(cells)} cells x {replications} replications, "
              f"{sum(len(u.replications) for u in units)} to run on the lab hosts of {lab.path}; "
              f"results in {run_dir.root}", file=err)
        result = Runner(sc, run_dir, units, options, err, lab=testbed).run() if units else RunResult(run_dir.root)
    finally:
        problems = testbed.close()
    for problem in problems:
        print(f"squall run: could not restore: {problem}", file=err)
    return _finish(sc, run_dir, cells, replications, result, options, out, err)


def _finish(sc: scenario_mod.Scenario, run_dir: RunDir, cells: list[scenario_mod.ResolvedCell], replications: int,
            result: RunResult, options: RunOptions, out: TextIO, err: TextIO) -> int:
    if options.analyse and result.interrupted_by is None:
        analyse(run_dir.root, out, err)
    print_report(run_dir, cells, replications, out)
    for error in result.errors:
        print(f"squall run: {error}", file=err)
    if result.interrupted_by is not None or result.errors:
        print(f"squall run: stopped; every lane is torn down. Resume with:\n"
              f"  squall run --resume {run_dir.root}", file=err)
    elif result.exit_code:
        print(f"squall run: some replications failed (reasons in their status.json); redo them with:\n"
              f"  squall run --resume {run_dir.root}", file=err)
    return result.exit_code


# --- the report ------------------------------------------------------------------------------

def analyse(root: Path, out: TextIO, err: TextIO) -> None:
    """The analysis package's report of the run (summary/*.csv, report.md, report.html, no plots).

    Its failure is reported, never the run's: the replications are recorded either way and
    `squall report RUN_DIR` can be run again."""
    try:
        from analysis.report import build_tables, render_markdown
        from analysis.report_html import render_html
        from analysis.run import analyse_run
        from analysis.summary import write_summary

        analysis = analyse_run(root, progress=err)
        summary = write_summary(analysis)
        tables = build_tables(analysis)
        markdown = render_markdown(analysis, tables)
        (summary / "report.md").write_text(markdown)
        (summary / "report.html").write_text(render_html(analysis, tables, []))
        print(markdown, file=out)
        print(f"squall run: analysis in {summary} (report.md, report.html, connections.csv, runs.csv, "
              f"cells.csv); plots with `squall plot {root}`", file=err)
    except Exception as e:   # noqa: BLE001 — another package's failure must not lose the run
        print(f"squall run: the analysis failed ({type(e).__name__}: {e}); the results are complete, "
              f"retry with `squall report {root}`", file=err)


def print_report(run_dir: RunDir, cells: list[scenario_mod.ResolvedCell], replications: int, out: TextIO) -> None:
    print(f"results: {run_dir.root}", file=out)
    rows = [cell_row(run_dir, cell.cell_id, replications) for cell in cells]
    print_table(rows, out)


def print_table(rows: list[list[Any]], out: TextIO) -> None:
    headers = ["cell", "ok", "failed", "timeout", "missing", "median of the flows' main metric"]
    widths = [max(len(str(r[i])) for r in rows + [headers]) for i in range(len(headers) - 1)]
    for row in [headers] + rows:
        print("  ".join(str(v).ljust(w) for v, w in zip(row, widths)) + "  " + str(row[-1]), file=out)


def cell_row(run_dir: RunDir, cell_id: str, replications: int) -> list[Any]:
    counts = {"ok": 0, "failed": 0, "timeout": 0, "missing": 0}
    workloads = []
    for rep in range(1, replications + 1):
        status = run_dir.status(cell_id, rep)
        counts["missing" if status is None else status.status] += 1
        path = run_dir.replication(cell_id, rep) / replication.WORKLOADS_FILE
        if status is not None and status.status == "ok" and path.is_file():
            workloads.append(json.loads(path.read_text()))
    return [cell_id, counts["ok"], counts["failed"], counts["timeout"], counts["missing"], flow_medians(workloads)]


def flow_medians(workloads: list[dict[str, Any]]) -> str:
    """The median over ok replications of each flow's main metric, from the generators' summaries."""
    if not workloads:
        return "-"
    parts = []
    for name, first in workloads[0].items():
        values: dict[str, list[float]] = {}
        for w in workloads:
            for metric, value in main_metrics(w.get(name, {})).items():
                values.setdefault(metric, []).append(value)
        shown = ", ".join(f"{metric} {_fmt(metric, statistics.median(v))}" for metric, v in values.items())
        parts.append(f"{name}: {shown or '-'}")
    return "; ".join(parts)


def main_metrics(entry: Mapping[str, Any]) -> dict[str, float]:
    kind = entry.get("kind")
    if kind == "http":
        s = (entry.get("client") or {}).get("summary") or {}
        return {"page time": s["response_time_us"] / 1e6} if "response_time_us" in s else {}
    if kind == "bulk":
        s = (entry.get("sender") or {}).get("summary") or {}
        if "end_us" not in s or "connect_start_us" not in s:
            return {}
        elapsed = (s["end_us"] - s["connect_start_us"]) / 1e6
        return {"elapsed": elapsed, "goodput": s["bytes"] * 8 / elapsed if elapsed > 0 else 0.0}
    if kind == "udp":
        s = (entry.get("receiver") or {}).get("summary") or {}
        keys = {"throughput": "throughput_bps", "jitter": "jitter_mean_us", "loss": "loss"}
        return {k: float(s[v]) for k, v in keys.items() if v in s}
    return {}


def _fmt(metric: str, value: float) -> str:
    if metric in ("page time", "elapsed"):
        return f"{value:.2f} s"
    if metric in ("goodput", "throughput"):
        return f"{value / 1000:.1f} kbit/s"
    if metric == "jitter":
        return f"{value / 1000:.1f} ms"
    if metric == "loss":
        return f"{value * 100:.1f} %"
    return f"{value:g}"


def status_command(root: Path, out: TextIO = sys.stdout) -> int:
    """`squall status RUN_DIR`: per cell, ok/failed/timeout/missing and the medians."""
    run_dir = RunDir.open(root)
    exp = json.loads((root / "expanded.json").read_text())
    stored = json.loads((root / "meta.json").read_text()).get("testbed", {}).get(RUN_OPTIONS_KEY, {})
    replications = stored.get("replications") or exp["replications"]
    # A resume with a larger --replications adds replications the stored options do not know.
    replications = max([replications] + [rep for _, rep, _ in run_dir.statuses()])
    cell_ids = [c["cell"] for c in exp["cells"]]
    pattern = stored.get("cells")
    cell_ids = [c for c in cell_ids if pattern is None or fnmatch.fnmatchcase(c, pattern)]
    rows = [cell_row(run_dir, c, replications) for c in cell_ids]
    print(f"run {root}: {len(cell_ids)} cells x {replications} replications", file=out)
    print_table(rows, out)
    for cell_id, rep, status in run_dir.statuses():
        if status.status != "ok":
            print(f"{cell_id} rep-{rep:02d}: {status.status}: {status.reason}", file=out)
    incomplete = any(r[2] or r[3] or r[4] for r in rows)
    return 1 if incomplete else 0
