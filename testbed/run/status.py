"""What a run has done so far, as a table: the end of `squall run` and `squall status RUN_DIR`
(or, with --json, one JSON object).

Per cell: ok/failed/timeout/degraded/missing counts and the median over the ok replications of
each flow's main metric: a page's and a transfer's from the generators' own summaries
(workloads.json), which need no analysis; UDP throughput, jitter and loss (of a UDP flow, or a
command flow's datagrams) from the run's analysis (summary/analysis.json, the numbers the
report prints), absent until it has run; per replication its status and reason; the Slurm jobs
of a --slurm run: every unit's Slurm state (final ones also after Slurm forgot them,
run/slurm_jobs.py), and for a task that did not complete, its node, exit code and the last line
it wrote (a revision mismatch, a missing results directory, a crash: failures outside any
replication).
"""
from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any, Mapping, TextIO

from analysis.results import cell_selection
from analysis.results.directory import WORKLOADS_FILE
from testbed.run.meta import RUN_OPTIONS_KEY
from testbed.run.replication_range import describe
from testbed.run.results import STATUSES, RunDir
from testbed.run import slurm_jobs
from testbed.run.slurm_jobs import SlurmError, TaskState
from testbed.run.submission import Submission, all_submissions
from testbed.scenario.cell import ResolvedCell
from testbed.scenario.flows import FLOW_TYPES

COUNTED = (*STATUSES, "missing")      # the table's count columns, in this order


def print_report(run_dir: RunDir, cells: list[ResolvedCell], reps: range, out: TextIO) -> None:
    print(f"results: {run_dir.root}", file=out)
    analysed = analysed_values(run_dir.root)
    rows = [cell_row(run_dir, cell.cell_id, reps, analysed) for cell in cells]
    print_table(rows, out)


def print_table(rows: list[list[Any]], out: TextIO) -> None:
    headers = ["cell", *COUNTED, "median of the flows' main metric over the ok replications"]
    widths = [max(len(str(r[i])) for r in rows + [headers]) for i in range(len(headers) - 1)]
    for row in [headers] + rows:
        print("  ".join(str(v).ljust(w) for v, w in zip(row, widths)) + "  " + str(row[-1]), file=out)


def cell_row(run_dir: RunDir, cell_id: str, reps: range,
             analysed: Mapping[tuple[str, int], Mapping[str, float | None]] | None = None) -> list[Any]:
    """The table's row: the cell, its counts, the medians as text."""
    state = cell_state(run_dir, cell_id, reps, analysed)
    return [cell_id, *state["counts"].values(), medians_text(state["medians"])]


def analysed_values(root: Path) -> dict[tuple[str, int], dict[str, float | None]]:
    """(cell, replication) -> the run-level values of the run's analysis; {} before it ran."""
    from analysis.results.directory import ANALYSIS_JSON, SUMMARY_DIR

    path = root / SUMMARY_DIR / ANALYSIS_JSON
    if not path.is_file():
        return {}
    return {(c["cell"], r["rep"]): r["values"] for c in json.loads(path.read_text())["cells"]
            for r in c["replications"]}


# a UDP main metric -> (the analysis' value after `<flow>.` or `<flow>.udp.`, its factor)
UDP_METRICS = {"throughput": ("throughput_Bps", 8.0),    # bit/s
               "jitter": ("jitter_mean_ms", 1e-3),        # s
               "loss_pct": ("loss_pct", 1.0)}             # %


def udp_main_metrics(values: Mapping[str, float | None], flow: str, kind: str) -> dict[str, float]:
    """A flow's UDP main metrics from its replication's analysed values."""
    prefix = f"{flow}.udp" if kind == "command" else flow
    out = {}
    for metric, (name, factor) in UDP_METRICS.items():
        value = values.get(f"{prefix}.{name}")
        if value is not None:
            out[metric] = value * factor
    return out


