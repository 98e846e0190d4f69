"""`squall calibrate`: how many lanes this machine can run at once before the end-to-end timing
error grows beyond a tolerance (docs/runner.md, "How far --parallel can go").

It runs a standard load — a bulk transfer and a 32 kbit/s UDP stream over the IIP optimal link
e0, a few seconds — on K = 1, 2, 4, … lanes at once (one replication per lane, `--rounds`
times), reads the timing error each replication measured of itself (status.json
`details.timing_error`: testbed/run/timing.py) and prints, per K, the worst p99 of the ingress
and of the egress delays over the replications and their judged capture points, the worst
p99 of the UDP sender behind its own schedule, the largest delay, how many replications the
runner judged beyond the tolerance (its own `beyond_tolerance`), and the largest K whose runs all stayed within the
tolerance (and every smaller K's too)."""
from __future__ import annotations

import io
import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

from testbed.errors import ConfigError
from testbed.run.results import utc_stamp
from testbed.run.runner import RunOptions, run_command

LINK_RATE_BYTES_PER_S = 8000      # e0: 64 kbit/s
BUFFER = 2096                     # the studies' TTCP buffer (4 x MSS 524)


def lane_counts(max_lanes: int) -> list[int]:
    """1, 2, 4, … up to max_lanes, and max_lanes itself."""
    if max_lanes < 1:
        raise ConfigError("--max-lanes", f"{max_lanes} is not a number of lanes >= 1")
    counts, k = [], 1
    while k < max_lanes:
        counts.append(k)
        k *= 2
    return counts + [max_lanes]


def load_scenario(k: int, rounds: int, duration_us: int, tolerance_us: int) -> str:
    """The standard load as a scenario of k x rounds replications: over e0, a bulk transfer that
    fills about half the link for the duration and a 32 kbit/s UDP stream (132 B payloads) as
    long; the time-out leaves room for a loaded machine."""
    count = max(1, round(duration_us / 1e6 * LINK_RATE_BYTES_PER_S / 2 / BUFFER))
    timeout_s = 30 + 4 * duration_us // 1_000_000
    return (f'name = "calibrate-k{k}"\n'
            f'description = "squall calibrate: the standard load on {k} lane(s) at once"\n'
            f'seed = 1\nreplications = {k * rounds}\ntimeout = "{timeout_s}s"\n'
            f'timing_tolerance = "{tolerance_us}us"\n\n'
            '[link]\nprofile = "e0"\n\n'
            f'[flows.bulk]\nkind = "bulk"\ncount = {count}\nlength = "{BUFFER}B"\n\n'
            '[flows.voice]\nkind = "udp"\nsize = "132B"\nrate = "32kbit"\n'
            f'duration = "{duration_us}us"\n')


@dataclass
class LanesResult:
    lanes: int
    run_dir: str
    replications: int = 0           # replications with a timing error measured
    statuses: dict[str, int] = field(default_factory=dict)
    ingress_p99_us: float | None = None   # worst over replications and judged capture points
    egress_p99_us: float | None = None
    sender_p99_us: float | None = None    # worst paced sender behind its schedule (timing.schedules)
    max_us: int | None = None             # the largest delay of any judged point
    beyond_tolerance: int = 0       # replications with a judged point beyond the tolerance
    within: bool = False            # every replication measured and within the tolerance


def _worst(values: list[Any]) -> Any:
    return max(values) if values else None


def summarize(run_dir: Path, lanes: int) -> LanesResult:
    """Reads every replication's status.json under run_dir."""
    result = LanesResult(lanes, str(run_dir))
    ingress, egress, senders, maxima = [], [], [], []
    total = 0
    for path in sorted(run_dir.glob("cells/*/rep-*/status.json")):
        total += 1
        status = json.loads(path.read_text())
        result.statuses[status.get("status", "?")] = result.statuses.get(status.get("status", "?"), 0) + 1
        timing = status.get("details", {}).get("timing_error")
        if not isinstance(timing, dict):
            continue
        result.replications += 1
        for kind, into in (("ingress", ingress), ("egress", egress)):
            for point in (timing.get(kind) or {}).values():
                if point.get("judged", True) and point.get("n"):
                    into.append(point["p99_us"])
                    maxima.append(point["max_us"])
        senders += [s["p99_us"] for s in (timing.get("schedules") or {}).values() if s.get("n")]
        # the runner's own judgement (testbed/run/timing.py), schedules and clocks included
        result.beyond_tolerance += bool(timing.get("beyond_tolerance"))
    result.ingress_p99_us, result.egress_p99_us, result.max_us = _worst(ingress), _worst(egress), _worst(maxima)
    result.sender_p99_us = _worst(senders)
    result.within = total > 0 and result.replications == total and result.beyond_tolerance == 0
    return result


