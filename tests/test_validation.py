"""validation/: reference keys, our values per cell, the join with ratios, and the
conclusions' verdicts, on small fixtures (no runs)."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

from analysis.aggregate.run_analysis import CellResult, cell_summaries
from analysis.results.layout import ReplicationRef
from analysis.aggregate.replication_values import FlowInfo, ReplicationResult
from validation.compare import join
from validation.conclusions import (cbi_overshoot, check_all, diffserv_protects_udp, iw4_small_pages,
                                    reference_lookup, verdict)
from validation.measures import Measurements, connection_totals, measure
from validation.reference import Key, RefRow, load_reference, read_reference_file
from validation.outcome import Outcome
from validation.report import ReportContext, render

HTTP_CSV = """# source: test
# table: 11
study,table,http,link,variant,source_label,workload,metric,value,unit,relative_to
iip,11,1.0,e0,baseline,BASELINE,s+2s,Time,5.0,s,
iip,11,1.0,e0,iw4-frto,IW4+FRTO,s+2s,Time,4.0,s,
iip,11,1.0,e0,baseline,BASELINE,s+2s,Med_thro,1000.0,B/s,
iip,11,1.0,e0,baseline,BASELINE,s+2s,Drops_c,0,packets,
iip,11,1.0,e0,baseline,BASELINE,s+2s,Drops_e,,packets,
"""
MIX_CSV = """# table: 34
study,table,workload,diffserv,link,variant,queue,source_label,flow_role,metric,value,unit,corrupt
iip,34,2tcp+1udp-0s-0s-0s,yes,r2,baseline,red,baseline+RED,udp,Jitter_max,30.5,ms,
iip,34,3tcp-0s-0s-5s,no,e0,baseline,fifo,Baseline,third,Elapsed_median,70.0,s,
iip,34,3tcp-0s-0s-5s,no,r0,baseline,fifo,Baseline,third,Elapsed_median,71.0,s,corrupt: copies r2
"""
SAARTO_CSV = """study,table,http,link,variant,source_label,workload,metric,value,unit,relative_to
saarto,arq-low-response-time-diff,1.0,arq-low,baseline,BL+TS,s+2s,response_time,10.0,s,
saarto,arq-low-response-time-diff,1.0,arq-low,iw4,IW4+TS,s+2s,response_time_diff,-20.0,%,baseline
"""


def write(tmp: Path, name: str, text: str) -> Path:
    path = tmp / name
    path.write_text(text)
    return path


def make_cell(cell_id: str, labels: dict[str, str], flows: list[FlowInfo],
              reps: list[dict[str, float | None] | None]) -> CellResult:
    """A cell whose replication i has values reps[i]; None = a failed replication."""
    results = [ReplicationResult(ReplicationRef(cell_id, i + 1, Path("."),
                                                "ok" if v is not None else "failed", ""),
                                 analysed=v is not None, values=dict(v or {}))
               for i, v in enumerate(reps)]
    return CellResult(cell_id, labels, flows, results, cell_summaries(results))


WEB10 = [FlowInfo("web", "http", "1.0", "s+2s")]


def http_cell(link: str, variant: str, times: list[float | None], http: str = "1.0",
              workload: str = "s+2s", extra: dict[str, list[float]] | None = None) -> CellResult:
    reps: list[dict[str, float | None] | None] = []
    for i, t in enumerate(times):
        if t is None:
            reps.append(None)
            continue
        values: dict[str, float | None] = {"web.response_time_s": t}
        for name, series in (extra or {}).items():
            values[name] = series[i]
        reps.append(values)
    return make_cell(f"link-{link}_tcp-{variant}_workload-{workload}_http-{http}",
                     {"link": link, "tcp": variant, "workload": workload, "http": http},
                     [FlowInfo("web", "http", http, workload)], reps)


# --- reference ------------------------------------------------------------------------------

def test_reference_keys_follow_the_scenarios_labels(tmp_path: Path) -> None:
    http = read_reference_file(write(tmp_path, "a.csv", HTTP_CSV))
    assert http[0] == RefRow(Key("iip", "e0", "baseline", "s+2s", "1.0", "Time"), 5.0, "s", "11",
                             "BASELINE", "")
    assert http[-1].value is None                     # printed as "-" / not given
    mix = read_reference_file(write(tmp_path, "b.csv", MIX_CSV))
    assert [r.key for r in mix] == [
        Key("iip", "r2", "baseline+red", "2tcp+1udp-0s-0s-0s-ds", "", "udp.Jitter_max"),
        Key("iip", "e0", "baseline", "3tcp-0s-0s-5s", "", "third.Elapsed_median"),
        Key("iip", "r0", "baseline", "3tcp-0s-0s-5s", "", "third.Elapsed_median")]
    assert [r.corrupt for r in mix] == ["", "", "corrupt: copies r2"]
    # a corrupt row is read, but load_reference leaves it out of every comparison
    only_mix = tmp_path / "mix"
    only_mix.mkdir()
    write(only_mix, "b.csv", MIX_CSV)
    assert [r.key.link for r in load_reference(only_mix)] == ["r2", "e0"]
    assert len(load_reference(only_mix, keep_corrupt=True)) == 3
    config = "study,table,subject,parameter,value,unit,source_label\nsaarto,x,link,mtu,576,bytes,MTU\n"
    assert read_reference_file(write(tmp_path, "c.csv", config)) == []


def test_reference_keeps_the_first_of_repeated_keys_and_refuses_an_empty_directory(tmp_path: Path) -> None:
    write(tmp_path, "a.csv", HTTP_CSV)
    write(tmp_path, "b.csv", HTTP_CSV.replace("Time,5.0", "Time,9.9"))
    rows = load_reference(tmp_path)
    assert len(rows) == 5
    assert next(r for r in rows if r.key.metric == "Time" and r.key.variant == "baseline").value == 5.0
    with pytest.raises(ValueError, match="no reference result tables"):
        load_reference(tmp_path / "nothing")


def test_the_shipped_reference_tables_load() -> None:
    rows = load_reference()
    keys = {r.key for r in rows}
    assert Key("iip", "e0", "baseline", "s+2s", "1.1", "Time") in keys
    assert Key("saarto", "arq-high", "dsack", "l+8m", "1.0", "response_time_diff") in keys
    assert Key("iip", "r4", "frto-cbi-iw4", "2tcp+1udp-0s-0s-0s-nods", "", "udp.Jitter_max") in keys


# --- our values -----------------------------------------------------------------------------

def test_http_cell_values_are_the_report_tables() -> None:
    cell = http_cell("e0", "baseline", [4.0, 6.0, 5.0, None], extra={
        "web.main.throughput_Bps": [1000, 3000, 2000, 0],
        # the response's throughput (section 6): bytes / (first data segment -> ACK of the FIN)
        "web.main.response_throughput_Bps": [2000, 5000, 3000, 0],
        # the connection's throughput: bytes / elapsed, 1500, 4000 and 2500 B/s
        "web.main.bytes": [6000, 8000, 5000, 0], "web.main.elapsed_s": [4.0, 2.0, 2.0, 0],
        "web.main.congestion_drops": [0, 1, 2, 0], "web.inline1.congestion_drops": [3, 3, 3, 0],
        "web.main.error_drops": [0, 0, 0, 0], "web.inline1.error_drops": [0, 1, 0, 0]})
    m = measure([("iip", [cell])])
    k = Key("iip", "e0", "baseline", "s+2s", "1.0", "")

    def v(metric: str) -> float | None:
        return m.values[Key(k.study, k.link, k.variant, k.workload, k.http, metric)]
    # Med_thro: the main object's response throughput (section 6); Min/Max_thro: the responses'
    assert (v("Time"), v("Med_thro"), v("Min_thro"), v("Max_thro")) == (5.0, 3000, 1000, 3000)
    # the connection's throughput (SYN -> ACK of the FIN) only as the labelled sensitivity variant
    from validation.protocol import CONNECTION_THROUGHPUT
    assert m.variants[CONNECTION_THROUGHPUT][Key("iip", "e0", "baseline", "s+2s", "1.0", "Med_thro")] == 2500
    assert v("Drops_c") == 3           # HTTP/1.0: the highest class median (inline1)
    assert v("Drops_e") == 0
    assert m.replications[k] == 3      # the failed replication is not counted
    assert m.series[k] == [None, None, None, None]  # no web.congestion_drops values


def test_a_timed_out_page_counts_as_longer_than_the_timeout() -> None:
    """A page still loading at the timeout is a result (analysis/metrics/censoring.py): it lifts the
    median instead of vanishing, and the report prints it as ∞."""
    from validation.conclusions import _fmt
    from validation.report import _num

    cell = http_cell("r0", "frto", [4.0, 6.0, math.inf])
    timed_out = cell.replications[2]
    cell.replications[2] = ReplicationResult(
        ReplicationRef(timed_out.ref.cell, 3, Path("."), "timeout", "flows web still running"),
        analysed=True, values=timed_out.values)
    cell.summaries = cell_summaries(cell.replications)
    m = measure([("iip", [cell])])
    k = Key("iip", "r0", "frto", "s+2s", "1.0", "Time")
    assert m.values[k] == 6.0 and m.replications[Key("iip", "r0", "frto", "s+2s", "1.0", "")] == 3
    assert (_num(math.inf), _fmt(math.inf, "s")) == ("∞", "∞")


def test_a_cell_without_a_counted_replication_is_left_out() -> None:
    m = measure([("iip", [http_cell("e0", "baseline", [None, None])])])
    assert m.values == {}


def test_http10_min_and_max_throughput_are_over_all_connections() -> None:
    """IIP 7.2: for HTTP/1.0 only the median is of main objects; the e0 s+2s Min_thro of 845
    B/s against a main-object median of 1809 B/s comes from in-line connections."""
    extra = {"web.main.throughput_Bps": [1800.0, 1810.0, 1820.0],
             "web.main.response_throughput_Bps": [1800.0, 1810.0, 1820.0],
             "web.main.bytes": [6288.0, 6288.0, 6288.0], "web.main.elapsed_s": [3.49, 3.474, 3.48],
             "web.inline_slowest.throughput_Bps": [850.0, 845.0, 900.0],
             "web.inline_fastest.throughput_Bps": [1000.0, 1825.0, 1100.0]}
    m = measure([("iip", [http_cell("e0", "baseline", [3.9, 3.9, 3.9], extra=extra),
                          http_cell("e0", "baseline", [5.5, 5.5, 5.5], http="1.1", extra=extra)])])
    def v(http: str, metric: str) -> float | None:
        return m.values[Key("iip", "e0", "baseline", "s+2s", http, metric)]
    assert v("1.0", "Med_thro") == 1810.0
    assert (v("1.0", "Min_thro"), v("1.0", "Max_thro")) == (845.0, 1825.0)
    # HTTP/1.1: the one persistent connection's throughput
    assert (v("1.1", "Min_thro"), v("1.1", "Max_thro")) == (1800.0, 1820.0)


def test_saarto_differences_are_relative_to_the_variant_of_their_table() -> None:
    from validation.measures import saarto_diff_base
    diffs = [r for r in load_reference() if r.key.metric == "response_time_diff"]
    assert diffs and all(r.relative_to == saarto_diff_base(r.key.link) for r in diffs)
    cells = [make_cell(f"link-arq-high_tcp-{v}_workload-s+2s",
                       {"link": "arq-high", "tcp": v, "flows.web.workload": "s+2s"}, WEB10,
                       [{"web.response_time_s": t}])
             for v, t in (("baseline", 9.0), ("baseline-nots", 10.0), ("iw4-nots", 8.0))]
    m = measure([("saarto", cells)])
    assert m.values[Key("saarto", "arq-high", "iw4-nots", "s+2s", "1.0", "response_time_diff")] == \
        pytest.approx(-20.0)


def test_saarto_response_time_difference_from_the_baseline() -> None:
    cells = [make_cell(f"link-arq-low_tcp-{v}_workload-s+2s",
                       {"link": "arq-low", "tcp": v, "flows.web.workload": "s+2s"}, WEB10,
                       [{"web.response_time_s": t}]) for v, t in (("baseline", 10.0), ("iw4", 8.0))]
    m = measure([("saarto", cells)])
    assert m.values[Key("saarto", "arq-low", "iw4", "s+2s", "1.0", "response_time")] == 8.0
    assert m.values[Key("saarto", "arq-low", "iw4", "s+2s", "1.0", "response_time_diff")] == \
        pytest.approx(-20.0)
    # a median beyond the timeout on either side gives no percentage, never -100 % or inf
    for base, page in ((math.inf, 8.0), (10.0, math.inf)):
        cells = [make_cell(f"link-arq-low_tcp-{v}_workload-s+2s",
                           {"link": "arq-low", "tcp": v, "flows.web.workload": "s+2s"}, WEB10,
                           [{"web.response_time_s": t}]) for v, t in (("baseline", base), ("iw4", page))]
        m = measure([("saarto", cells)])
        assert m.values[Key("saarto", "arq-low", "iw4", "s+2s", "1.0", "response_time_diff")] is None


def test_mixture_roles_third_flow_and_udp_jitter_range() -> None:
    bulk = [FlowInfo(n, "bulk") for n in ("tcp1", "tcp2", "tcp3")]
    late = make_cell("link-e0_workload-3tcp-0s-0s-5s_tcp-baseline",
                     {"link": "e0", "workload": "3tcp-0s-0s-5s", "tcp": "baseline"}, bulk,
                     # the analysis' roles: the two early transfers ranked, tcp3 by name
                     [{"tcp.fastest.elapsed_s": 10, "tcp.slowest.elapsed_s": 12,
                       "tcp3.elapsed_s": 8},
                      {"tcp.fastest.elapsed_s": 11, "tcp.slowest.elapsed_s": 14,
                       "tcp3.elapsed_s": 9}])
    udp = make_cell("link-e0_workload-2tcp+1udp-0s-0s-0s-ds_tcp-baseline",
                    {"link": "e0", "workload": "2tcp+1udp-0s-0s-0s-ds", "tcp": "baseline"},
                    [FlowInfo("tcp1", "bulk"), FlowInfo("tcp2", "bulk"), FlowInfo("udp", "udp")],
                    [{"tcp.fastest.elapsed_s": 90, "udp.jitter_mean_ms": 12.0, "udp.spacing_mean_ms": 31.0,
                      "udp.congestion_drops": 0},
                     {"tcp.fastest.elapsed_s": 100, "udp.jitter_mean_ms": 16.0, "udp.spacing_mean_ms": 35.0,
                      "udp.congestion_drops": 2}])
    m = measure([("iip", [late, udp])])

    def v(workload: str, metric: str) -> float | None:
        return m.values[Key("iip", "e0", "baseline", workload, "", metric)]
    assert v("3tcp-0s-0s-5s", "faster.Elapsed_median") == 10.5      # 10 and 11
    assert v("3tcp-0s-0s-5s", "slower.Elapsed_max") == 14
    assert v("3tcp-0s-0s-5s", "third.Elapsed_min") == 8
    assert v("2tcp+1udp-0s-0s-0s-ds", "fastest.Elapsed_avg") == 95
    # the tables' jitter by section 6's definition: the range of the mean change of spacing
    assert (v("2tcp+1udp-0s-0s-0s-ds", "udp.Jitter_min"), v("2tcp+1udp-0s-0s-0s-ds", "udp.Jitter_max")) == (12, 16)
    # the mean receive spacing only as the labelled sensitivity variant
    from validation.protocol import JITTER_SPACING
    spacing = m.variants[JITTER_SPACING]
    assert (spacing[Key("iip", "e0", "baseline", "2tcp+1udp-0s-0s-0s-ds", "", "udp.Jitter_min")],
            spacing[Key("iip", "e0", "baseline", "2tcp+1udp-0s-0s-0s-ds", "", "udp.Jitter_max")]) == (31, 35)
    assert v("2tcp+1udp-0s-0s-0s-ds", "udp.Drops_c") == 1


def test_connection_totals_sum_tcp_rows_per_replication() -> None:
    rows = [{"cell": "c", "replication": "1", "kind": "tcp", "spurious_rtos": "1", "rto_events": "2"},
            {"cell": "c", "replication": "1", "kind": "tcp", "spurious_rtos": "2", "rto_events": ""},
            {"cell": "c", "replication": "1", "kind": "udp", "spurious_rtos": "", "rto_events": ""},
            {"cell": "c", "replication": "2", "kind": "tcp", "spurious_rtos": "0", "rto_events": "0"}]
    assert connection_totals(rows) == {
        ("c", 1): {"conn.spurious_rtos": 3.0, "conn.rto_events": 2.0},
        ("c", 2): {"conn.spurious_rtos": 0.0, "conn.rto_events": 0.0}}


# --- the join -------------------------------------------------------------------------------

def test_join_ratio_percentage_difference_and_coverage(tmp_path: Path) -> None:
    write(tmp_path, "a.csv", HTTP_CSV)
    write(tmp_path, "s.csv", SAARTO_CSV)
    reference = load_reference(tmp_path)
    ours = Measurements(values={
        Key("iip", "e0", "baseline", "s+2s", "1.0", "Time"): 6.0,
        Key("iip", "e0", "baseline", "s+2s", "1.0", "Drops_c"): 2.0,
        Key("iip", "e0", "baseline", "s+2s", "1.0", "Drops_e"): 1.0,     # reference has no value
        Key("saarto", "arq-low", "iw4", "s+2s", "1.0", "response_time_diff"): -25.0,
        Key("iip", "r4", "baseline", "s+2s", "1.0", "Time"): 9.0})       # no reference row
    rows, coverage = join(reference, ours)
    by_metric = {(r.key.study, r.key.metric): r for r in rows}
    assert by_metric[("iip", "Time")].ratio == pytest.approx(1.2)
    assert by_metric[("iip", "Drops_c")].ratio is None                    # reference 0
    diff = by_metric[("saarto", "response_time_diff")]
    assert (diff.ratio, diff.difference) == (None, pytest.approx(-5.0))
    assert (coverage.compared, coverage.reference_rows, coverage.not_run) == (3, 6, 3)
    assert [r.key.study for r in rows] == ["iip", "iip", "saarto"]


# --- conclusions ----------------------------------------------------------------------------

def test_verdict_thresholds_at_their_edges() -> None:
    """validation/PROTOCOL.md: holds ≥ 90 %, mostly ≥ 75 %, mixed 25-75 %, fails < 25 %."""
    def cases(k: int, n: int) -> list[bool | None]:
        return [True] * k + [False] * (n - k) + [None]      # an untested case counts for nothing
    assert verdict(cases(9, 10)) == "holds (9 of 10)"
    assert verdict(cases(89, 100)) == "mostly holds (89 of 100)"
    assert verdict(cases(3, 4)) == "mostly holds (3 of 4)"
    assert verdict(cases(74, 100)) == "mixed (74 of 100)"
    assert verdict(cases(1, 4)) == "mixed (1 of 4)"
    assert verdict(cases(24, 100)) == "fails (24 of 100)"
    assert verdict(cases(0, 3)) == "fails (0 of 3)"
    assert verdict([None]) == "not measured"


def test_iw4_conclusion_on_both_sides(tmp_path: Path) -> None:
    write(tmp_path, "a.csv", HTTP_CSV)
    write(tmp_path, "s.csv", SAARTO_CSV)
    ref = reference_lookup(load_reference(tmp_path))
    # the slides print IW4 as -20 % of the baseline's 10 s
    assert ref(Key("saarto", "arq-low", "iw4", "s+2s", "1.0", "response_time")) == pytest.approx(8.0)
    ours = measure([("iip", [http_cell("e0", "baseline", [5.0]), http_cell("e0", "iw4-frto", [5.5])])])
    v = iw4_small_pages(ref, ours.values.get)
    assert (v.reference, v.ours) == ("holds (2 of 2)", "fails (0 of 1)")
    e0 = next(c for c in v.cases if c.what.startswith("IIP e0 HTTP 1.0"))
    assert (e0.reference, e0.ours) == ("iw4-frto 4 s vs baseline 5 s", "iw4-frto 5.5 s vs baseline 5 s")


def test_diffserv_conclusion_needs_no_more_drops_nor_jitter() -> None:
    def k(ds: str, metric: str, link: str = "e0") -> Key:
        return Key("iip", link, "baseline", f"2tcp+1udp-0s-0s-0s-{ds}", "", f"udp.{metric}")
    values = {k("ds", "Drops_c"): 0, k("ds", "Jitter_max"): 30, k("nods", "Drops_c"): 4,
              k("nods", "Jitter_max"): 80,
              k("ds", "Drops_c", "r2"): 0, k("ds", "Jitter_max", "r2"): 90,
              k("nods", "Drops_c", "r2"): 1, k("nods", "Jitter_max", "r2"): 80}
    v = diffserv_protects_udp(lambda key: None, values.get)
    assert v.ours == "mixed (1 of 2)"
    assert [c.ours_holds for c in v.cases] == [True, False]      # r2: jitter higher with DS
    assert v.by_link() == [("e0", "not measured", "holds (1 of 1)"), ("r2", "not measured", "fails (0 of 1)")]


def test_arq_and_cbi_conclusions_from_our_runs() -> None:
    r0 = http_cell("r0", "baseline", [9.0, 9.0], extra={
        "web.error_drops": [5, 7], "conn.spurious_rtos": [3, 4], "conn.rto_too_early": [0, 0]})
    r4 = http_cell("r4", "baseline", [7.0, 7.0], extra={
        "web.error_drops": [0, 0], "conn.spurious_rtos": [1, 2], "conn.rto_too_early": [1, 2]})
    cbi = http_cell("e0", "cbi-frto", [20.0, 19.0, 19.0], workload="l+8m", extra={
        "web.main.congestion_drops": [6, 1, 0]})
    base = http_cell("e0", "baseline", [21.0, 21.0, 21.0], workload="l+8m", extra={
        "web.main.congestion_drops": [5, 5, 4]})
    for c in (r0, r4):     # HTTP/1.0 drops are per class: one class here
        for r in c.replications:
            r.values["web.main.error_drops"] = r.values["web.error_drops"]
        c.summaries = cell_summaries(c.replications)
    ours = measure([("iip", [r0, r4, cbi, base])])
    verdicts = {v.title: v for v in check_all([], ours)}
    arq = verdicts["High ARQ persistency removes error drops but causes spurious RTOs"]
    assert arq.ours == "holds (1 of 1)"
    assert "(not tested) spurious RTOs per run r0 0 → r4 1.5" in arq.cases[0].ours
    cbi_v = verdicts["CBI avoids slow-start overshoot after the first replication"]
    # the tables' test on both sides: median drops over all replications, CBI 1 against 5;
    # replication 1 against the later ones is no case (the studies cannot have it)
    assert cbi_v.ours == "holds (1 of 1)"
    assert [c.ours for c in cbi_v.cases] == ["cbi-frto 1 vs baseline 5"]


def test_report_names_the_reduction_and_the_verdicts() -> None:
    ours = measure([("iip", [http_cell("e0", "baseline", [5.0]), http_cell("e0", "iw4-frto", [4.0])])])
    reference = load_reference()
    rows, coverage = join(reference, ours)
    text = render(ReportContext("T", ["Reduced: one cell."], [], 61.0, "env"),
                  Outcome(check_all(reference, ours), rows, coverage, []))
    assert "Reduced: one cell." in text and "1.0 min (61 s)" in text
    assert "| IW4 shortens s+2s response times | mostly holds (16 of 18) | holds (1 of 1) |" in text
    assert "| 11 | e0 | baseline | s+2s | 1.0 | Time | s | 3.9 | 5 | 1.28 |" in text


# --- the reduced plan -----------------------------------------------------------------------

def test_reduced_plan_selects_cells_of_each_study_and_no_red_queue() -> None:
    import fnmatch
    from testbed.scenario import loader as scenario_mod
    from validation.run import FULL, REDUCED, SCENARIOS

    selected: dict[str, int] = {}
    for run in REDUCED:
        sc = scenario_mod.load(SCENARIOS / run.scenario)
        cells = [c for c in sc.cells if fnmatch.fnmatchcase(c.cell_id, run.cells or "*")]
        assert cells, f"{run.cells!r} selects no cell of {run.scenario}"
        assert all(q.queue.discipline != "red" for c in cells for q in c.router.classes)
        selected[run.scenario] = selected.get(run.scenario, 0) + len(cells)
    # saarto: 3 lossy links x BL+TS, BL-TS, IW4+TS, IW4-TS on s+2s, and 2 l+8m cells
    assert selected == {"iip-http.toml": 12 + 2 + 2, "saarto-http10.toml": 12 + 2, "iip-mixture.toml": 4}
    # a glob like tcp-[bf]* would also take baseline+red
    assert {r.scenario for r in FULL} == set(selected) and all(r.cells is None for r in FULL)


def test_arq_conclusion_is_the_same_test_on_both_sides() -> None:
    """The tables count no spurious RTOs, so squall's are shown but not tested: the same drops
    give the same verdict on both sides, whatever squall's RTOs."""
    cells = []
    for link, drops, early in (("r0", [5, 7], [1, 1]), ("r4", [0, 0], [0, 0])):
        cells.append(http_cell(link, "baseline", [9.0, 9.0], extra={
            "web.main.error_drops": drops, "conn.rto_too_early": early}))
    low, high = (Key("iip", link, "baseline", "s+2s", "1.0", "Drops_e") for link in ("r0", "r4"))
    table = {low: 6.0, high: 0.0}
    verdicts = {v.title: v for v in check_all([], measure([("iip", cells)]))}
    arq = verdicts["High ARQ persistency removes error drops but causes spurious RTOs"]
    assert arq.ours == "holds (1 of 1)"        # fewer too-early RTOs at r4, still no second test
    from validation.conclusions import arq_persistency
    both = arq_persistency(table.get, table.get)
    assert both.reference == both.ours == "holds (1 of 1)"


