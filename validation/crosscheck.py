"""Checks squall's per-replication numbers against tools squall did not write.

    python -m validation.crosscheck RUN_DIR... [--cells GLOB[,GLOB]] [--replications N,M] [--out FILE.json]

For each selected replication with status ok, the values of `summary/runs.csv` that
validation/independent/ recomputes — from tshark's reading of the two hosts' captures and a
plain reading of the emulator log, importing nothing of analysis/ or testbed/ — are set beside
squall's: HTTP page time, the main object's response throughput, retransmissions and drops by
cause; a bulk transfer's elapsed time and throughput; a UDP stream's throughput and mean jitter;
the run's retransmissions and drops. Times and throughputs agree within a relative 1e-6 (runs.csv
writes 12 significant digits), counts exactly. A value squall left empty or that the tool cannot
compute is `not compared`, never counted as agreeing.

Exit status: 0 every compared value agrees, 1 one or more disagree, 2 the command cannot run
(a missing run directory or runs.csv, a bad option, tshark not installed, nothing selected)."""
from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from validation.independent.capture import TsharkError, tshark_version
from validation.independent.recompute import Recomputed, Value, recompute
from validation.independent.run_dir import Replication, UsageError, replications, squall_rows

RELATIVE_TOLERANCE = 1e-6
COUNT_SUFFIXES = ("drops", "retransmissions")      # counts: exact


@dataclass(frozen=True)
class Comparison:
    run: str
    replication: str            # cell/rep-NN
    value: str                  # the runs.csv column
    squall: float | None
    independent: Value
    agree: bool | None          # None: not compared
    note: str = ""


def is_count(column: str) -> bool:
    return column.endswith(COUNT_SUFFIXES)


def _squall_number(text: str | None) -> float | None:
    if text is None or text.strip() == "":
        return None
    try:
        return float(text)
    except ValueError:
        return None


def agrees(column: str, squall: float, mine: float) -> bool:
    if is_count(column):
        return squall == mine
    return math.isclose(squall, mine, rel_tol=RELATIVE_TOLERANCE, abs_tol=0.0)


def compare(rep: Replication, row: dict[str, str] | None, mine: Recomputed) -> list[Comparison]:
    out = []
    for column, value in mine.values.items():
        theirs = _squall_number(row.get(column)) if row else None
        if value is None:
            note = mine.notes.get(column, "not recomputed")
        elif row is None:
            note = "no analysed row of this replication in runs.csv"
        elif theirs is None:
            note = "runs.csv has no value" if column in row else "runs.csv has no such column"
        else:
            note = ""
        agree = None if note or theirs is None or value is None else agrees(column, theirs, value)
        out.append(Comparison(rep.run, rep.label, column, theirs, value, agree, note))
    return out


def check_replication(rep: Replication, row: dict[str, str] | None) -> list[Comparison]:
    """The replication's comparisons; one `not compared` line when its files cannot be read."""
    try:
        mine = recompute(rep.directory)
    except (TsharkError, ValueError, OSError) as e:     # LogError is a ValueError
        return [Comparison(rep.run, rep.label, "*", None, None, None, f"not recomputed: {e}")]
    return compare(rep, row if row and row.get("analysed") == "True" else None, mine)


def _text(x: float | int | None) -> str:
    if x is None:
        return "-"
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else f"{x:.9g}"


def table(comparisons: list[Comparison]) -> str:
    """One block per run: replication (cell/rep-NN), value, squall, independent, agree."""
    header = ("replication", "value", "squall", "independent", "agree")
    rows = [(c.replication, c.value, _text(c.squall), _text(c.independent),
             {True: "yes", False: "NO", None: f"not compared: {c.note}"}[c.agree])
            for c in comparisons]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(4)]

    def line(r: tuple[str, ...]) -> str:
        return "  ".join([*(r[i].ljust(widths[i]) for i in range(4)), r[4]]).rstrip()

    out = []
    for run in dict.fromkeys(c.run for c in comparisons):
        out += [f"run {run}", line(header)]
        out += [line(r) for r, c in zip(rows, comparisons) if c.run == run]
    return "\n".join(out)


