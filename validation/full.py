"""The full validation, in rounds that survive any number of sittings.

    python -m validation.full [--rounds 5] [--parallel 2] [--prepare-ahead] [--lane-base 110] [--study NAME]… [--commit] [--dry-run]
    python -m validation.full --export [--out DIR]     # validation/data/ from the runs as they are

Round k gives every cell of the three studies its k-th replication: round 1 is `squall run
SCENARIO --replications 1` into validation/out/full/<study>/ (git-ignored), round k > 1 is
`squall run --resume RUN --replications k --redo-degraded` on the same run directory (a
replication whose timing error was beyond the scenario's tolerance is not counted, so the
next round runs it again). Coverage thus grows
evenly over the cells, a replication keeps its number (and so its channel timeline) whatever
the sitting, and a round stopped half-way (Ctrl-C, SIGTERM, the machine going away) is
finished by starting the same command again: squall's own --resume redoes what is missing,
failed or cut short. Finished (study, round) pairs are listed in
validation/out/full/progress.json and skipped.

After each finished pair the run is analysed and its compact results (validation.data:
cells.json, replications.csv, study.json) are written to validation/data/<study>/, which is
committed (`--commit` does `git add` + `git commit` of that directory alone); `--export`
writes them from the runs as they are, half-way through a round too, and runs nothing. The
raw run directories need not be kept: `python -m validation.run --from-data` renders the
report from validation/data/ alone.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

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


def run_dir(study: Study, out: Path = OUT) -> Path | None:
    """The study's one run directory, if a round has started it."""
    results = out / study.name
    dirs = sorted(d for d in results.iterdir() if d.is_dir()) if results.is_dir() else []
    if len(dirs) > 1:
        raise SystemExit(f"validation.full: {results} holds {len(dirs)} runs; expected one")
    return dirs[0] if dirs else None


def round_command(study: Study, k: int, parallel: int, lane_base: int, out: Path = OUT,
                  prepare_ahead: bool = False) -> list[str]:
    """`squall run` for round k of one study: a new run, or the same run resumed to k replications."""
    common = ["--replications", str(k), "--parallel", str(parallel), "--lane-base", str(lane_base),
              *(["--prepare-ahead"] if prepare_ahead else [])]
    existing = run_dir(study, out)
    if existing is None:
        return [str(SQUALL), "run", str(SCENARIOS / study.scenario), "--results", str(out / study.name), *common]
    # a degraded replication (timing beyond the tolerance) does not count: the next round redoes it
    return [str(SQUALL), "run", "--resume", str(existing), *common, "--redo-degraded"]


Progress = dict[str, dict[str, float]]    # study -> finished round ("1", "2", ...) -> seconds


def load_progress(out: Path | None = None) -> Progress:
    path = (out or OUT) / "progress.json"
    if not path.exists():
        return {}
    # the first format listed the finished rounds without their times
    return {study: rounds if isinstance(rounds, dict) else {str(k): 0.0 for k in rounds}
            for study, rounds in json.loads(path.read_text()).items()}


def save_progress(progress: Progress, out: Path | None = None) -> None:
    out = out or OUT
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / "progress.json.tmp"
    tmp.write_text(json.dumps(progress, indent=1, sort_keys=True) + "\n")
    tmp.replace(out / "progress.json")


def export(study: Study, progress: Progress, parallel: int, out: Path = OUT, data: Path = DATA) -> list[Path]:
    """The study's run analysed (its summary/ left alone) into validation/data/<study>/."""
    from validation.data import export_study
    from validation.run import load_cells

    source = run_dir(study, out)
    if source is None:
        return []
    meta = json.loads((source / "meta.json").read_text())
    record = {"study": study.name, "reference_study": study.reference, "scenario": study.scenario,
              "run": source.name, "squall_revision": meta.get("squall_revision"),
              "lanes": parallel, "rounds_done": sorted(int(k) for k in progress.get(study.name, {})),
              "round_seconds": progress.get(study.name, {}),
              "exported_utc": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
    return export_study(load_cells(source, rewrite_summary=False), data / study.name, record)


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


def _commit(study: Study, k: int) -> None:
    subprocess.run(["git", "add", str(DATA / study.name)], cwd=ROOT, check=True)
    staged = subprocess.run(["git", "diff", "--cached", "--quiet", "--", str(DATA / study.name)], cwd=ROOT)
    if staged.returncode:
        subprocess.run(["git", "commit", "-q", "-m", f"validation data: {study.name}, round {k}",
                        "--", str(DATA / study.name)], cwd=ROOT, check=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="the full validation, resumable, in rounds")
    p.add_argument("--rounds", type=int, default=5, help="replications per cell in the end (default 5)")
    p.add_argument("--parallel", type=int, default=2)
    p.add_argument("--lane-base", type=int, default=110)
    p.add_argument("--prepare-ahead", action="store_true",
                   help="squall run --prepare-ahead: one more lane sets up the next replication (docs/runner.md)")
    p.add_argument("--commit", action="store_true", help="commit validation/data/<study> after each round")
    p.add_argument("--dry-run", action="store_true", help="print the commands of the rounds left")
    p.add_argument("--export", action="store_true",
                   help="write validation/data/ from the runs as they are now; run nothing")
    p.add_argument("--out", type=Path, default=OUT, help="where the runs are (default validation/out/full)")
    p.add_argument("--study", action="append", choices=[s.name for s in STUDIES],
                   help="only this study (repeatable; default all three)")
    args = p.parse_args(argv)
    progress = load_progress(args.out)
    studies = [s for s in STUDIES if not args.study or s.name in args.study]
    if args.export:
        for study in studies:
            for path in export(study, progress, args.parallel, args.out):
                print(f"validation.full: wrote {path}", flush=True)
        return 0
    for k in range(1, args.rounds + 1):
        for study in studies:
            if str(k) in progress.get(study.name, {}):
                continue
            command = round_command(study, k, args.parallel, args.lane_base, args.out, args.prepare_ahead)
            print(f"validation.full: {study.name} round {k}: {' '.join(command)}", flush=True)
            if args.dry_run:
                continue
            started = time.monotonic()
            code = _run(command)
            if code not in (0, 1):       # 1: some replications failed (recorded); others: stopped
                print(f"validation.full: stopped (squall run exited {code}); run this again to go on")
                return code
            progress.setdefault(study.name, {})[str(k)] = round(time.monotonic() - started, 1)
            save_progress(progress, args.out)
            export(study, progress, args.parallel, args.out)
            print(f"validation.full: {study.name} round {k} done in {progress[study.name][str(k)]:.0f} s", flush=True)
            if args.commit:
                _commit(study, k)
    return 0


if __name__ == "__main__":
    sys.exit(main())
