"""The small three-flow scenario the `squall run` tests drive on real lanes, and one call of
`squall run` with its output captured."""
from __future__ import annotations

import io
import json
import re
from pathlib import Path

from testbed.run.runner import RunOptions, run_command

# A page, a bulk transfer and a voice stream over a 1 Mbit/s link: short enough for a test,
# every kind of flow present.
_SCENARIO = """
name = "{name}"
seed = {seed}
replications = 2
timeout = "40s"
timing_tolerance = "{tolerance}"
cpu_wait_tolerance = {cpu_wait}
router = "saarto"

[link]
bandwidth = "1Mbit"
delay = "10ms"
mtu = "576B"

[flows.web]
kind = "http"
workload = "s+2s"
http = "1.0"

[flows.bulk1]
kind = "bulk"
count = 10
length = "2096B"
start = "100ms"

[flows.voice]
kind = "udp"
size = "132B"
rate = "64kbit"
duration = "{udp}"
dscp = "EF"
"""


# The tests of the results and the analysis run on a machine shared with builds, where the
# timing error's p99 can reach milliseconds and programs wait for a CPU; the judgements have
# tests of their own (test_instruments*.py, test_cpu_wait.py), so these replications are only
# degraded by a second of timing error or a hundred run times of waiting.
LENIENT_TIMING = "1s"
LENIENT_CPU_WAIT = 100
# Both, as top-level lines of a scenario: every `squall run` of a test that is not about timing
# has them (lenient_text, or these lines in its TOML), so a busy machine degrades none of its
# replications and `make test` passes beside other work.
LENIENT = f'timing_tolerance = "{LENIENT_TIMING}"\ncpu_wait_tolerance = {LENIENT_CPU_WAIT}\n'


def lenient_text(text: str) -> str:
    """The scenario's TOML with the lenient tolerances in place of its own (before its timeout)."""
    assert text.count("\ntimeout = ") == 1, "no top-level timeout line"
    text = re.sub(r'(?m)^(timing|cpu_wait)_tolerance = .*\n', "", text)       # the scenario's own, if any
    return text.replace("\ntimeout = ", f"\n{LENIENT}timeout = ", 1)


def lenient_copy(scenario: Path, directory: Path) -> Path:
    """A copy of a scenario file in directory, with the lenient tolerances: for runs of the
    project's scenarios in tests that are not about timing."""
    directory.mkdir(parents=True, exist_ok=True)
    copy = directory / scenario.name
    copy.write_text(lenient_text(scenario.read_text()))
    return copy


def one_replication_head(name: str, seed: int, timeout: str = "40s") -> str:
    """The top of a one-replication scenario with the lenient tolerances; its tables follow."""
    return (f'name = "{name}"\nseed = {seed}\nreplications = 1\ntimeout = "{timeout}"\n'
            f'timing_tolerance = "{LENIENT_TIMING}"\ncpu_wait_tolerance = {LENIENT_CPU_WAIT}\n')


def three_flow_scenario(name: str, seed: int, udp: str = "500ms", extra: str = "",
                        tolerance: str = LENIENT_TIMING, cpu_wait: float = LENIENT_CPU_WAIT) -> str:
    """The scenario's TOML text; udp is the voice stream's duration, extra is appended
    (a [matrix] table, say), tolerance is its timing_tolerance, cpu_wait its cpu_wait_tolerance."""
    return _SCENARIO.format(name=name, seed=seed, udp=udp, tolerance=tolerance, cpu_wait=cpu_wait) + extra


def run_squall(path: Path | None, results: Path, lane_base: int, parallel: int = 1,
               resume: Path | None = None, analyse: bool = False,
               redo: tuple[str, ...] = (), replications: int | None = None,
               prepare_ahead: bool = False) -> tuple[int, str, str]:
    """`squall run` in this process: exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    options = RunOptions(parallel=parallel, results=results, lane_base=lane_base, analyse=analyse,
                         redo=redo, replications=replications, prepare_ahead=prepare_ahead)
    code = run_command(path, options, resume, out, err)
    return code, out.getvalue(), err.getvalue()


def run_scenario_text(directory: Path, name: str, text: str, lane_base: int) -> Path:
    """`squall run --analyse` of a scenario's TOML text in `directory` (exit 0 asserted, with
    its stderr and the replications' status.json): the run's directory."""
    (directory / f"{name}.toml").write_text(text)
    code, _, err = run_squall(directory / f"{name}.toml", directory / "results", lane_base, analyse=True)
    (root,) = (directory / "results").iterdir()
    statuses = [json.loads(p.read_text()) for p in root.glob("cells/*/rep-*/status.json")]
    assert code == 0, (err, statuses)
    return root