def test_diffserv_jitter_within_ten_percent_counts_as_equal() -> None:
    def k(ds: str, metric: str) -> Key:
        return Key("iip", "e0", "baseline", f"2tcp+1udp-0s-0s-0s-{ds}", "", f"udp.{metric}")
    values = {k("ds", "Drops_c"): 0, k("ds", "Jitter_max"): 15.6, k("nods", "Drops_c"): 164,
              k("nods", "Jitter_max"): 15.5}
    assert diffserv_protects_udp(lambda key: None, values.get).ours == "holds (1 of 1)"
    values[k("ds", "Drops_c")] = 164
    assert diffserv_protects_udp(lambda key: None, values.get).ours == "fails (0 of 1)"


def test_arq_case_without_error_drops_at_low_persistency_is_no_case() -> None:
    cells = [http_cell(link, "baseline", [9.0], extra={"web.main.error_drops": [0],
                                                       "conn.spurious_rtos": [s]})
             for link, s in (("r0", 1), ("r4", 1))]
    verdicts = {v.title: v for v in check_all([], measure([("iip", cells)]))}
    assert verdicts["High ARQ persistency removes error drops but causes spurious RTOs"].ours == \
        "not measured"


def test_agreement_per_family_counts_coverage_and_distance() -> None:
    from validation.compare import agreement

    def ref(metric: str, value: float, link: str = "e0") -> RefRow:
        return RefRow(Key("iip", link, "baseline", "s+2s", "1.0", metric), value, "s", "11", "")

    reference = [ref("Time", 10.0), ref("Time", 10.0, "r2"), ref("Time", 4.0, "r4"),
                 ref("Drops_c", 0.0), ref("Drops_c", 3.0, "r2"), ref("Jitter_max", 5.0)]
    ours = Measurements(values={reference[0].key: 11.0, reference[1].key: 20.0,
                                reference[3].key: 0.0, reference[4].key: 1.0})
    rows, coverage = join(reference, ours)
    assert (coverage.compared, coverage.reference_rows) == (4, 6)
    families = {a.family: a for a in agreement(reference, rows)}
    times = families["response and elapsed times"]
    assert (times.reference_values, times.compared) == (3, 2)
    assert times.median_abs_ln == pytest.approx((math.log(1.1) + math.log(2.0)) / 2)
    assert (times.within_20, times.within_50, times.met) == (0.5, 0.5, False)
    drops = families["congestion drops"]     # (0+1)/(0+1) = 1 and (1+1)/(3+1) = 0.5
    assert drops.median_abs_ln == pytest.approx(math.log(2) / 2)
    assert (drops.within_20, drops.within_50, drops.met) == (0.5, 1.0, True)
    jitter = families["jitter"]
    assert (jitter.compared, jitter.median_abs_ln, jitter.met) == (0, None, None)
    assert "throughputs" not in families      # no reference value of the family



