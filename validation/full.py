"""The full validation, in rounds that survive any number of sittings and machines.

    python -m validation.full [--rounds 5] [--conclusion-rounds 10] [--parallel 2] [--prepare-ahead] [--lane-base 110] [--study NAME]… [--commit] [--dry-run]
    python -m validation.full --export [--out DIR]     # a round's rows as they are, half-way too

Rounds after --rounds up to --conclusion-rounds give their replication to the cells the studies'
conclusions rest on only (conclusion_cells). Round k gives every cell of the three studies its k-th replication: `squall run SCENARIO
--replications k --first-replication k` into validation/out/full/<study>/round-k/ (git-ignored).
A replication's number fixes its channel timeline and seeds, so replication k is the same
whichever machine or sitting runs it. The CBI cells (a TCP profile that keeps the metrics
cache between replications) are the exception after round 1: each runs its replications
1 ... N (N the last round) as one chain on one lane, all of them in one run into
validation/out/full/<study>/chains/, started once the study's round 1 is finished. A chain's
cache is what its earlier replications left in turn, which a round could give replication k
only by running 1 ... k - 1 again first (docs/runner.md; validation/README.md, "CBI's cache on
the lossy links"). A round (or the chains' run) stopped half-way (Ctrl-C, SIGTERM) is finished
by starting the same command again (squall's own --resume redoes what is missing, failed or cut
short); a round that ends with replications failed or degraded (beyond the scenario's timing or
CPU-wait tolerance, which do not count) is resumed once with --redo-degraded. A timed-out
replication is a result (analysis/metrics/censoring.py) and is never run again.

The committed validation/data/<study>/ is the one record of progress: after each round its
replications are analysed and merged into cells.json, replications.csv and study.json
(validation.data.merge_round: round k's rows replaced, the others kept; the chains' replication
k in place of round k's rows of their cells), and study.json lists the finished rounds (and
`chains`) with their wall time, run and squall revision. Rounds listed there are
skipped, so a new machine with nothing but a clone goes on where the last one stopped
(`--commit` commits that directory after each round). The raw run directories need not be
kept: `python -m validation.run --from-data` renders the report from validation/data/ alone.
Every round must have run the same cells (validation/cells_record.py): checked before a round
runs and again on its run directory; the first finished round's cells are recorded there.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from validation import cells_record

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "validation" / "out" / "full"
DATA = ROOT / "validation" / "data"
SCENARIOS = ROOT / "scenarios"
SQUALL = Path(sys.executable).parent / "squall"


@dataclass(frozen=True)
class Study:
    name: str          # directory name under out/ and data/
    scenario: str      # file under scenarios/
    reference: str     # the reference tables' `study` (validation.reference.Key)


STUDIES = (Study("iip-http", "iip-http.toml", "iip"), Study("saarto", "saarto-http10.toml", "saarto"),
           Study("iip-mixture", "iip-mixture.toml", "iip"))


CHAINS = "chains"
Phase = int | str        # a round's number, or CHAINS: the CBI cells' chains


def round_dir(study: Study, k: Phase, out: Path = OUT) -> Path:
    return out / study.name / (CHAINS if k == CHAINS else f"round-{k}")


def phase_name(k: Phase) -> str:
    return "the CBI chains" if k == CHAINS else f"round {k}"


def _cells_by_chaining(study: Study) -> tuple[list[str], list[str]]:
    """The study's cells as (round by round, as chains): a chain's TCP profile keeps the metrics
    cache between replications (CBI)."""
    from testbed.scenario.loader import load

    cells = load(SCENARIOS / study.scenario).cells
    chained = [c.cell_id for c in cells if c.tcp is not None and not c.tcp.flush_metrics]
    return [c.cell_id for c in cells if c.cell_id not in chained], chained


def chain_cells(study: Study) -> list[str]:
    return _cells_by_chaining(study)[1]


def round_cells(study: Study, k: int, rounds: int, data: Path = DATA) -> list[str] | None:
    """The cells round k runs (None: every cell): round 1 all of them (the chains join the data
    it starts), later rounds those the chains do not run, after `rounds` the conclusions' only."""
    if k == 1:
        return None
    by_round, chained = _cells_by_chaining(study)
    if k <= rounds:
        return by_round if chained else None
    return [c for c in conclusion_cells(data).get(study.name, []) if c not in chained]


