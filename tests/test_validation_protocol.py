"""validation/PROTOCOL.md's statistics and definitions: signed bias with its bootstrap interval,
the verdicts' stability under a bootstrap over replications, the fitted values kept out of the
main comparison, the provenance of the committed rows, the bimodal cells' strips, and the
committed report regenerated from the committed data (no runs, no root)."""
from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

from analysis.aggregate.run_analysis import CellResult
from analysis.aggregate.replication_values import FlowInfo
from tests.test_validation import http_cell, make_cell
from validation.bias import signed_bias
from validation.compare import join
from validation.data import load_study, load_study_record
from validation.distributions import bimodal, strip
from validation.measures import measure
from validation.protocol import JITTER_SPACING, UDP_FITTED
from validation.provenance import row_revisions
from validation.reference import Key, load_reference
from validation.stability import stability

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "validation" / "data"


# --- signed bias ----------------------------------------------------------------------------

def test_signed_bias_of_known_values() -> None:
    b = signed_bias([-1.0, -1.0, -1.0, 1.0])
    assert b is not None and b.median_ln == -1.0
    assert (b.above, b.below) == (0.25, 0.75)
    # 4 values: 5 % of resamples draw the +1 three or four times (median +1): a wide interval
    assert (b.low, b.high) == (-1.0, 1.0)
    # 20 values, 5 of them +1: a median above -1 needs 10 or more +1s, 1.4 % of resamples
    narrow = signed_bias([-1.0] * 15 + [1.0] * 5)
    assert narrow is not None and (narrow.median_ln, narrow.low, narrow.high) == (-1.0, -1.0, -1.0)
    same = signed_bias([0.2] * 10)
    assert same is not None and (same.median_ln, same.low, same.high) == (0.2, 0.2, 0.2)
    assert (same.above, same.below) == (1.0, 0.0)
    assert signed_bias([]) is None


def test_signed_bias_interval_is_reproducible_and_covers_the_median() -> None:
    logs = [math.log(x) for x in (0.7, 0.8, 0.85, 0.9, 0.95, 1.05, 1.1, 0.75, 0.92, 0.88, 1.3)]
    a, b = signed_bias(logs), signed_bias(logs)
    assert a == b                                # the report regenerates byte for byte
    assert a is not None and a.low <= a.median_ln <= a.high < 0.1
    assert signed_bias([-math.inf, -1.0, -1.0]) is not None   # an unfinished transfer is -inf


# --- the fitted values are not the main comparison ------------------------------------------

def _udp_cell(workload: str) -> CellResult:
    return make_cell("link-e0_workload-2tcp+1udp-0s-0s-0s-ds_tcp-baseline",
                     {"link": "e0", "workload": "2tcp+1udp-0s-0s-0s-ds", "tcp": "baseline"},
                     [FlowInfo("tcp1", "bulk"), FlowInfo("tcp2", "bulk"), FlowInfo("udp", "udp", workload=workload)],
                     [{"tcp.fastest.elapsed_s": 120.0, "udp.jitter_mean_ms": 12.0, "udp.spacing_mean_ms": 34.6}])


def test_cells_run_with_a_fitted_stream_are_pending_not_compared() -> None:
    reference = load_reference()
    jitter = Key("iip", "e0", "baseline", "2tcp+1udp-0s-0s-0s-ds", "", "udp.Jitter_max")
    fitted = measure([("iip", [_udp_cell("cbr-iip-mixture")])])
    assert jitter not in fitted.values and not join(reference, fitted)[0]
    assert fitted.variants[UDP_FITTED][jitter] == 12.0          # section 6's jitter, fitted stream
    assert fitted.variants[JITTER_SPACING][jitter] == 34.6      # the receive spacing
    protocol = measure([("iip", [_udp_cell("cbr-32k")])])
    assert protocol.values[jitter] == 12.0 and UDP_FITTED not in protocol.variants


