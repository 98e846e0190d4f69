"""`make validate`: run the studies (reduced by default), analyse, compare, write the report.

    python -m validation.run                 # reduced: a few cells, 2-3 replications
    python -m validation.run --full          # every cell, the scenarios' replications
    python -m validation.run --from-runs DIR...   # only compare runs made before
    python -m validation.run --from-data [DIR]    # the committed full validation (validation/data)

The runs go to validation/out/runs/<UTC time>/ (each validation its own, with its logs), the
report to validation/report.md. The reduced plan runs two groups of runs at the same time,
each on its own lanes (--lane-base N uses lanes N..N+3 with --parallel 2). Every run is `squall run` itself; a run whose replications fail is
reported, not hidden.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from analysis.aggregate.run_analysis import CellResult, analyse_run, cell_summaries
from analysis.aggregate.summary import write_summary

from .data import DataError, load_study, load_study_record
from . import rto_causes
from .measures import connection_totals, fitted_variant
from .outcome import Outcome, compare_cells
from .protocol import SENSITIVITY_DATA
from .provenance import provenance_text, row_revisions
from .report import ReportContext, RunSummary, render

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "validation" / "out"
REPORT = ROOT / "validation" / "report.md"
RECORD = OUT / "validation.json"      # the last validation's runs and time, for --rerender
DATA = ROOT / "validation" / "data"   # the full validation's compact results (validation.full)
REPRODUCIBILITY = ROOT / "validation" / "explanations" / "reproducibility"
TITLE = "Reproducing the studies: squall beside the IIP report and Saarto's slides"
SCENARIOS = ROOT / "scenarios"
DEFAULT_LANE_BASE = 110
SQUALL = Path(sys.executable).parent / "squall"     # the venv's console script


@dataclass(frozen=True)
class StudyRun:
    study: str                 # iip | saarto (the reference tables' `study`)
    scenario: str              # file name under scenarios/
    cells: str | None          # --cells glob; None = every cell
    replications: int | None   # None = the scenario's
    group: int                 # runs of one group run one after the other


REDUCED = (
    StudyRun("iip", "iip-http.toml", "link-e0_tcp-*_workload-s+2s_http-*", 3, 0),
    StudyRun("iip", "iip-http.toml", "link-r[04]_tcp-baseline_workload-s+2s_http-1.0", 3, 0),
    StudyRun("iip", "iip-http.toml", "link-e0_tcp-[bc]*_workload-l+8m_http-1.0", 3, 0),
    StudyRun("saarto", "saarto-http10.toml", "link-arq-*_tcp-[bi]*_workload-s+2s", 3, 0),
    StudyRun("saarto", "saarto-http10.toml", "link-arq-[lh]*_tcp-baseline_workload-l+8m", 3, 0),
    StudyRun("iip", "iip-mixture.toml", "link-e0_workload-2tcp+1udp-0s-0s-0s-*_tcp-baseline", 2, 1),
    StudyRun("iip", "iip-mixture.toml", "link-e0_workload-3tcp-0s-0s-0s_tcp-baseline", 2, 1),
    StudyRun("iip", "iip-mixture.toml", "link-e0_workload-3tcp-0s-0s-0s_tcp-frto-cbi-iw4", 2, 1),
)
FULL = (
    StudyRun("iip", "iip-http.toml", None, None, 0),
    StudyRun("saarto", "saarto-http10.toml", None, None, 0),
    StudyRun("iip", "iip-mixture.toml", None, None, 1),
)

REDUCTION_TEXT = [
    "**Reduced validation** (`make validate`): a few cells of each study with 2–3 "
    "replications instead of 20–30, chosen so that every conclusion below has cases: the s+2s "
    "page over e0 with all six variants and both HTTP versions; the baseline s+2s page over r0 "
    "and r4 (ARQ persistency); baseline and CBI+FRTO with the l+8m page over e0 (CBI); "
    "Saarto's three lossy links with BL+TS, BL-TS, IW4+TS and IW4-TS on s+2s, and BL+TS with l+8m over "
    "arq-low and arq-high (error drops need a longer page); the 2 TCP + 1 UDP mixture "
    "over e0 with and without DiffServ and 3 TCP with Baseline and FRTO-CBI-IW4. Medians of 2–3 "
    "replications are noisy: ratios far from 1 in single cells say little, the conclusions "
    "weigh many cells. RED cells are not in the reduced plan.",
    "**Full validation**: `.venv/bin/python -m validation.full` runs every cell of "
    "scenarios/iip-http.toml, saarto-http10.toml and iip-mixture.toml in rounds of one "
    "replication per cell, resumable across sittings, and commits compact results to "
    "validation/data/; `python -m validation.run --from-data` renders this report from them "
    "(validation/README.md).",
]


FULL_TEXT = "**Full reproduction**: every cell and replication of the three studies."


def study_of(run_dir: Path) -> str:
    name = run_dir.name
    return "saarto" if name.startswith("saarto") else "iip"


def _tail(path: Path, n: int) -> list[str]:
    return [line.strip() for line in path.read_text(errors="replace").splitlines()[-n:]]


def execute(run: StudyRun, index: int, lane_base: int, parallel: int, session: Path) -> RunSummary:
    slug = re.sub(r"[^A-Za-z0-9.+-]+", "-", f"{index:02d}-{run.scenario[:-5]}-{run.cells or 'all'}")
    results = session / slug
    log = session / "logs" / f"run-{index:02d}.log"
    results.mkdir(parents=True, exist_ok=False)
    cmd = [str(SQUALL), "run", str(SCENARIOS / run.scenario),
           "--parallel", str(parallel), "--lane-base", str(lane_base), "--results", str(results)]
    cmd += ["--cells", run.cells] if run.cells else []
    cmd += ["--replications", str(run.replications)] if run.replications else []
    started = time.monotonic()
    with open(log, "w") as f:
        print(" ".join(cmd), file=f, flush=True)
        code = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT).returncode
    seconds = time.monotonic() - started
    dirs = [d for d in results.iterdir() if d.is_dir()]
    # exit status 1 with a run directory: some replication failed, which the report shows
    if code not in (0, 1) or len(dirs) != 1:
        raise RuntimeError(f"squall run {run.scenario} --cells {run.cells!r} exited with {code} "
                           f"and left {len(dirs)} run directories; last lines of {_shown(log)}: "
                           + " / ".join(_tail(log, 3)))
    run_dir = dirs[0]
    return RunSummary(run.study, run.scenario, run.cells or "", run.replications or 0,
                      _shown(run_dir), statuses_of(run_dir), seconds)


def _shown(path: Path) -> str:
    """Relative to the repository when inside it: the report names no machine's paths."""
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return path.name