def run_dir(study: Study, k: Phase, out: Path = OUT) -> Path | None:
    """Round k's one run directory on this machine, if the round has started here."""
    results = round_dir(study, k, out)
    dirs = sorted(d for d in results.iterdir() if d.is_dir()) if results.is_dir() else []
    if len(dirs) > 1:
        raise SystemExit(f"validation.full: {results} holds {len(dirs)} runs; expected one")
    return dirs[0] if dirs else None


def round_command(study: Study, k: Phase, parallel: int, lane_base: int, out: Path = OUT,
                  prepare_ahead: bool = False, cells: list[str] | None = None, chain_length: int = 0) -> list[str]:
    """`squall run` for round k of one study: replication k of every cell (of `cells` only, when
    given), or for the chains (k = CHAINS) replications 1 ... chain_length of `cells`; or that
    run resumed (with the cells it was started with)."""
    common = ["--parallel", str(parallel), "--lane-base", str(lane_base),
              *(["--prepare-ahead"] if prepare_ahead else [])]
    existing = run_dir(study, k, out)
    if existing is not None and (existing / "scenario.toml").read_text() != (SCENARIOS / study.scenario).read_text():
        raise SystemExit(f"validation.full: {existing} ran another version of scenarios/{study.scenario}; "
                         f"remove it to run {phase_name(k)} with the scenario as it is now")
    if existing is None:
        replications = (["--replications", str(chain_length)] if k == CHAINS
                        else ["--replications", str(k), "--first-replication", str(k)])
        return [str(SQUALL), "run", str(SCENARIOS / study.scenario), "--results", str(round_dir(study, k, out)),
                *replications, *common, *(["--cells", ",".join(cells)] if cells is not None else [])]
    # a degraded replication (timing beyond the tolerance) does not count: it is run again; the
    # cells given narrow a run started with more (a round begun before its CBI cells became chains)
    return [str(SQUALL), "run", "--resume", str(existing), *common, "--redo-degraded",
            *(["--cells", ",".join(cells)] if cells is not None else [])]


Round = dict[str, object]        # seconds, run, squall_revision, lanes, exported_utc


def _study_record(study: Study, data: Path) -> dict:
    path = data / study.name / "study.json"
    return json.loads(path.read_text()) if path.exists() else {}


def finished_chains(study: Study, data: Path = DATA) -> Round | None:
    """The chains' record once they are finished (None before)."""
    chains = _study_record(study, data).get(CHAINS)
    return chains if chains and chains.get("seconds") is not None else None


def finished_rounds(study: Study, data: Path = DATA) -> dict[str, Round]:
    """The rounds the committed data lists as finished, by number."""
    record = _study_record(study, data)
    if not record:
        return {}
    if "rounds" in record:
        return record["rounds"]
    # the first format: one run resumed round after round, one revision for all
    return {k: {"seconds": seconds, "run": record.get("run"), "squall_revision": record.get("squall_revision"),
                "lanes": record.get("lanes")} for k, seconds in record.get("round_seconds", {}).items()}


def check_cells_now(study: Study, data: Path = DATA) -> None:
    """Before a round runs: the scenario as squall expands it now has the recorded rounds' cells."""
    from testbed.run.runner import expanded
    from testbed.scenario.loader import load

    now = expanded(load(SCENARIOS / study.scenario))
    for note in cells_record.check(data / study.name, now, f"scenarios/{study.scenario} as squall expands it now"):
        print(note, flush=True)


def conclusion_cells(data: Path = DATA) -> dict[str, list[str]]:
    """Per study the cells the studies' conclusions rest on (validation.conclusions.cells_read
    over the committed data of every study that has some), in the order of its data."""
    from validation.conclusions import cells_read
    from validation.data import load_study
    from validation.measures import cell_key, measure
    from validation.reference import load_reference

    loaded = {s: load_study(data / s.name) for s in STUDIES if (data / s.name / "cells.json").exists()}
    read = cells_read(load_reference(), measure((s.reference, cells) for s, cells in loaded.items()))
    return {s.name: [c.cell for c in cells if cell_key(s.reference, c, "") in read] for s, cells in loaded.items()}