def verdict(comparisons: list[Comparison], replications_checked: int) -> str:
    compared = [c for c in comparisons if c.agree is not None]
    wrong = [c for c in compared if not c.agree]
    skipped = len(comparisons) - len(compared)
    head = f"{len(compared)} values of {replications_checked} replications compared"
    tail = f"; {skipped} not compared" if skipped else ""
    if wrong:
        return f"{head}: {len(wrong)} disagree ({', '.join(sorted({c.value for c in wrong}))}){tail}"
    return f"{head}: all agree{tail}"


def _numbers(text: str | None) -> set[int] | None:
    if text is None:
        return None
    try:
        return {int(part) for part in text.split(",") if part.strip()}
    except ValueError:
        raise UsageError(f"--replications {text!r}: expected numbers separated by commas, e.g. 3,7") from None


def _globs(text: str | None) -> list[str] | None:
    return None if text is None else [g.strip() for g in text.split(",") if g.strip()]


@dataclass(frozen=True)
class Result:
    comparisons: list[Comparison]
    replications: int           # checked: the selected ones with status ok
    tool: str                   # tshark's version line


def run(roots: list[Path], cells: str | None, numbers: str | None) -> Result:
    """Every selected ok replication of the runs compared; UsageError or TsharkError before any
    work when the command cannot run."""
    for root in roots:
        if not root.is_dir():
            raise UsageError(f"{root}: no such run directory")
    rows = {root: squall_rows(root) for root in roots}
    selected = {root: [rep for rep in replications(root, _globs(cells), _numbers(numbers)) if rep.status == "ok"]
                for root in roots}
    if not any(selected.values()):
        raise UsageError(f"no replication with status ok selected in {', '.join(map(str, roots))}")
    tool = tshark_version()
    comparisons = [c for root, reps in selected.items() for rep in reps
                   for c in check_replication(rep, rows[root].get((rep.cell, rep.number)))]
    return Result(comparisons, sum(map(len, selected.values())), tool)


def report(result: Result, roots: list[Path]) -> dict:
    """The JSON record: runs named by their directory's name only."""
    comparisons = result.comparisons
    compared = [c for c in comparisons if c.agree is not None]
    return {"check": "validation.crosscheck", "tshark": result.tool, "runs": [r.name for r in roots],
            "tolerance": {"times_and_throughputs": f"relative {RELATIVE_TOLERANCE:g}", "counts": "exact"},
            "replications": result.replications, "compared": len(compared),
            "agree": sum(bool(c.agree) for c in compared),
            "disagree": sum(not c.agree for c in compared),
            "not_compared": len(comparisons) - len(compared),
            "verdict": verdict(comparisons, result.replications),
            "values": [asdict(c) for c in comparisons]}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m validation.crosscheck", description=__doc__.splitlines()[0])
    p.add_argument("run_dirs", nargs="+", type=Path, metavar="RUN_DIR")
    p.add_argument("--cells", help="globs on the cell id, comma-separated")
    p.add_argument("--replications", help="replication numbers, comma-separated")
    p.add_argument("--out", type=Path, help="write the comparisons as JSON")
    args = p.parse_args(argv)
    try:
        result = run(args.run_dirs, args.cells, args.replications)
    except (UsageError, TsharkError) as e:
        print(f"crosscheck: {e}", file=sys.stderr)
        return 2
    print(table(result.comparisons))
    print(f"crosscheck: {verdict(result.comparisons, result.replications)}")
    if args.out:
        try:
            args.out.write_text(json.dumps(report(result, args.run_dirs), indent=1) + "\n")
        except OSError as e:
            print(f"crosscheck: {args.out}: cannot write: {e.strerror or e}", file=sys.stderr)
            return 2
    return 1 if any(c.agree is False for c in result.comparisons) else 0


if __name__ == "__main__":
    sys.exit(main())