def cell_state(run_dir: RunDir, cell_id: str, selected: range,
               analysed: Mapping[tuple[str, int], Mapping[str, float | None]] | None = None) -> dict[str, Any]:
    """A cell's counts per status, its flows' median main metrics and each replication's status;
    `analysed`: the run's analysed values (analysed_values)."""
    counts = dict.fromkeys(COUNTED, 0)
    workloads, reps = [], []
    for rep in selected:
        status = run_dir.status(cell_id, rep)
        counts["missing" if status is None else status.status] += 1
        reps.append({"replication": rep, "status": "missing"} if status is None else
                    {"replication": rep, "status": status.status, "reason": status.reason,
                     "started_utc": status.started_utc, "duration_s": status.duration_s})
        path = run_dir.replication(cell_id, rep) / WORKLOADS_FILE
        if status is not None and status.status == "ok" and path.is_file():
            workloads.append((json.loads(path.read_text()), (analysed or {}).get((cell_id, rep), {})))
    return {"cell": cell_id, "counts": counts, "medians": median_metrics(workloads), "replications": reps}


def median_metrics(workloads: list[tuple[dict[str, Any], Mapping[str, float | None]]]) -> dict[str, dict[str, float]]:
    """Per flow (in the order of the first replication), the median over the ok replications of each
    of its main metrics: from the generators' summaries and (UDP) the replication's analysed values,
    given as (workloads.json, values) pairs; in seconds, bit/s and percent (`loss_pct`)."""
    medians: dict[str, dict[str, float]] = {}
    for name in workloads[0][0] if workloads else {}:
        values: dict[str, list[float]] = {}
        for w, analysed in workloads:
            entry = w.get(name, {})
            found = main_metrics(entry) | udp_main_metrics(analysed, name, entry.get("kind", ""))
            for metric, value in found.items():
                values.setdefault(metric, []).append(value)
        medians[name] = {metric: statistics.median(v) for metric, v in values.items()}
    return medians


def medians_text(medians: Mapping[str, Mapping[str, float]]) -> str:
    if not medians:
        return "-"
    return "; ".join(f"{name}: {', '.join(f'{_LABELS.get(m, m)} {_fmt(m, v)}' for m, v in metrics.items()) or '-'}"
                     for name, metrics in medians.items())


_LABELS = {"loss_pct": "loss"}


def main_metrics(entry: Mapping[str, Any]) -> dict[str, float]:
    """The main metrics of a flow's workloads.json entry, as its kind reads them; {} for an unknown kind."""
    flow_type = FLOW_TYPES.get(entry.get("kind", ""))
    return flow_type.main_metrics(entry) if flow_type else {}


def _fmt(metric: str, value: float) -> str:
    if metric in ("page time", "elapsed", "run time"):
        return f"{value:.2f} s"
    if metric in ("goodput", "throughput"):
        return f"{value / 1000:.1f} kbit/s"
    if metric in ("jitter", "RTT"):
        return f"{value * 1000:.1f} ms"
    if metric == "loss_pct":
        return f"{value:.1f} %"
    return f"{value:g}"


def status_command(root: Path, out: TextIO | None = None, as_json: bool = False) -> int:
    """`squall status RUN_DIR [--json]`: per cell, ok/failed/timeout/degraded/missing and the medians,
    the replications that are not ok, the Slurm jobs; exit status 1 unless every replication is ok."""
    out = out or sys.stdout
    state = run_state(root)
    if as_json:
        print(json.dumps(state, indent=2), file=out)
    else:
        reps = range(state["first_replication"], state["replications"] + 1)
        print(f"run {root}: {len(state['cells'])} cells x {describe(reps)}", file=out)
        print_table([[c["cell"], *c["counts"].values(), medians_text(c["medians"])] for c in state["cells"]], out)
        for cell in state["cells"]:
            for r in cell["replications"]:
                if r["status"] not in ("ok", "missing"):
                    print(f"{cell['cell']} rep-{r['replication']:02d}: {r['status']}: {r['reason']}", file=out)
        _print_cluster_jobs(state["slurm"], out)
    return 0 if state["complete"] else 1