def export(study: Study, k: Phase, seconds: float | None, parallel: int, out: Path = OUT,
           data: Path = DATA) -> list[Path]:
    """Round k's run analysed (its summary/ left alone) and merged into validation/data/<study>/;
    `seconds` is the round's wall time once it is finished (None: half-way, not listed as done).
    A run of some cells only (a conclusions round, `squall run --cells`, as its meta.json says)
    replaces their round-k rows; the other cells keep theirs. The chains' run (k = CHAINS)
    replaces, for each replication j it has, round j's rows of its cells."""
    from analysis.results.cell_selection import globs, selected
    from validation.data import merge_round
    from validation.run import load_cells

    source = run_dir(study, k, out)
    if source is None:
        return []
    meta = json.loads((source / "meta.json").read_text())
    selection = meta.get("testbed", {}).get("run", {}).get("cells")
    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    rounds = finished_rounds(study, data)
    chains = _study_record(study, data).get(CHAINS)
    ran = json.loads((source / "expanded.json").read_text())
    for note in cells_record.check(data / study.name, ran, str(source)):
        print(note, flush=True)
    this = {"seconds": seconds, "run": source.name, "squall_revision": meta.get("squall_revision"),
            "lanes": parallel, "exported_utc": now, **({"cells": len(globs(selection))} if selection else {})}
    if k == CHAINS:
        chains = {**this, "replications": meta.get("testbed", {}).get("run", {}).get("replications"),
                  "cells": len(chain_cells(study))}
    elif seconds is not None:
        rounds[str(k)] = this
        if cells_record.recorded(data / study.name) is None:
            (data / study.name).mkdir(parents=True, exist_ok=True)
            cells_record.store(data / study.name, ran)
    done = sorted(rounds, key=int)
    record = {"study": study.name, "reference_study": study.reference, "scenario": study.scenario,
              "rounds": {k: rounds[k] for k in done}, "rounds_done": [int(k) for k in done],
              "round_seconds": {k: rounds[k]["seconds"] for k in done},
              **({CHAINS: chains} if chains else {}),
              "squall_revision": rounds[done[-1]]["squall_revision"] if done else meta.get("squall_revision"),
              "lanes": parallel, "exported_utc": now}
    cells = [c for c in load_cells(source, rewrite_summary=False) if selected(c.cell, selection)]
    if k != CHAINS:
        # once the chains have rows, a round (one begun before, resumed) never writes over them
        chained = set(chain_cells(study)) if chains else set()
        ours = [c for c in cells if c.cell not in chained]
        return merge_round(ours, k, data / study.name, record, only_selected=bool(selection) or len(ours) < len(cells))
    written: list[Path] = []
    ran = {(c.cell, r.ref.rep) for c in cells for r in c.replications if r.ref.status != "missing"}
    for j in sorted({rep for _, rep in ran}):
        has_j = [c for c in cells if (c.cell, j) in ran]       # not yet run: the round's row stays
        written = merge_round(has_j, j, data / study.name, record, only_selected=True)
    return written


def _run(argv: list[str]) -> int:
    """One `squall run`; SIGINT/SIGTERM to this driver reach it, and it stops cleanly."""
    proc = subprocess.Popen(argv, cwd=ROOT)
    forward = lambda signum, _frame: proc.send_signal(signum)   # noqa: E731
    previous = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        return proc.wait()
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def _commit(study: Study, k: Phase, data: Path = DATA) -> None:
    subprocess.run(["git", "add", str(data / study.name)], cwd=ROOT, check=True)
    staged = subprocess.run(["git", "diff", "--cached", "--quiet", "--", str(data / study.name)], cwd=ROOT)
    if staged.returncode:
        subprocess.run(["git", "commit", "-q", "-m", f"validation data: {study.name}, {phase_name(k)}",
                        "--", str(data / study.name)], cwd=ROOT, check=True)


