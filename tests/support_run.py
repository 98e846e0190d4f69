"""The small three-flow scenario the `squall run` tests drive on real lanes, and one call of
`squall run` with its output captured."""
from __future__ import annotations

import io
from pathlib import Path

from testbed.runner import RunOptions, run_command

# A page, a bulk transfer and a voice stream over a 1 Mbit/s link: short enough for a test,
# every kind of flow present.
_SCENARIO = """
name = "{name}"
seed = {seed}
replications = 2
timeout = "40s"
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


def three_flow_scenario(name: str, seed: int, udp: str = "500ms", extra: str = "") -> str:
    """The scenario's TOML text; udp is the voice stream's duration, extra is appended
    (a [matrix] table, say)."""
    return _SCENARIO.format(name=name, seed=seed, udp=udp) + extra


def run_squall(path: Path | None, results: Path, lane_base: int, parallel: int = 1,
               resume: Path | None = None, analyse: bool = False) -> tuple[int, str, str]:
    """`squall run` in this process: exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    options = RunOptions(parallel=parallel, results=results, lane_base=lane_base, analyse=analyse)
    code = run_command(path, options, resume, out, err)
    return code, out.getvalue(), err.getvalue()
