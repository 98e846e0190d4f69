"""results.json of the CBI cache experiment (validation/README.md, "CBI's cache on the lossy
links").

    python summarise.py --chain RUN_DIR --warmed ROUND_RUN_DIR... > results.json

Per replication of the CBI cells both kinds of run hold: what the fixed host's TCP metrics
cache held for the mobile host when the replication started (tcp.json's
`metrics_cache_at_start`: the ssthresh, or none), how the cache came to be (status.json's
`cache`), and the page's congestion and error drops and its time (squall's analysis,
summary/runs.csv).
RUN_DIR is a run of the cells as a chain (replications 1 ... N in order on one lane, the
cache kept); the ROUND_RUN_DIRs are the full validation's round runs, where replication k
started on a fresh lane after one unrecorded run of replication k - 1 (the runner's warm-up
as it was then; it now replays replications 1 ... k - 1).
"""
from __future__ import annotations

import argparse
import csv
import json
import re
import statistics
import sys
from pathlib import Path

SSTHRESH = re.compile(r"\bssthresh (\d+)\b")


def cached_ssthresh(rep_dir: Path) -> int | None:
    """The ssthresh the fixed host had cached for the mobile host at the start; None if none."""
    tcp = json.loads((rep_dir / "tcp.json").read_text())
    mobile = json.loads((rep_dir / "status.json").read_text())["details"]["testbed"]["mobile_host"]
    for line in tcp["metrics_cache_at_start"]["fixed"]:
        if line.startswith(mobile + " "):
            found = SSTHRESH.search(line)
            return int(found.group(1)) if found else None
    return None


def _number(text: str) -> float | None:
    """A runs.csv value; None where the analysis had none (a page squall-http did not finish)."""
    return float(text) if text else None


def replications(run: Path, cells: set[str] | None) -> list[dict]:
    drops = {(r["cell"], int(r["replication"])): r for r in csv.DictReader(open(run / "summary" / "runs.csv"))}
    out = []
    for rep_dir in sorted(run.glob("cells/*/rep-*")):
        cell, rep = rep_dir.parent.name, int(rep_dir.name.split("-")[1])
        if cells is not None and cell not in cells or (cell, rep) not in drops:
            continue
        status = json.loads((rep_dir / "status.json").read_text())
        row = drops[(cell, rep)]
        out.append({"cell": cell, "replication": rep, "status": status["status"],
                    "cache": (status["details"].get("cache") or {}).get("metrics"),
                    "cached_ssthresh": cached_ssthresh(rep_dir),
                    "congestion_drops": float(row["run.congestion_drops"]),
                    "error_drops": float(row["run.error_drops"]),
                    "page_time_s": _number(row["web.response_time_s"])})
    return out


def summary(rows: list[dict]) -> dict:
    """Later replications (> 1) by whether an ssthresh was cached: how many, their congestion drops."""
    out = {}
    for cached in (True, False):
        mine = [r for r in rows if r["replication"] > 1 and (r["cached_ssthresh"] is not None) == cached]
        out["ssthresh cached" if cached else "no ssthresh cached"] = {
            "replications": len(mine),
            "with_congestion_drops": sum(r["congestion_drops"] > 0 for r in mine),
            "congestion_drops_median": _median([r["congestion_drops"] for r in mine]),
            "error_drops_median": _median([r["error_drops"] for r in mine]),
            "page_time_s_median": _median([r["page_time_s"] for r in mine if r["page_time_s"] is not None])}
    return out


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--chain", type=Path, required=True)
    p.add_argument("--warmed", type=Path, nargs="+", required=True)
    args = p.parse_args(argv)
    chain = replications(args.chain, None)
    cells = {r["cell"] for r in chain}
    warmed = [row for run in args.warmed for row in replications(run, cells)]
    json.dump({"cells": sorted(cells),
               "chain": {"rows": chain, "summary": summary(chain)},
               "warmed_by_predecessor": {"rows": sorted(warmed, key=lambda r: (r["cell"], r["replication"])),
                                         "summary": summary(warmed)}},
              sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