def run_state(root: Path) -> dict[str, Any]:
    """Everything `squall status` says about a run, as JSON-ready data (docs/runner.md)."""
    run_dir = RunDir.open(root)
    exp = json.loads((root / "expanded.json").read_text())
    stored = json.loads((root / "meta.json").read_text()).get("testbed", {}).get(RUN_OPTIONS_KEY, {})
    last = stored.get("replications") or exp["replications"]
    # A resume with a larger --replications adds replications the stored options do not know.
    last = max([last] + [rep for _, rep, _ in run_dir.statuses()])
    # a resume may have run replications before the stored first one
    first = min([stored.get("first_replication", 1)] + [rep for _, rep, _ in run_dir.statuses()])
    reps = range(first, last + 1)
    cell_ids = [c["cell"] for c in exp["cells"]]
    pattern = stored.get("cells")
    cell_ids = [c for c in cell_ids if cell_selection.selected(c, pattern)]
    analysed = analysed_values(root)
    cells = [cell_state(run_dir, cell_id, reps, analysed) for cell_id in cell_ids]
    totals = {status: sum(c["counts"][status] for c in cells) for status in COUNTED}
    return {"run": str(root), "name": exp.get("name"), "replications": last, "first_replication": first,
            "cells_selected": pattern, "complete": totals["ok"] == len(cells) * len(reps), "counts": totals, "cells": cells,
            "slurm": _cluster_jobs(root)}


def _cluster_jobs(root: Path) -> list[dict[str, Any]]:
    """For --slurm runs: each submission's jobs, and each unit's state as Slurm says it now or,
    once it forgot, as recorded."""
    found = []
    for sub in all_submissions(root):
        entry: dict[str, Any] = {"submission": sub.number, "arrays": sub.jobs.get("arrays", []),
                                 "analysis": sub.jobs.get("analysis"), "end": sub.jobs.get("end")}
        try:
            states = slurm_jobs.current(sub)
        except SlurmError as e:
            entry["error"] = str(e)
            states = slurm_jobs.recorded(sub)
        entry["states"] = {task: s.state for task, s in states.items()}
        entry["tasks"] = [_task_entry(sub, task, units, states.get(task)) for task, units in sub.task_units().items()]
        found.append(entry)
    return found


def _task_entry(sub: Submission, task: str, units: range, state: TaskState | None) -> dict[str, Any]:
    entry: dict[str, Any] = {"task": task, "units": [{"unit": i, "cell": sub.units[i].cell,
                                                      "replications": list(sub.units[i].replications)}
                                                     for i in units if i < len(sub.units)],
                             "state": state.state if state else "UNKNOWN"}
    if state is not None:
        entry |= {"exit_code": state.exit_code, "node": state.node, "reason": state.reason, "source": state.source}
    if state is None or (state.final and state.state != "COMPLETED"):
        entry["output"] = _last_line(sub, task)
    return entry


def _last_line(sub: Submission, task: str) -> str:
    """The last line a task wrote (its %x-%A_%a.out), or why there is none."""
    job, _, index = task.partition("_")
    outputs = list(sub.output_dir.glob(f"*-{job}_{index}.out"))
    if not outputs:
        return "(no output file: the task never started, or could not write into the run directory)"
    lines = [line for line in outputs[0].read_text(errors="replace").splitlines() if line.strip()]
    return lines[-1].strip() if lines else "(empty output file)"


def _print_cluster_jobs(submissions: list[dict[str, Any]], out: TextIO) -> None:
    for sub in submissions:
        arrays = ", ".join(f"{a['job_id']} ({a['units']} units)" for a in sub["arrays"])
        head = f"slurm submission {sub['submission']}: arrays {arrays or '-'}, analysis {sub['analysis'] or '-'}"
        if sub.get("end") and sub["end"] != sub["analysis"]:
            head += f", end job {sub['end']}"
        counts: dict[str, int] = {}
        for task in sub["tasks"]:
            counts[task["state"]] = counts.get(task["state"], 0) + 1
        shown = ", ".join(f"{n} {state.lower()}" for state, n in sorted(counts.items()))
        print(f"{head}: {shown or 'no task'}" + (f" ({sub['error']})" if "error" in sub else ""), file=out)
        for task in sub["tasks"]:
            if "output" in task:
                print(f"  task {task['task']} ({_units_text(task['units'])}) {_how(task)}: {task['output']}", file=out)


def _units_text(units: list[dict[str, Any]]) -> str:
    return "; ".join(f"{u['cell']} rep {', '.join(map(str, u['replications']))}" for u in units)


def _how(task: dict[str, Any]) -> str:
    parts = [task["state"]]
    if task.get("node"):
        parts.append(f"on {task['node']}")
    if task.get("exit_code"):
        parts.append(f"exit {task['exit_code']}")
    return " ".join(parts)