def test_the_mixture_scenario_sends_the_texts_32_kbits_of_payload() -> None:
    """PROTOCOL.md: 132 B payloads at 32 kbit/s (33.0 ms); 34.6 ms only in the sensitivity file."""
    from testbed.scenario.loader import load
    main = load(ROOT / "scenarios" / "iip-mixture.toml")
    streams = {f.stream.label: f.stream for c in main.cells for f in c.flows if f.kind == "udp"}
    assert list(streams) == ["cbr-32k"]
    s = streams["cbr-32k"]
    assert (s.size, s.rate_bps, s.rate_counts) == (132, 32000, "payload")
    variant = load(ROOT / "validation" / "sensitivity" / "iip-mixture-udp-34.6ms.toml")
    assert {f.stream.label for c in variant.cells for f in c.flows if f.kind == "udp"} == {"cbr-iip-mixture"}
    assert {c.cell_id for c in variant.cells} <= {c.cell_id for c in main.cells}


# --- stability ------------------------------------------------------------------------------

def test_verdict_stability_is_reproducible_from_its_seed() -> None:
    reference = load_reference()
    steady = [("iip", [http_cell("e0", "iw4-frto", [3.0] * 6), http_cell("e0", "baseline", [4.0] * 6)])]
    (iw4, *_) = stability(reference, steady, resamples=30)
    assert (iw4.verdict, iw4.same) == ("holds", 1.0)
    # a bimodal baseline: whether its median is below IW4's 5 s depends on the draw
    split = [("iip", [http_cell("e0", "iw4-frto", [5.0] * 6),
                      http_cell("e0", "baseline", [2.0, 2.0, 2.0, 9.0, 9.0, 9.0])])]
    first = stability(reference, split, resamples=30, seed=7)[0]
    assert first == stability(reference, split, resamples=30, seed=7)[0]
    assert 0.0 < first.same < 1.0


# --- provenance and distributions -----------------------------------------------------------

def test_every_counted_row_of_the_committed_data_has_its_revision() -> None:
    for study, chain, rows in (("iip-http", "8209e5812032", 480), ("iip-mixture", "262902400836", 200)):
        directory = DATA / study
        record = load_study_record(directory)
        cells = load_study(directory)
        revisions = row_revisions(directory, record, cells)
        assert revisions[chain] == rows
        assert sum(revisions.values()) == sum(r.counts for c in cells for r in c.replications)
        assert "unknown" not in revisions


def test_a_split_cell_is_bimodal_and_its_strip_shows_both_groups() -> None:
    times = [7.11, 7.17, 7.21, 7.26, 32.7, 37.0, 38.7, 41.9, 86.4, math.inf]
    assert bimodal(times) and not bimodal([7.0, 7.5, 8.0, 9.0, 12.0])
    line = strip(tuple(times), 11.1)
    assert line.startswith("[") and line.endswith("]>")     # the unfinished page beyond the axis
    assert line.index("O") < line.index("R") < line.rindex("o")


# --- the committed report -------------------------------------------------------------------

def test_the_committed_report_regenerates_from_the_committed_data(tmp_path: Path) -> None:
    """Everything but the line naming the date and revision of the rendering."""
    out = tmp_path / "report.md"
    subprocess.run([sys.executable, "-m", "validation.run", "--from-data", str(DATA), "--report", str(out)],
                   cwd=ROOT, check=True, capture_output=True)
    committed = (ROOT / "validation" / "report.md").read_text().splitlines()
    fresh = out.read_text().splitlines()
    assert committed[2].startswith("Generated by") and fresh[2].startswith("Generated by")
    assert fresh[:2] + fresh[3:] == committed[:2] + committed[3:]


@pytest.mark.parametrize("name", ["PROTOCOL.md"])
def test_the_protocol_names_every_fitted_variant_with_its_commit(name: str) -> None:
    from validation.protocol import VARIANTS
    text = (ROOT / "validation" / name).read_text()
    for v in VARIANTS:
        assert v.commit in text and v.name in text