def _replications(study: Study, k: Phase, out: Path, cells: list[str] | None) -> list | None:
    """Round k's replications (of `cells` only, when given); None before its run exists."""
    from analysis.results.layout import read_layout

    run = run_dir(study, k, out)
    if run is None:
        return None
    return [r for r in read_layout(run).replications if cells is None or r.cell in cells]


def unfinished(study: Study, k: Phase, out: Path = OUT, cells: list[str] | None = None) -> int:
    """Round k's replications with no result yet (missing or cut short): 0 when it is done."""
    reps = _replications(study, k, out, cells)
    return 1 if reps is None else sum(r.status == "missing" for r in reps)


def to_redo(study: Study, k: Phase, out: Path = OUT, cells: list[str] | None = None) -> int:
    """Round k's replications its resume (round_command: --redo-degraded) would run: what a
    resume does not keep, and the degraded ones."""
    from analysis.results.directory import KEPT_ON_RESUME

    reps = _replications(study, k, out, cells)
    return 1 if reps is None else sum(r.status not in KEPT_ON_RESUME or r.status == "degraded" for r in reps)


SPENT = "validation-seconds"   # in a round's run directory: the wall time of the sittings that worked on it


def add_spent(study: Study, k: Phase, seconds: float, out: Path = OUT) -> float:
    """The round's wall time over every sitting so far, this one's `seconds` added; kept in the
    round's run directory, so a run removed to start the round again takes its time with it."""
    run = run_dir(study, k, out)
    if run is None:                  # squall made no run: nothing ran, nothing to count
        return round(seconds, 1)
    path = run / SPENT
    total = round((float(path.read_text()) if path.exists() else 0.0) + seconds, 1)
    partial = path.with_name(SPENT + ".partial")
    partial.write_text(f"{total}\n")
    os.replace(partial, path)        # a sitting cut short leaves the old total, never half a number
    return total


def chain_length(args: argparse.Namespace) -> int:
    """The chains' replications: as many as the last round gives a cell."""
    return max(args.rounds, args.conclusion_rounds)


def run_round(study: Study, k: Phase, args: argparse.Namespace,
              cells: list[str] | None = None) -> tuple[float | None, int]:
    """Round k of one study (of `cells` only, when given) to its end: its wall time over every
    sitting (None when it was stopped), squall's exit status."""
    started = time.monotonic()
    finished, code = False, 0
    try:
        finished, code = _run_round(study, k, args, cells)
    finally:
        spent = add_spent(study, k, time.monotonic() - started, args.out)
        print(f"validation.full: {study.name} {phase_name(k)}: {spent:.0f} s of wall time so far", flush=True)
    return (spent if finished else None), code