def statuses_of(run_dir: Path) -> dict[str, int]:
    counts: dict[str, int] = {}
    for status in run_dir.glob("cells/*/rep-*/status.json"):
        state = json.loads(status.read_text()).get("status", "unknown")
        counts[state] = counts.get(state, 0) + 1
    return counts


def new_session() -> Path:
    """validation/out/runs/<UTC time>/: this validation's own directory, so an earlier
    validation's runs (which --rerender may still read) are never overwritten."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    for n in range(1, 100):
        session = OUT / "runs" / (stamp if n == 1 else f"{stamp}-{n}")
        try:
            (session / "logs").mkdir(parents=True, exist_ok=False)
            return session
        except FileExistsError:
            continue
    raise RuntimeError(f"could not create a new directory under {OUT / 'runs'} for {stamp}")


def execute_plan(plan: tuple[StudyRun, ...], lane_base: int,
                 parallel: int) -> tuple[list[RunSummary], list[str]]:
    """Every run of the plan; a run that could not be made is returned as an error (the others
    go on and are compared)."""
    session = new_session()
    groups = sorted({r.group for r in plan})
    results: dict[int, RunSummary] = {}
    errors: list[str] = []

    def worker(group: int) -> None:
        lanes = lane_base + groups.index(group) * parallel
        for i, run in enumerate(plan):
            if run.group != group:
                continue
            try:
                print(f"validate: {run.scenario} {run.cells or '(all cells)'} on lanes "
                      f"{lanes}..{lanes + parallel - 1}", file=sys.stderr, flush=True)
                results[i] = execute(run, i, lanes, parallel, session)
            except Exception as e:  # noqa: BLE001 — the other runs go on; in the report
                errors.append(str(e))
    threads = [threading.Thread(target=worker, args=(g,)) for g in groups]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [results[i] for i in sorted(results)], errors


def load_cells(run_dir: Path, *, rewrite_summary: bool = True) -> list[CellResult]:
    """The run analysed (summary/ rewritten unless told not to, e.g. while the run goes on),
    with the per-replication sums of every TCP connection's spurious RTOs and RTO events, and
    the timeouts that fired too early or after a lost ACK (validation/rto_causes.py), added as
    `conn.*` values."""
    analysis = analyse_run(run_dir, progress=None)
    if rewrite_summary:
        write_summary(analysis)
    # the rows summary/connections.csv is written from
    totals = connection_totals(row for r in analysis.replications for row in r.rows)
    for cell in analysis.cells:
        for r in cell.replications:
            if r.counts:
                r.values.update(totals.get((r.ref.cell, r.ref.rep),
                                           {"conn.spurious_rtos": 0.0, "conn.rto_events": 0.0}))
                r.values.update(rto_causes.replication_totals(Path(r.ref.directory)))
        cell.summaries = cell_summaries(cell.replications)
    return analysis.cells


def environment(command: str = "make validate") -> str:
    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                         text=True).stdout.strip() or "unknown"
    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (f"Generated by `{command}` ({now}; squall {rev}; Linux {platform.release()}, "
            f"{os.cpu_count()} CPUs).")


def compare_runs(run_dirs: list[Path]) -> Outcome:
    return compare_cells((study_of(d), load_cells(d)) for d in run_dirs)


def data_summary(directory: Path, record: dict, cells: list[CellResult]) -> RunSummary:
    statuses: dict[str, int] = {}
    for r in (r for c in cells for r in c.replications):
        statuses[r.ref.status] = statuses.get(r.ref.status, 0) + 1
    most = max((r.ref.rep for c in cells for r in c.replications), default=0)
    return RunSummary(record["reference_study"], record["scenario"], "", most, _shown(directory),
                      statuses, sum(float(s) for s in record.get("round_seconds", {}).values())
                      + float((record.get("chains") or {}).get("seconds") or 0))


def _revisions(record: dict) -> str:
    """Which squall revision ran which rounds: `abc123 (rounds 1, 2), def456 (round 3)`."""
    rounds = record.get("rounds") or {}
    by_revision: dict[str, list[str]] = {}
    for k in sorted(rounds, key=int):
        by_revision.setdefault(str(rounds[k].get("squall_revision"))[:12], []).append(k)
    if len(by_revision) <= 1:
        return str(record.get("squall_revision"))[:12]
    return ", ".join(f"{rev} (round{'s' if len(ks) > 1 else ''} {', '.join(ks)})" for rev, ks in by_revision.items())


def data_text(records: list[tuple[dict, list[CellResult]]]) -> str:
    parts = []
    for record, cells in records:
        counted = [sum(r.counts for r in c.replications) for c in cells]
        busy = sum(float(r.values.get("duration_s") or 0) for c in cells for r in c.replications)
        censored = sum(r.counts and r.ref.status == "timeout" for c in cells for r in c.replications)
        parts.append(f"{record['study']} ({record['scenario']}, squall {_revisions(record)}): "
                     f"{len(cells)} cells, {min(counted, default=0)}–{max(counted, default=0)} counted "
                     f"replications per cell"
                     + (f" ({censored} of them timed out with connections still open: counted with a time "
                        f"of ∞, analysis/metrics/censoring.py)" if censored else "")
                     + f", rounds finished {record.get('rounds_done') or 'none yet'}"
                     + _chains_text(record) + ", "
                     f"{record.get('lanes')} lanes, {busy / 3600:.1f} lane-hours of replications, "
                     f"exported {record.get('exported_utc')}")
    return ("**Full validation** (`python -m validation.full`, rendered from the committed "
            "validation/data/ by `python -m validation.run --from-data`): every cell of the three "
            "studies, a replication per cell and round, the CBI cells' replications after the first "
            "as one chain per cell (validation/README.md, \"CBI's cache on the lossy links\"). "
            + "; ".join(parts) + ". The wall time below is the sum of the finished rounds' and chains'.")


def _chains_text(record: dict) -> str:
    chains = record.get("chains")
    if not chains:
        return ""
    done = chains.get("seconds") is not None
    return (f", CBI chains of {chains.get('cells')} cells to replication {chains.get('replications')} "
            + ("finished" if done else "under way (until then a cell's later replications are the rounds')"))


def _studies_in(directory: Path) -> list[tuple[dict, list[CellResult], Path]]:
    if not directory.is_dir():
        return []
    return [(record, load_study(d), d) for d in sorted(p for p in directory.iterdir() if p.is_dir())
            if (record := load_study_record(d))]


def from_data(directory: Path, report: Path) -> int:
    """validation/report.md from the committed compact results alone, with the cells that ran
    a fitted parameter (protocol.SENSITIVITY_DATA) beside them as sensitivity variants."""
    try:
        studies = [(record, cells) for record, cells, _ in _studies_in(directory)]
        fitted = [(record, [c for c in cells if fitted_variant(c) is not None], d)
                  for record, cells, d in _studies_in(ROOT / SENSITIVITY_DATA)]
    except (DataError, OSError, ValueError) as e:
        print(f"validate: {e}", file=sys.stderr)
        return 2
    if not studies:
        print(f"validate: {_shown(directory)} holds no study's data (validation.full writes it)",
              file=sys.stderr)
        return 2
    outcome = compare_cells([(record["reference_study"], cells) for record, cells in studies]
                            + [(record["reference_study"], cells) for record, cells, _ in fitted])
    outcome.provenance = [provenance_text(record["study"], row_revisions(directory / record["study"], record, cells),
                                          (record.get("chains") or {}).get("squall_revision"))
                          for record, cells in studies] + [
        provenance_text(f"{record['study']} (sensitivity, {_shown(d)})", row_revisions(d, record, cells),
                        (record.get("chains") or {}).get("squall_revision")) for record, cells, d in fitted]
    outcome.reproducibility = [json.loads(p.read_text()) for p in sorted(REPRODUCIBILITY.glob("results-*.json"))]
    runs = [data_summary(directory / record["study"], record, cells) for record, cells in studies]
    ctx = ReportContext(TITLE, [data_text(studies)], runs, sum(r.seconds for r in runs),
                        environment("python -m validation.run --from-data"))
    report.write_text(render(ctx, outcome))
    print(f"validate: wrote {report} from {_shown(directory)}", file=sys.stderr)
    return 0


def reduction_text(plan: str, errors: list[str]) -> list[str]:
    text = list(REDUCTION_TEXT) if plan == "reduced" else [FULL_TEXT]
    if errors:
        text.append("**Runs that could not be made** (their cells are missing below): "
                    + "; ".join(errors))
    return text


def rerender(report: Path) -> int:
    """The report of the recorded runs with today's comparison code; the recorded time stays."""
    if not RECORD.exists():
        print(f"validate: {_shown(RECORD)} is missing: run `make validate` first", file=sys.stderr)
        return 2
    record = json.loads(RECORD.read_text())
    runs = [RunSummary(**r) for r in record["runs"]]
    outcome = compare_runs([ROOT / r.run_dir for r in runs])
    plan = record.get("plan") or ("reduced" if record["reduction"][0].startswith("**Reduced")
                                  else "full")
    ctx = ReportContext(TITLE, reduction_text(plan, record.get("errors", [])), runs,
                        record["total_seconds"], environment())
    report.write_text(render(ctx, outcome))
    print(f"validate: wrote {report} (runs of {_shown(RECORD)} compared again)", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m validation.run", description=__doc__.split("\n")[0])
    p.add_argument("--full", action="store_true", help="every cell and replication of the studies")
    p.add_argument("--from-runs", nargs="+", type=Path, metavar="RUN_DIR",
                   help="compare these run directories; run nothing")
    p.add_argument("--parallel", type=int, default=2, help="lanes per group of runs (default 2)")
    p.add_argument("--lane-base", type=int, default=DEFAULT_LANE_BASE,
                   help=f"first lane (default {DEFAULT_LANE_BASE}); a group uses --parallel lanes")
    p.add_argument("--rerender", action="store_true",
                   help=f"compare the runs the last validation recorded in {_shown(RECORD)} again "
                        "(after a change of the comparison); run nothing")
    p.add_argument("--from-data", nargs="?", type=Path, const=DATA, metavar="DIR",
                   help="render from the full validation's committed results (default validation/data); "
                        "run nothing")
    p.add_argument("--report", type=Path, default=REPORT, help="where to write the report")
    args = p.parse_args(argv)
    started = time.monotonic()
    if args.rerender:
        return rerender(args.report)
    if args.from_data:
        return from_data(args.from_data, args.report)
    if args.from_runs:
        run_dirs = [d.resolve() for d in args.from_runs]
        runs = [RunSummary(study_of(d), d.name, "", 0, _shown(d), statuses_of(d), 0.0) for d in run_dirs]
        reduction = [f"Compared runs made before: {', '.join(d.name for d in run_dirs)}."]
        errors = []
    else:
        runs, errors = execute_plan(FULL if args.full else REDUCED, args.lane_base, args.parallel)
        run_dirs = [ROOT / r.run_dir for r in runs]   # _shown: relative to ROOT
        reduction = reduction_text("full" if args.full else "reduced", errors)
    outcome = compare_runs(run_dirs)
    ctx = ReportContext(TITLE, reduction, runs, time.monotonic() - started, environment())
    if not args.from_runs:
        OUT.mkdir(parents=True, exist_ok=True)
        RECORD.write_text(json.dumps({"plan": "full" if args.full else "reduced", "errors": errors,
                                      "total_seconds": ctx.total_seconds,
                                      "runs": [asdict(r) for r in runs]}, indent=1) + "\n")
    args.report.write_text(render(ctx, outcome))
    print(f"validate: wrote {args.report}", file=sys.stderr)
    for error in errors:
        print(f"validate: {error}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