def largest_within(results: list[LanesResult]) -> int:
    """The largest K within the tolerance with every smaller K within it too; 0 if K = 1 is not."""
    best = 0
    for r in sorted(results, key=lambda r: r.lanes):
        if not r.within:
            break
        best = r.lanes
    return best


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def print_table(results: list[LanesResult], tolerance_us: int, out: TextIO) -> None:
    header = ("lanes", "replications", "ingress p99 (us)", "egress p99 (us)", "sender p99 (us)", "max (us)", "beyond",
              "within")
    rows = [(str(r.lanes), str(r.replications), _fmt(r.ingress_p99_us), _fmt(r.egress_p99_us),
             _fmt(r.sender_p99_us), _fmt(r.max_us), str(r.beyond_tolerance), "yes" if r.within else "no")
            for r in results]
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(header)]
    for row in (header, *rows):
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip(), file=out)
    best = largest_within(results)
    verdict = (f"largest number of lanes within {tolerance_us} us: {best}" if best
               else f"even 1 lane is beyond {tolerance_us} us: the timing error comes from the machine, not from --parallel")
    print(verdict, file=out)


@dataclass
class CalibrateOptions:
    max_lanes: int = 2
    lane_base: int = 0
    tolerance_us: int = 1000
    duration_us: int = 4_000_000
    rounds: int = 1
    results: Path = Path("results")
    json: bool = False


def calibrate_command(options: CalibrateOptions, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """Runs the load on each number of lanes; prints the table (or JSON). Exit status 0 when every
    number of lanes was measured, 1 when some replication has no timing error (failed)."""
    if options.rounds < 1:
        raise ConfigError("--rounds", f"{options.rounds} is not a number of rounds >= 1")
    if options.duration_us <= 0:
        raise ConfigError("--duration", "the load must last > 0 s")
    counts = lane_counts(options.max_lanes)
    if not 0 <= options.lane_base <= 128 - counts[-1]:
        raise ConfigError("--lane-base", f"{options.lane_base} with {counts[-1]} lanes: lanes are numbers in 0..127")
    root = options.results / f"calibrate-{utc_stamp()}"
    root.mkdir(parents=True)
    results = []
    for k in counts:
        scenario = root / f"calibrate-k{k}.toml"
        scenario.write_text(load_scenario(k, options.rounds, options.duration_us, options.tolerance_us))
        print(f"squall calibrate: {k} lane(s) at once, {k * options.rounds} replication(s) ...", file=err, flush=True)
        run_options = RunOptions(parallel=k, results=root, lane_base=options.lane_base, analyse=False)
        # the run's own messages (progress, "redo the degraded ones") are not the calibration's
        run_err = io.StringIO()
        run_command(scenario, run_options, None, out=io.StringIO(), err=run_err)
        run_dirs = [d for d in root.iterdir() if d.is_dir() and d.name.startswith(f"calibrate-k{k}-")]
        if not run_dirs:
            err.write(run_err.getvalue())
            raise ConfigError("squall calibrate", f"the run on {k} lane(s) made no run directory (its messages above)")
        results.append(summarize(run_dirs[0], k))
        r = results[-1]
        print(f"squall calibrate: {k} lane(s): ingress p99 {_fmt(r.ingress_p99_us)} us, egress p99 "
              f"{_fmt(r.egress_p99_us)} us, UDP sender p99 {_fmt(r.sender_p99_us)} us, "
              f"{r.beyond_tolerance} of {r.replications} beyond", file=err)
    if options.json:
        doc = {"tolerance_us": options.tolerance_us, "duration_us": options.duration_us, "rounds": options.rounds,
               "directory": str(root), "lanes": [asdict(r) for r in results],
               "largest_within": largest_within(results)}
        print(json.dumps(doc, indent=1), file=out)
    else:
        print(f"squall calibrate: the standard load ({options.duration_us / 1e6:g} s over e0) in {root}", file=out)
        print_table(results, options.tolerance_us, out)
    return 0 if all(r.replications == r.lanes * options.rounds for r in results) else 1
