"""The analysis against the kernel's own counters on lossy links, on real lanes (`squall run`):
the study profiles' r0 and r2 links (83 % frame errors in the bad state, 0 and 2 ARQ
retransmissions of 700 ms, channel iip-short), TCP profile baseline; a bulk transfer over r0
and r2 and an s+2s page over r2, two replications each (two channel timelines). For every
replication and host, the timeouts, SYN retransmissions, fast retransmissions (and fast
recoveries, retransmissions after a timeout, timestamp undos, all retransmissions) the analysis
classified in the host's capture equal what its kernel counted, and its fast recoveries are at
most the kernel's (analysis/README.md, "The kernel's counters beside the analysis"). Lanes $SQUALL_TEST_LANE_BASE + 2 and + 3 (default 22, 23)."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest

from conftest import lane_base, require_programs
from support_run import lenient_text, run_squall
from test_runner import PROGRAMS, assert_nothing_left, only_run_dir

pytestmark = pytest.mark.netns
LANE = lane_base() + 2

SCENARIO = """
name = "kernel-truth"
seed = 7
replications = 2
timeout = "120s"

[link]
profile = "r2"
channel = "iip-short"

[tcp]
profile = "baseline"

[[matrix.case]]
label = "r0-bulk"
set = { "link.profile" = "r0", "flows.bulk" = { kind = "bulk", count = 8, length = "2096B" } }
[[matrix.case]]
label = "r2-bulk"
set = { "flows.bulk" = { kind = "bulk", count = 30, length = "2096B" } }
[[matrix.case]]
label = "r2-page"
set = { "flows.web" = { kind = "http", workload = "s+2s" } }
"""

MUST_AGREE = ("retransmissions", "timeouts", "syn_retransmissions", "fast_retransmissions",
              "after_rto", "loss_probes", "loss_undos")


def test_analysed_classes_equal_the_kernels_counters_on_lossy_links(tmp_path: Path) -> None:
    require_programs(*PROGRAMS)
    scenario = tmp_path / "kernel-truth.toml"
    scenario.write_text(lenient_text(SCENARIO))     # not about timing
    results = tmp_path / "results"
    run_squall(scenario, results, LANE, parallel=2, analyse=True)
    run_dir = only_run_dir(results)
    rows = list(csv.DictReader((run_dir / "summary" / "kernel.csv").open()))
    # replications whose captures are complete (a `failed` one may have lost packets)
    compared = [r for r in rows if r["status"] in ("ok", "degraded", "timeout")]
    reps = {(r["cell"], r["replication"]) for r in compared}
    assert len(reps) >= 5, f"only {sorted(reps)} could be compared"
    disagree = [f"{r['cell']} rep {r['replication']} {r['host']} {r['quantity']}: analysis {r['analysis']}, "
                f"kernel {r['kernel']}" for r in compared
                if r["quantity"] in MUST_AGREE and r["analysis"] != r["kernel"]]
    # a recovery Linux entered and left without sending anything again is in no capture
    disagree += [f"{r['cell']} rep {r['replication']} {r['host']} fast_recoveries: analysis {r['analysis']} > "
                 f"kernel {r['kernel']}" for r in compared
                 if r["quantity"] == "fast_recoveries" and int(r["analysis"]) > int(r["kernel"])]
    assert not disagree, "\n".join(disagree)
    assert all(r["holds"] == "True" for r in compared), [r for r in compared if r["holds"] != "True"]
    total = {q: sum(int(r["kernel"]) for r in compared if r["quantity"] == q) for q in MUST_AGREE}
    # the lossy links did what they are for: timeouts, SYNs sent again, fast retransmissions
    assert total["timeouts"] > 0 and total["syn_retransmissions"] > 0 and total["fast_retransmissions"] > 0, total
    assert_nothing_left(range(LANE, LANE + 2), str(run_dir))
