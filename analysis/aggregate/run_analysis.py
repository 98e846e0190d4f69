"""A whole run: every replication analysed (in parallel), then aggregated per cell.

Failed, degraded, missing and unanalysable replications are kept in the result: they appear
in runs.csv with their reason and are counted as `failed` in every cell statistic. A timeout
the network caused enters the statistics (analysis/metrics/censoring.py)."""

from __future__ import annotations

import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, TextIO

from analysis.aggregate.statistics import Summary, summarize
from analysis.join.flows import KINDS
from analysis.results.layout import RunLayout, read_layout
from analysis.aggregate.replication_values import FlowInfo, ReplicationResult, analyse_run_replication
from analysis.metrics.series import SERIES_INTERVAL_US
from analysis.metrics.tcp import RTO_FLOOR_US


@dataclass
class CellResult:
    cell: str
    labels: dict[str, str]
    flows: list[FlowInfo]
    replications: list[ReplicationResult]
    summaries: dict[str, Summary]      # metric name -> over the replications

    @property
    def failed(self) -> list[ReplicationResult]:
        return [r for r in self.replications if not r.counts]

    def stat(self, metric: str, stat: str) -> float | None:
        """One Summary field (min, p25, median, p75, max, mean) of a metric; None when the
        cell has no value of it."""
        s = self.summaries.get(metric)
        return None if s is None else getattr(s, stat)

    def median(self, metric: str) -> float | None:
        return self.stat(metric, "median")

    def flows_of(self, kind: str) -> list[FlowInfo]:
        return [f for f in self.flows if f.kind == kind]


@dataclass
class RunAnalysis:
    layout: RunLayout
    cells: list[CellResult]

    @property
    def replications(self) -> list[ReplicationResult]:
        return [r for c in self.cells for r in c.replications]


def _jobs(requested: int | None) -> int:
    return max(1, requested if requested else min(2, os.cpu_count() or 1))


def _progress_printer(stream: TextIO, total: int) -> Callable[[ReplicationResult], None]:
    done = [0]

    def report(r: ReplicationResult) -> None:
        done[0] += 1
        what = ("analysed" if r.analysed else f"NOT ANALYSABLE: {r.error}" if r.error
                else r.ref.status)
        if r.analysed and not r.counts:
            what += f" (status {r.ref.status}: not in the statistics)"
        elif r.analysed and r.ref.status != "ok":
            what += f" (status {r.ref.status}: {r.ref.reason})"
        print(f"[{done[0]}/{total}] {r.ref.cell} rep {r.ref.rep}: {what}", file=stream,
              flush=True)
    return report


def _expanded_flows(spec: dict) -> list[FlowInfo]:
    """The cell's flows as expanded.json declares them (testbed/scenario/flows/): their workload
    label (a page given by sizes is named by them) and HTTP version."""
    flows = spec.get("flows")
    infos = []
    for f in flows if isinstance(flows, list) else []:
        if not isinstance(f, dict) or "name" not in f or f.get("kind") not in KINDS:
            continue
        workload = next((w for w in (f.get("page"), f.get("transfer"), f.get("stream"))
                         if isinstance(w, dict)), {})
        label = workload.get("label")
        if label in (None, "custom") and isinstance(workload.get("sizes"), list):
            label = "+".join(str(x) for x in workload["sizes"])
        start = f.get("start_us")
        infos.append(FlowInfo(str(f["name"]), f["kind"],
                              None if f.get("http") is None else str(f["http"]),
                              None if label in (None, "custom") else str(label),
                              start if isinstance(start, int) else None))
    return infos


def _merge_flows(results: list[ReplicationResult],
                 declared: list[FlowInfo] | None = None) -> list[FlowInfo]:
    merged: dict[str, FlowInfo] = {f.name: f for f in declared or []}
    for r in results:
        for f in r.flows:
            known = merged.setdefault(f.name, FlowInfo(f.name, f.kind))
            known.http_version = known.http_version or f.http_version
            known.workload = known.workload or (None if f.workload == "custom" else f.workload)
            known.start_us = known.start_us if known.start_us is not None else f.start_us
    return list(merged.values())


def cell_summaries(results: list[ReplicationResult]) -> dict[str, Summary]:
    names = sorted({k for r in results for k in r.values})
    return {name: summarize([r.values.get(name) if r.counts else None for r in results])
            for name in names}


def router_classes(spec: dict) -> tuple[str, ...]:
    """The DiffServ classes of a cell's router (expanded.json), in the scenario's order."""
    router = spec.get("router")
    classes = router.get("classes") if isinstance(router, dict) else None
    return tuple(str(c["name"]) for c in classes or [] if isinstance(c, dict) and "name" in c)


def analyse_run(root: str | os.PathLike[str], jobs: int | None = None,
                progress: TextIO | None = sys.stderr,
                rto_floor_us: int = RTO_FLOOR_US,
                interval_us: int = SERIES_INTERVAL_US) -> RunAnalysis:
    layout = read_layout(Path(root))
    refs = layout.replications
    report = _progress_printer(progress, len(refs)) if progress else (lambda r: None)
    results: list[ReplicationResult] = []
    classes = {c.cell: router_classes(c.spec) for c in layout.cells}
    args = [(ref, rto_floor_us, interval_us, classes.get(ref.cell, ())) for ref in refs]
    n = _jobs(jobs)
    if n == 1 or len(refs) <= 1:
        for a in args:
            results.append(analyse_run_replication(*a))
            report(results[-1])
    else:
        # forkserver: safe when the caller has threads (squall run analyses at its end)
        with ProcessPoolExecutor(max_workers=n,
                                 mp_context=multiprocessing.get_context("forkserver")) as pool:
            for r in pool.map(analyse_run_replication, *zip(*args)):
                results.append(r)
                report(r)
    cells = []
    for info in layout.cells:
        mine = [r for r in results if r.ref.cell == info.cell]
        cells.append(CellResult(info.cell, info.labels,
                                _merge_flows(mine, _expanded_flows(info.spec)), mine,
                                cell_summaries(mine)))
    return RunAnalysis(layout, cells)
