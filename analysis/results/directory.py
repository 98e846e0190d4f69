"""The results directory of a run (DESIGN.md §3.4): the one place that names its files and
says which replications are recorded. `testbed/run/results.py` writes it with these names,
the analysis reads it with them (results/layout.py).

    results/<scenario>-<UTC timestamp>/
      scenario.toml  expanded.json  meta.json
      cells/<cell-id>/rep-<NN>/                status.json, emulator.log.gz, *.pcap.gz, ...
      cells/<cell-id>/rep-<NN>.partial/        a replication being written (or cut short)
      cells/<cell-id>/attempts/rep-<NN>-<k>/   earlier failed attempts, kept
      summary/                                 the analysis: tables, report, plots/

A replication directory is complete or absent: it is renamed from `rep-NN.partial` only once its
status.json is in place. Its status is one of STATUSES; ok, degraded and timeout are results
(a resume keeps them), failed and missing ones are redone.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

SCENARIO_FILE = "scenario.toml"      # the scenario as given
EXPANDED_FILE = "expanded.json"      # every cell fully resolved
META_FILE = "meta.json"              # squall revision, kernel, hosts, tool versions, the run's options
RUN_FILES = (SCENARIO_FILE, EXPANDED_FILE, META_FILE)
CELLS_DIR = "cells"
ATTEMPTS_DIR = "attempts"
SUMMARY_DIR = "summary"
ANALYSIS_JSON = "analysis.json"      # summary/analysis.json: the analysed values status and report share
PARTIAL_SUFFIX = ".partial"

STATUS_FILE = "status.json"
STATUSES = ("ok", "failed", "timeout", "degraded")
KEPT_ON_RESUME = ("ok", "degraded", "timeout")   # results; a resume redoes the rest

# files of a replication that the runner writes and the analysis reads
LOG_NAME = "emulator.log"                                      # stored gzip-compressed (results/stored.py)
CAPTURES = {"fixed": "fixed.pcap", "mobile": "mobile.pcap"}    # likewise
WORKLOADS_FILE = "workloads.json"            # each flow's programs and their summaries
KERNEL_COUNTERS_FILE = "kernel-counters.json"
QUEUE_FILE = "router-queue.tsv"              # the tc router's queue samples
TCPINFO_SUFFIX = "tcpinfo.tsv"               # <host>.tcpinfo.tsv: squall-tcp-sampler's samples

_REP_DIR = re.compile(r"^rep-(\d+)$")


def rep_name(rep: int) -> str:
    return f"rep-{rep:02d}"


def rep_number(name: str) -> int | None:
    """The replication number of a `rep-NN` directory name; None for any other name."""
    m = _REP_DIR.match(name)
    return int(m.group(1)) if m else None


def replication_dir(root: Path, cell_id: str, rep: int) -> Path:
    return root / CELLS_DIR / cell_id / rep_name(rep)


def partial_dir(final: Path) -> Path:
    """Where the replication of `final` (a rep-NN directory) is written until it is recorded."""
    return final.with_name(final.name + PARTIAL_SUFFIX)


def is_recorded(status: str | None) -> bool:
    """A replication with this status holds a result a resume keeps (None: no status.json)."""
    return status in KEPT_ON_RESUME


def read_run_json(path: Path) -> dict[str, Any]:
    """One of a run's JSON files as a dict, leniently for reports: {} when absent or unreadable;
    an old expanded.json that is a bare list of cells as {"cells": [...]}."""
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {"cells": data}