def _run_round(study: Study, k: Phase, args: argparse.Namespace, cells: list[str] | None) -> tuple[bool, int]:
    """(whether the round is finished, squall's exit status)."""
    for attempt in ("run", "redo"):       # the second: what failed or came out degraded, once
        command = round_command(study, k, args.parallel, args.lane_base, args.out, args.prepare_ahead, cells,
                                chain_length(args))
        print(f"validation.full: {study.name} {phase_name(k)}: {' '.join(command)}", flush=True)
        code = _run(command)
        if code not in (0, 1):       # 1: some replications not ok (recorded); others: stopped
            print(f"validation.full: stopped (squall run exited {code}); run this again to go on")
            return False, code
        if code == 0 or not to_redo(study, k, args.out, cells):     # e.g. only timeouts, which are results
            break
    left = unfinished(study, k, args.out, cells)
    if left:
        # exit 1 also means a lane could not be built or squall failed: never a finished round
        print(f"validation.full: {study.name} {phase_name(k)}: {left} replication(s) missing or cut short; "
              "run this again to go on")
        return False, code or 1
    return True, code


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="the full validation, resumable, in rounds")
    p.add_argument("--rounds", type=int, default=5, help="replications per cell in the end (default 5)")
    p.add_argument("--conclusion-rounds", type=int, default=0, metavar="N",
                   help="after --rounds, rounds up to N for the cells the studies' conclusions rest on only "
                        "(worked out from the committed data; e.g. 10)")
    p.add_argument("--parallel", type=int, default=2)
    p.add_argument("--lane-base", type=int, default=110)
    p.add_argument("--prepare-ahead", action="store_true",
                   help="squall run --prepare-ahead: one more lane sets up the next replication (docs/runner.md)")
    p.add_argument("--commit", action="store_true", help="commit validation/data/<study> after each round")
    p.add_argument("--dry-run", action="store_true", help="print the commands of the rounds left")
    p.add_argument("--export", action="store_true",
                   help="merge the rounds run here into validation/data/ as they are now (half-way too); run nothing")
    p.add_argument("--out", type=Path, default=OUT, help="where the runs are (default validation/out/full)")
    p.add_argument("--data", type=Path, default=DATA, help=argparse.SUPPRESS)
    p.add_argument("--study", action="append", choices=[s.name for s in STUDIES],
                   help="only this study (repeatable; default all three)")
    args = p.parse_args(argv)
    studies = [s for s in STUDIES if not args.study or s.name in args.study]
    if args.export:
        for study in studies:
            finished = finished_rounds(study, args.data)
            unfinished_phases: list[Phase] = [k for k in range(1, chain_length(args) + 1) if str(k) not in finished]
            if not finished_chains(study, args.data):
                unfinished_phases.append(CHAINS)
            for k in unfinished_phases:
                for path in export(study, k, None, args.parallel, args.out, args.data):
                    print(f"validation.full: {study.name} {phase_name(k)} (not finished): wrote {path}", flush=True)
        return 0
    for k in range(1, chain_length(args) + 1):
        for study in studies:
            code = _round(study, k, args)
            if code is None and k == 1:
                code = _chains(study, args)
            if code is not None:
                return code
    return 0


def _round(study: Study, k: int, args: argparse.Namespace) -> int | None:
    """Round k of the study unless the data lists it as finished; squall's exit status if it
    was stopped, else None."""
    if str(k) in finished_rounds(study, args.data):
        return None
    check_cells_now(study, args.data)
    cells = round_cells(study, k, args.rounds, args.data)
    if k > args.rounds and not cells:
        print(f"validation.full: {study.name} round {k}: no committed data to choose the conclusions' "
              "cells from (or the chains run them all); run its --rounds first", flush=True)
        return None
    return _phase(study, k, args, cells)


def _chains(study: Study, args: argparse.Namespace) -> int | None:
    """The study's CBI chains, once its round 1 is finished and unless the data lists them."""
    cells = chain_cells(study)
    if not cells:
        return None
    done = finished_chains(study, args.data)
    if done:
        if int(done.get("replications") or 0) < chain_length(args):
            print(f"validation.full: {study.name}: the CBI chains ran to replication {done.get('replications')}, "
                  f"fewer than the {chain_length(args)} now asked for, and are not grown in place: their "
                  f"cells keep {done.get('replications')} (to grow them, `squall run --first-replication "
                  f"{int(done.get('replications') or 0) + 1}` of those cells replays the chain first, docs/runner.md)",
                  flush=True)
        return None
    if "1" not in finished_rounds(study, args.data):
        if args.dry_run:
            print(f"validation.full: {study.name} the CBI chains: after its round 1", flush=True)
        return None
    check_cells_now(study, args.data)
    return _phase(study, CHAINS, args, cells)


def _phase(study: Study, k: Phase, args: argparse.Namespace, cells: list[str] | None) -> int | None:
    what = phase_name(k)
    if args.dry_run:
        command = round_command(study, k, args.parallel, args.lane_base, args.out, args.prepare_ahead, cells,
                                chain_length(args))
        print(f"validation.full: {study.name} {what}: {' '.join(command)}", flush=True)
        return None
    seconds, code = run_round(study, k, args, cells)
    if seconds is None:
        return code
    export(study, k, seconds, args.parallel, args.out, args.data)
    print(f"validation.full: {study.name} {what} done in {seconds:.0f} s", flush=True)
    if args.commit:
        _commit(study, k, args.data)
    return None


if __name__ == "__main__":
    sys.exit(main())