def test_the_medians_and_means_of_a_family_are_also_judged_alone() -> None:
    """A maximum over 2 replications is not one over the reference's 20: the times' medians and
    means get their own row, beside the family's."""
    from validation.compare import agreement

    def ref(metric: str, value: float) -> RefRow:
        return RefRow(Key("iip", "e0", "baseline", "3tcp-0s-0s-0s", "", metric), value, "s", "32", "")

    reference = [ref("slowest.Elapsed_median", 100.0), ref("slowest.Elapsed_max", 200.0),
                 ref("slowest.Elapsed_min", 50.0)]
    ours = Measurements(values={reference[0].key: 100.0, reference[1].key: 100.0, reference[2].key: 100.0})
    families = {a.family: a for a in agreement(reference, join(reference, ours)[0])}
    assert families["response and elapsed times"].median_abs_ln == pytest.approx(math.log(2))
    central = families["response and elapsed times: medians and means only"]
    assert (central.reference_values, central.compared, central.median_abs_ln, central.target) == (1, 1, 0.0, None)


def test_cbi_pairs_are_the_tables_medians_on_both_sides() -> None:
    """The tables give medians over all replications: squall's CBI cell is counted the same way
    (its first replication included), and the same test decides both sides."""
    def cells(cbi_drops: list[float], base_drops: list[float]) -> Measurements:
        return measure([("iip", [
            http_cell("e0", "cbi-frto", [20.0] * len(cbi_drops), workload="l+8m",
                      extra={"web.main.congestion_drops": cbi_drops}),
            http_cell("e0", "baseline", [20.0] * len(base_drops), workload="l+8m",
                      extra={"web.main.congestion_drops": base_drops})])])
    reference = {Key("iip", "e0", "cbi-frto", "l+8m", "1.0", "Drops_c"): 0.0,
                 Key("iip", "e0", "baseline", "l+8m", "1.0", "Drops_c"): 10.0}.get

    def pair(ours: Measurements):
        v = cbi_overshoot(reference, ours.values.get)
        return next(c for c in v.cases if c.what.endswith("Drops_c cbi-frto vs baseline"))

    alone = pair(cells([6], [6]))
    assert (alone.reference_holds, alone.ours_holds) == (True, False)
    assert alone.ours == "cbi-frto 6 vs baseline 6"
    later = pair(cells([6, 1, 0], [6, 6, 6]))
    assert later.ours_holds is True and later.ours == "cbi-frto 1 vs baseline 6"
    none = pair(cells([0, 0, 0], [0, 0, 0]))       # no overshoot without CBI: no case on either side
    assert none.ours_holds is None
